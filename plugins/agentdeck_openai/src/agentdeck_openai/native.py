"""Agents SDK objects an ``Agent`` declares as they are: checked when the deck builds, and run
with the application's context.

The core declares agents without importing the SDK, so an ``Agent`` carries the SDK's own objects
opaquely: ``input_guardrails`` / ``output_guardrails``, ``tool_use_behavior``, ``run_hooks``, an
SDK ``AgentHooks`` in ``hooks=``, SDK tools in ``tools=``. This module is where the engine reads
them. Each is checked when the agent compiles, and a value the SDK would not take is a
:class:`~agentdeck.errors.ConfigError` naming the agent and the field, at the deck's build rather
than at the first run that reaches it.

**Context.** During a deck run the SDK's run context is the engine's
:class:`~agentdeck_openai.scope.RunScope`, not the application's object. A callable written for
the SDK reads the application's object as ``context.context`` (what ``Runner.run(context=...)``
would have put there), so every SDK callable declared here is called with :func:`app_view` of the
context it is given: the same wrapper (usage, approvals and tool-call fields shared), except that
``context`` is the run's application context. A function written against ``Runner.run`` therefore
reads the same object through a deck.

**Tripwires.** A guardrail whose tripwire fires stops the run as the SDK does (it raises); the
play records :func:`tripwire_report` (a ``report`` naming the guardrail) before the ``run.failed``.
A tool guardrail that rejects a call's input or output (the model receives the guardrail's
message instead, and the run goes on) is recorded the same way, just before the call's
``tool.call.completed``.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agents import (
    AgentHooks,
    InputGuardrail,
    OutputGuardrail,
    RunHooks,
    ToolInputGuardrail,
    ToolOutputGuardrail,
)
from agents.exceptions import (
    InputGuardrailTripwireTriggered,
    OutputGuardrailTripwireTriggered,
    ToolInputGuardrailTripwireTriggered,
    ToolOutputGuardrailTripwireTriggered,
)
from agents.lifecycle import AgentHooksBase, RunHooksBase
from agents.run_context import RunContextWrapper

from agentdeck.authoring.agents import Agent
from agentdeck.errors import ConfigError
from agentdeck.model.payloads import Report
from agentdeck.vocabulary import ReportLevel
from agentdeck_openai.scope import SCOPE_ATTRIBUTE, RunScope, scope_of
from agentdeck_openai.tool_results import json_text

__all__ = [
    "app_view",
    "guardrails",
    "run_hooks",
    "sdk_agent_hooks",
    "tool_guardrails",
    "tool_use_behavior",
    "tripwire_name",
    "tripwire_report",
]


def app_view(context: Any) -> Any:
    """``context`` as an SDK callable written for ``Runner.run`` expects it: its ``context`` is
    the application's object rather than the engine's run scope (a shallow copy, so usage,
    approvals and tool-call fields are the run's own). Anything else is returned unchanged."""
    if not isinstance(context, RunContextWrapper):
        return context
    scope = context.context
    if not isinstance(scope, RunScope):
        return context
    view = copy.copy(context)
    view.context = scope.invocation.context
    setattr(view, SCOPE_ATTRIBUTE, scope)  # for the engine's own wrappers the view reaches
    return view


def _applying(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` called with :func:`app_view` of its first argument (an SDK run context)."""

    def call(context: Any, *args: Any) -> Any:
        return fn(app_view(context), *args)

    call.__name__ = getattr(fn, "__name__", type(fn).__name__)
    call.__qualname__ = getattr(fn, "__qualname__", call.__name__)
    return call


# --------------------------------------------------------------------------- guardrails


def guardrails(agent: Agent, setting: str) -> list[Any]:
    """The agent's ``input_guardrails`` or ``output_guardrails`` for its SDK agent: each checked
    to be the SDK's own (``@input_guardrail`` / ``@output_guardrail``) and given the application's
    context."""
    kind: type[Any] = InputGuardrail if setting == "input_guardrails" else OutputGuardrail
    made = "@input_guardrail" if kind is InputGuardrail else "@output_guardrail"
    declared: Sequence[object] = getattr(agent, setting)
    checked = []
    for guardrail in declared:
        if not isinstance(guardrail, kind):
            raise ConfigError(
                f"agent '{agent.name}': {setting}= holds {_described(guardrail)}, not an Agents "
                f"SDK {kind.__name__}; make one with {made} (from agents import "
                f"{made.lstrip('@')})",
                setting=setting,
            )
        checked.append(
            dataclasses.replace(
                guardrail,
                guardrail_function=_applying(guardrail.guardrail_function),
                name=guardrail.get_name(),
            )
        )
    return checked


def tool_guardrails(tool: Any) -> dict[str, Any]:
    """A native function tool's ``tool_input_guardrails`` / ``tool_output_guardrails``, given the
    application's context and recording a rejection (as :func:`dataclasses.replace` changes)."""
    changes: dict[str, Any] = {}
    for setting, kind, stage in (
        ("tool_input_guardrails", ToolInputGuardrail, "tool_input"),
        ("tool_output_guardrails", ToolOutputGuardrail, "tool_output"),
    ):
        declared = getattr(tool, setting, None)
        if not declared:
            continue
        wrapped = []
        for guardrail in declared:
            if not isinstance(guardrail, kind):
                raise ConfigError(
                    f"tool '{tool.name}': {setting}= holds {_described(guardrail)}, not an Agents "
                    f"SDK {kind.__name__}",
                    setting=setting,
                )
            wrapped.append(
                dataclasses.replace(
                    guardrail,
                    guardrail_function=_tool_guardrail(guardrail, stage),
                    name=guardrail.get_name(),
                )
            )
        changes[setting] = wrapped
    return changes


def _tool_guardrail(guardrail: Any, stage: str) -> Callable[..., Any]:
    inner = guardrail.guardrail_function
    name = guardrail.get_name()

    async def check(data: Any) -> Any:
        context = data.context
        scope = scope_of(context)
        viewed = dataclasses.replace(data, context=app_view(context))
        output = inner(viewed)
        if inspect.isawaitable(output):
            output = await output
        behavior = getattr(output, "behavior", None) or {}
        if scope is not None and behavior.get("type") == "reject_content":
            call_id = getattr(context, "tool_call_id", None)
            scope.emit(
                _report(name, stage, getattr(context, "tool_name", None), "rejected", output),
                call_id,
            )
        return output

    check.__name__ = name
    return check


_AGENT_TRIPWIRES = (InputGuardrailTripwireTriggered, OutputGuardrailTripwireTriggered)
_TOOL_TRIPWIRES = (ToolInputGuardrailTripwireTriggered, ToolOutputGuardrailTripwireTriggered)


def tripwire_report(error: BaseException, agent: str) -> Report | None:
    """The ``report`` recording a guardrail tripwire that stopped the run, or ``None`` when
    ``error`` is not one."""
    if isinstance(error, _AGENT_TRIPWIRES):
        result = error.guardrail_result
        stage = "input" if isinstance(error, InputGuardrailTripwireTriggered) else "output"
        checked = getattr(getattr(result, "agent", None), "name", None) or agent
        return _report(result.guardrail.get_name(), stage, checked, "tripped", result.output)
    if isinstance(error, _TOOL_TRIPWIRES):
        stage = (
            "tool_input"
            if isinstance(error, ToolInputGuardrailTripwireTriggered)
            else "tool_output"
        )
        return _report(error.guardrail.get_name(), stage, None, "tripped", error.output)
    return None


def tripwire_name(error: BaseException) -> str | None:
    """The name of the guardrail whose tripwire ``error`` is, if it is one."""
    if isinstance(error, _AGENT_TRIPWIRES):
        return str(error.guardrail_result.guardrail.get_name())
    if isinstance(error, _TOOL_TRIPWIRES):
        return str(error.guardrail.get_name())
    return None


def _report(name: str, stage: str, subject: str | None, what: str, output: Any) -> Report:
    where = {
        "input": "the input of agent",
        "output": "the output of agent",
        "tool_input": "a call of tool",
        "tool_output": "the result of tool",
    }[stage]
    fields: dict[str, Any] = {"guardrail": name, "stage": stage, "outcome": what}
    if subject:
        fields["agent" if stage in ("input", "output") else "tool"] = subject
    info = getattr(output, "output_info", None)
    if info is not None:
        try:
            fields["output_info"] = json_text(info)
        except ValueError:
            fields["output_info"] = f"<{type(info).__name__}>"
    return Report(
        level=ReportLevel.WARNING,
        message=f"guardrail '{name}' {what} {where} '{subject or '?'}'",
        fields=fields,
    )


# --------------------------------------------------------------------------- tool use behaviour


def tool_use_behavior(agent: Agent, tool_names: Sequence[str]) -> Any:
    """The agent's ``tool_use_behavior`` as the SDK agent takes it, checked: one of the SDK's two
    names, a ``StopAtTools`` mapping naming tools the agent offers, or a function
    ``(context, tool_results) -> ToolsToFinalOutputResult`` given the application's context."""
    behavior = agent.tool_use_behavior
    if isinstance(behavior, str):
        return behavior  # the core checked it is one of the two names
    if isinstance(behavior, Mapping):
        names = behavior.get("stop_at_tool_names")
        if set(behavior) != {"stop_at_tool_names"} or not (
            isinstance(names, Sequence)
            and not isinstance(names, str)
            and all(isinstance(name, str) for name in names)
        ):
            raise ConfigError(
                f"agent '{agent.name}': tool_use_behavior= as a mapping is the SDK's StopAtTools, "
                f"{{'stop_at_tool_names': [tool names]}}; got {dict(behavior)!r}",
                setting="tool_use_behavior",
            )
        unknown = [name for name in names if name not in tool_names]
        if unknown and not agent.mcp_servers:
            raise ConfigError(
                f"agent '{agent.name}': tool_use_behavior stops at "
                f"{', '.join(map(repr, unknown))}, which is not one of its tools "
                f"({', '.join(tool_names) or 'none'})",
                setting="tool_use_behavior",
                accepted=list(tool_names),
            )
        return {"stop_at_tool_names": list(names)}
    assert callable(behavior)  # the core refused anything else
    try:
        inspect.signature(behavior).bind(None, None)
    except TypeError:
        raise ConfigError(
            f"agent '{agent.name}': a tool_use_behavior function is called as "
            "(context, tool_results) and returns a ToolsToFinalOutputResult; "
            f"{_described(behavior)} cannot be called so",
            setting="tool_use_behavior",
        ) from None
    except ValueError:
        pass  # no readable signature: it stands or falls when called
    return _applying(behavior)


# --------------------------------------------------------------------------- hooks


def run_hooks(agent: Agent) -> RunHooks[Any] | None:
    """The agent's ``run_hooks`` (an SDK ``RunHooks``), given the application's context; used
    for runs that start at this agent."""
    hooks = agent.run_hooks
    if hooks is None:
        return None
    if not isinstance(hooks, RunHooksBase):
        raise ConfigError(
            f"agent '{agent.name}': run_hooks= takes an Agents SDK RunHooks instance (a subclass "
            f"of agents.RunHooks); got {_described(hooks)}",
            setting="run_hooks",
        )
    return _AppRunHooks(hooks)


def sdk_agent_hooks(agent: Agent) -> AgentHooks[Any] | None:
    """``hooks=`` when it holds the SDK's own ``AgentHooks``, given the application's context;
    ``None`` when it holds AgentDeck's hooks object (or nothing)."""
    hooks = agent.hooks
    return _AppAgentHooks(hooks) if isinstance(hooks, AgentHooksBase) else None


class _AppRunHooks(RunHooks[Any]):
    """An application's ``RunHooks``, each call given :func:`app_view` of its context."""

    def __init__(self, inner: RunHooks[Any]) -> None:
        self.inner = inner

    async def on_llm_start(
        self, context: Any, agent: Any, system_prompt: Any, input_items: Any
    ) -> None:
        await self.inner.on_llm_start(app_view(context), agent, system_prompt, input_items)

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        await self.inner.on_llm_end(app_view(context), agent, response)

    async def on_agent_start(self, context: Any, agent: Any) -> None:
        await self.inner.on_agent_start(app_view(context), agent)

    async def on_agent_end(self, context: Any, agent: Any, output: Any) -> None:
        await self.inner.on_agent_end(app_view(context), agent, output)

    async def on_handoff(self, context: Any, from_agent: Any, to_agent: Any) -> None:
        await self.inner.on_handoff(app_view(context), from_agent, to_agent)

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        await self.inner.on_tool_start(app_view(context), agent, tool)

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        await self.inner.on_tool_end(app_view(context), agent, tool, result)


class _AppAgentHooks(AgentHooks[Any]):
    """An application's SDK ``AgentHooks``, each call given :func:`app_view` of its context."""

    def __init__(self, inner: AgentHooks[Any]) -> None:
        self.inner = inner

    async def on_start(self, context: Any, agent: Any) -> None:
        await self.inner.on_start(app_view(context), agent)

    async def on_end(self, context: Any, agent: Any, output: Any) -> None:
        await self.inner.on_end(app_view(context), agent, output)

    async def on_handoff(self, context: Any, agent: Any, source: Any) -> None:
        await self.inner.on_handoff(app_view(context), agent, source)

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        await self.inner.on_tool_start(app_view(context), agent, tool)

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        await self.inner.on_tool_end(app_view(context), agent, tool, result)

    async def on_llm_start(
        self, context: Any, agent: Any, system_prompt: Any, input_items: Any
    ) -> None:
        await self.inner.on_llm_start(app_view(context), agent, system_prompt, input_items)

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        await self.inner.on_llm_end(app_view(context), agent, response)


def _described(value: object) -> str:
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    kind = type(value).__name__
    return f"{kind} {name}" if isinstance(name, str) and kind in ("function", "method") else kind
