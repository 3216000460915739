"""Why an agent run failed, as a ``run.failed`` payload that leaks nothing.

Exception texts stay out of the log: a provider's error body, a tool's exception message or a
hook's may carry anything (prompts, keys, personal data). What is recorded is the error code, the
exception *type*, an HTTP status when there is one, and where it happened.

* a tool body raised and its error policy fails the run: ``tool_error``, ``where`` = the tool;
* the run took more than ``AGENTDECK_RUNNER_MAX_TURNS`` model turns: ``budget_exceeded``;
* the model endpoint refused or could not be reached: ``engine_error``, ``retryable`` for rate
  limits, timeouts, connection failures and 5xx answers;
* a hook raised: ``engine_error``, ``where`` = the hook;
* a guardrail's tripwire fired: ``engine_error``, ``where`` = the guardrail (the play records a
  ``report`` naming it first, see :mod:`agentdeck_openai.native`);
* anything else: ``engine_error`` with the exception type.
"""

from __future__ import annotations

from typing import TypeVar

import openai
from agents.exceptions import MaxTurnsExceeded, ModelBehaviorError

from agentdeck.model.payloads import RunFailed
from agentdeck.vocabulary import ErrorCode
from agentdeck_openai.hooks import HookFailed
from agentdeck_openai.native import tripwire_name
from agentdeck_openai.scope import ToolFailure

__all__ = ["failure_of", "tool_failure"]

_E = TypeVar("_E", bound=BaseException)


def tool_failure(failure: ToolFailure) -> RunFailed:
    return RunFailed(
        error_code=ErrorCode.TOOL_ERROR,
        message=f"tool '{failure.tool}' raised {failure.error_type}",
        where=failure.tool,
    )


def failure_of(exc: BaseException, *, agent: str, max_turns: int) -> RunFailed:
    """The ``run.failed`` for an exception out of the SDK run of ``agent``."""
    hook = _find(exc, HookFailed)
    if hook is not None:
        return RunFailed(
            error_code=ErrorCode.ENGINE_ERROR,
            message=f"hook {hook.label} raised {hook.error_type}",
            where=hook.label,
        )
    if isinstance(exc, MaxTurnsExceeded):
        return RunFailed(
            error_code=ErrorCode.BUDGET_EXCEEDED,
            message=f"agent '{agent}' used its {max_turns} model turns without finishing "
            "(AGENTDECK_RUNNER_MAX_TURNS)",
        )
    status = _find(exc, openai.APIStatusError)
    if status is not None:
        code = status.status_code
        what = "rate-limited the call" if code == 429 else f"answered HTTP {code}"
        return RunFailed(
            error_code=ErrorCode.ENGINE_ERROR,
            message=f"the model endpoint {what} ({type(status).__name__})",
            retryable=code in (408, 409, 429) or code >= 500,
        )
    unreachable = _find(exc, openai.APIConnectionError)
    if unreachable is not None:
        return RunFailed(
            error_code=ErrorCode.ENGINE_ERROR,
            message=f"the model endpoint could not be reached ({type(unreachable).__name__})",
            retryable=True,
        )
    if isinstance(exc, ModelBehaviorError):
        return RunFailed(
            error_code=ErrorCode.ENGINE_ERROR,
            message="the model's answer could not be used (ModelBehaviorError)",
            retryable=True,
        )
    guardrail = tripwire_name(exc)
    if guardrail is not None:
        return RunFailed(
            error_code=ErrorCode.ENGINE_ERROR,
            message=f"guardrail '{guardrail}' stopped agent '{agent}' ({type(exc).__name__})",
            where=guardrail,
        )
    return RunFailed(
        error_code=ErrorCode.ENGINE_ERROR,
        message=f"the run of agent '{agent}' raised {type(exc).__name__}",
    )


def _find(exc: BaseException, kind: type[_E]) -> _E | None:
    """``exc`` or the first exception it was raised from (``__cause__``/``__context__``) that is
    a ``kind``."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
