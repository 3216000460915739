"""AgentDeck tools as Agents SDK function tools.

Every function tool an agent offers goes through one wrapper, which is where the engine keeps its
word about tools:

* the tool-dispatch safe point is reached before the body runs (a pause or cancel stops the run
  there, with the tool never called);
* the model's argument text is parsed here, so malformed JSON reaches the model as an error it
  can correct instead of an exception, and arguments that do not fit the parameters likewise;
* the run's :class:`~agentdeck.authoring.context.ToolCtx` is built for the call and injected where
  the tool declares it (never in the schema the model sees); a run with none (``Agent.run()``)
  gives the model the refusal's message as the tool's output instead of calling the body;
* a body that raises is handled as the Agents SDK handles it: the model receives an error
  message as the tool's output (the tool's own ``failure_error_function``, else the SDK's
  default message, which leaves the exception's text out) and the run goes on, with
  ``tool.call.completed.error`` recording the exception's type and message
  (:func:`~agentdeck_openai.tool_results.error_text`). ``failure_error_function=None`` on the
  tool, or ``Agent(tool_errors="fail")`` for a tool that sets none, fails the run instead
  (``run.failed(tool_error)`` naming the tool and the exception's type only);
* the result is rendered by :mod:`agentdeck_openai.tool_results` (no ``repr()`` ever reaches the
  model).

Engine-native ``FunctionTool`` objects keep their own invoker and their own error handling (an
SDK ``@function_tool``'s ``failure_error_function``); they get the safe point, the application's
context as ``ctx.context`` (:func:`~agentdeck_openai.native.app_view`), their errors recorded,
and ``Agent(tool_errors="fail")`` when they use the SDK's default handling.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable
from functools import partial
from types import TracebackType
from typing import Any, TypeVar, get_type_hints

from agents.exceptions import UserError
from agents.strict_schema import ensure_strict_json_schema
from agents.tool import (
    FunctionTool,
    default_tool_error_function,
    resolve_function_tool_failure_error_function,
    set_function_tool_failure_error_function,
)
from agents.tool_context import ToolContext

from agentdeck.authoring.agents import ToolErrors
from agentdeck.authoring.context import ToolCtx
from agentdeck.authoring.context_check import missing_context_error
from agentdeck.authoring.tools import DEFAULT_ERRORS, Tool
from agentdeck.errors import InvalidInputError
from agentdeck_openai.native import app_view, tool_guardrails
from agentdeck_openai.scope import scope_of
from agentdeck_openai.tool_results import error_text, parse_arguments, render_result

__all__ = [
    "approval_callable",
    "function_tool",
    "hinted",
    "is_strict_compatible",
    "wrap_native",
]

Invoker = Callable[[ToolContext[Any], str], Awaitable[Any]]
_F = TypeVar("_F", bound=Callable[..., Any])


def hinted(invoker: _F) -> _F:
    """``invoker`` with its annotations evaluated once, here.

    Before every call the SDK reads a tool invoker's type hints (to pick which context object
    to pass it); annotations left as strings (``from __future__ import annotations``) would be
    compiled and evaluated again on each call, ~25 µs a tool call.
    """
    invoker.__annotations__ = get_type_hints(invoker)
    return invoker


def function_tool(
    tool: Tool,
    *,
    needs_approval: bool | Callable[..., Any],
    tool_errors: ToolErrors = "model",
) -> FunctionTool:
    """A ``FunctionTool`` serving ``tool`` through the wrapper described in the module doc.

    ``needs_approval`` is ``True``/``False`` or the tool's per-call :data:`ApprovalPolicy`
    (called with the call's ``ToolCtx``, see :func:`approval_callable`).
    """
    schema = dict(tool.params_json_schema)
    return FunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=schema,
        on_invoke_tool=_invoker(tool, tool_errors),
        strict_json_schema=is_strict_compatible(schema),
        needs_approval=(
            needs_approval
            if isinstance(needs_approval, bool)
            else approval_callable(tool.name, needs_approval)
        ),
    )


def approval_callable(name: str, policy: Callable[..., Any]) -> Callable[..., Any]:
    """An AgentDeck tool's per-call approval function, as the SDK calls one:
    ``(context, params, call_id)``, answered by ``policy(ctx, params, call_id)`` with the call's
    :class:`ToolCtx` (its ``data`` the run's context; ``None`` in a headless run)."""

    async def needs_approval(context: Any, params: dict[str, Any], call_id: str) -> bool:
        scope = scope_of(context)
        ctx = (
            scope.tool_ctx.for_tool_call(tool_call_id=call_id, tool_name=name)
            if scope is not None
            else ToolCtx(None, tool_call_id=call_id, tool_name=name)
        )
        verdict = policy(ctx, params, call_id)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return bool(verdict)

    needs_approval.__qualname__ = getattr(policy, "__qualname__", name)
    return needs_approval


def is_strict_compatible(schema: dict[str, Any]) -> bool:
    """Whether the schema already fits the model API's strict mode (every property required,
    objects closed): strict mode would otherwise silently make optional parameters required."""
    properties = schema.get("properties") or {}
    if set(schema.get("required") or ()) != set(properties):
        return False
    try:
        ensure_strict_json_schema(dict(schema))
    except (UserError, ValueError, TypeError):
        return False
    return True


def _invoker(tool: Tool, tool_errors: ToolErrors) -> Invoker:
    body = _body_code(tool.fn)
    handler = tool.failure_error_function
    if handler is DEFAULT_ERRORS:
        handler = _sdk_default if tool_errors == "model" else None
    requirement = tool.context_requirement
    needs_context = requirement is not None and requirement.parameter is not None

    async def invoke(context: ToolContext[Any], arguments: str) -> Any:
        scope = scope_of(context)
        call_id = getattr(context, "tool_call_id", None)
        if scope is not None:
            await scope.before_dispatch()
        elif needs_context:
            # A headless run carries no context: the call fails, and the model is told why.
            assert requirement is not None
            return missing_context_error(f"tool '{tool.name}'", requirement, None).message
        parsed = parse_arguments(arguments)
        if parsed.error is not None:
            message = (
                f"Error: {parsed.error}. Call the tool '{tool.name}' again with a JSON object "
                "matching its parameters."
            )
            if scope is not None:
                scope.note(call_id, message, parsed.error)
            return message
        ctx = (
            scope.tool_ctx.for_tool_call(tool_call_id=call_id, tool_name=tool.name)
            if scope
            else None
        )
        try:
            value = await tool.invoke(parsed.value, ctx)
        except InvalidInputError as invalid:
            if _raised_in(invalid.__traceback__, body):
                return await _failed(context, call_id, tool.name, invalid, handler, ctx)
            message = f"Error: {invalid.message}. Call the tool again with arguments that fit."
            if scope is not None:
                scope.note(call_id, message, "the arguments do not fit the tool's parameters")
            return message
        except Exception as exc:
            return await _failed(context, call_id, tool.name, exc, handler, ctx)
        rendered = render_result(tool.name, value)
        if scope is not None:
            scope.note(call_id, rendered.text, rendered.error)
            scope.collect_artifacts(call_id, rendered.artifacts)
        return rendered.output

    return hinted(invoke)


def _sdk_default(context: Any, error: Exception) -> str:
    """The SDK's own default tool error message (it leaves the exception's text out)."""
    return default_tool_error_function(context, error)


async def _failed(
    context: ToolContext[Any],
    call_id: str | None,
    name: str,
    error: Exception,
    handler: Callable[..., Any] | None,
    ctx: ToolCtx[Any] | None,
) -> str:
    """The body of tool ``name`` raised ``error``: the message the model receives, or (no
    ``handler``: the run fails) ``error`` raised again once recorded."""
    if handler is None:
        _record_failure(context, call_id, name, error)
        raise error
    try:
        if handler is _sdk_default:
            message: Any = _sdk_default(context, error)
        else:
            message = handler(ctx if ctx is not None else ToolCtx(None, tool_name=name), error)
        if inspect.isawaitable(message):
            message = await message
    except Exception as broken:  # the error function itself failed: so does the run
        _record_failure(context, call_id, name, broken)
        raise
    text = message if isinstance(message, str) else str(message)
    scope = scope_of(context)
    if scope is not None:
        scope.note(call_id, text, error_text(error))
    return text


def wrap_native(
    tool: FunctionTool,
    *,
    needs_approval: bool,
    tool_errors: ToolErrors = "model",
    app_context: bool = True,
) -> FunctionTool:
    """A copy of an engine-native function tool that stops at the tool-dispatch safe point,
    waits for approval when the agent says so, and has its errors recorded; its own invoker
    still does the rest.

    ``app_context``: the tool is the application's own, so it reads the application's context as
    ``ctx.context`` (see :func:`~agentdeck_openai.native.app_view`); ``False`` for a tool the
    engine builds around its own agents (an inline subagent's ``as_tool``), whose nested run
    needs the engine's run scope.
    """
    approval: Any = True if needs_approval else tool.needs_approval
    if callable(approval) and app_context:
        approval = _viewing(approval)
    # A copy: the SDK binds its own error-handling invoker to the copy, so the error function
    # set below is the one it uses.
    copied = dataclasses.replace(tool, needs_approval=approval, **tool_guardrails(tool))
    handler = resolve_function_tool_failure_error_function(copied)
    if handler is not None:
        if tool_errors == "fail" and handler is default_tool_error_function:
            set_function_tool_failure_error_function(copied, None)
        else:
            set_function_tool_failure_error_function(copied, _recording(handler))
    inner = copied.on_invoke_tool

    async def invoke(context: ToolContext[Any], arguments: str) -> Any:
        scope = scope_of(context)
        if scope is not None:
            await scope.before_dispatch()
        try:
            return await inner(app_view(context) if app_context else context, arguments)
        except Exception as exc:
            _record_failure(context, getattr(context, "tool_call_id", None), tool.name, exc)
            raise

    copied.on_invoke_tool = hinted(invoke)
    return copied


def _viewing(policy: Callable[..., Any]) -> Callable[..., Any]:
    """A native tool's approval function, given the application's context."""

    async def needs_approval(context: Any, params: dict[str, Any], call_id: str) -> bool:
        verdict = policy(app_view(context), params, call_id)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return bool(verdict)

    return needs_approval


def _recording(handler: Callable[..., Any]) -> Callable[..., Any]:
    """A native tool's error function that also records the error it handles."""

    async def failure_error_function(context: Any, error: Exception) -> str:
        message = handler(context, error)
        if inspect.isawaitable(message):
            message = await message
        text = message if isinstance(message, str) else str(message)
        scope = scope_of(context)
        if scope is not None:
            scope.note(getattr(context, "tool_call_id", None), text, error_text(error))
        return text

    return failure_error_function


def _record_failure(context: object, call_id: str | None, name: str, exc: BaseException) -> None:
    scope = scope_of(context)
    if scope is not None:
        scope.record_failure(call_id, name, exc)


def _body_code(fn: Callable[..., Any]) -> object | None:
    target: Any = fn
    while isinstance(target, partial):
        target = target.func
    target = inspect.unwrap(target)
    return getattr(getattr(target, "__func__", target), "__code__", None)


def _raised_in(traceback: TracebackType | None, code: object | None) -> bool:
    """Whether the traceback passes through the tool's own body: an ``InvalidInputError`` from
    there is the tool failing, one raised before it is the model's arguments not fitting."""
    if code is None:
        return False
    while traceback is not None:
        if traceback.tb_frame.f_code is code:
            return True
        traceback = traceback.tb_next
    return False
