"""``Agent(hooks=...)``: an application object whose methods the engine calls at lifecycle points.

A hooks object is a plain class; each public method is one hook, named after the point it serves,
and receives only the arguments it declares, by name:

* ``on_start(agent)``: the agent starts, or takes over by handoff;
* ``on_end(agent, output)``: the agent produced the final output;
* ``on_handoff(agent, source)``: the conversation is handed to the agent;
* ``on_tool_start(agent, tool)`` / ``on_tool_end(agent, tool, result)``: around one of its tools
  (``result`` is the text the model received);
* ``on_llm_start(agent)`` / ``on_llm_end(agent)``: around a model call;
* ``approve_tool_call(agent, tool, args, call_id)``: a call needs approval (``interrupt_on`` or a
  tool's ``needs_approval``); see below.

``agent``/``source`` are agent names, ``tool`` a tool name, ``args`` the parsed arguments. Like a
tool, a hook may also declare a ``ToolCtx[...]`` parameter to receive the run's context. Methods
may be sync or async. A public method with another name, or a parameter that is not offered, is a
``ConfigError`` when the deck builds: a misspelt hook would otherwise silently never run.

**Approval policy.** ``approve_tool_call`` lets the application decide an approval itself: return
``True`` to approve, ``False`` (or ``{"approved": False, "message": "..."}``) to reject with a
message the model receives, or ``None`` to leave the decision to a person, which parks the run.
A policy decision never parks the run and is recorded as ``approval.decided`` with
``origin="policy"``; a person's answer is recorded with ``origin="human"``.

A hook that raises fails the run (``engine_error``, naming the hook and the exception type).

``hooks=`` may instead hold the Agents SDK's own ``AgentHooks``: the SDK agent then gets it as it
is (see :mod:`agentdeck_openai.native`), and there is no approval policy.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agents.lifecycle import AgentHooks, AgentHooksBase

from agentdeck.authoring.agents import Agent
from agentdeck.authoring.context_check import (
    Requirement,
    context_requirement,
    missing_context_error,
)
from agentdeck.errors import ConfigError
from agentdeck_openai.scope import RunScope, scope_of

__all__ = ["HOOK_POINTS", "HookFailed", "HookSet", "sdk_hooks"]

HOOK_POINTS: Mapping[str, tuple[str, ...]] = {
    "on_start": ("agent",),
    "on_end": ("agent", "output"),
    "on_handoff": ("agent", "source"),
    "on_tool_start": ("agent", "tool"),
    "on_tool_end": ("agent", "tool", "result"),
    "on_llm_start": ("agent",),
    "on_llm_end": ("agent",),
    "approve_tool_call": ("agent", "tool", "args", "call_id"),
}
"""Hook method name -> the arguments it may declare."""


class HookFailed(Exception):
    """A hook method raised; carries which one, and the exception's type (never its text)."""

    def __init__(self, label: str, error_type: str) -> None:
        super().__init__(f"hook {label} raised {error_type}")
        self.label = label
        self.error_type = error_type


@dataclass(frozen=True, slots=True)
class _Method:
    label: str
    fn: Callable[..., Any]
    requirement: Requirement | None
    takes: frozenset[str]
    takes_everything: bool


class HookSet:
    """The hook methods of one agent's ``hooks=`` object, checked and ready to call."""

    def __init__(self, agent: Agent) -> None:
        self.agent_name = agent.name
        self._methods: dict[str, _Method] = {}
        hooks = agent.hooks
        if hooks is None or isinstance(hooks, AgentHooksBase):
            return  # none, or the SDK's own AgentHooks (the SDK agent's; see compile)
        owner = type(hooks).__name__
        for name, raw in inspect.getmembers_static(type(hooks)):
            if name.startswith("_") or not (callable(raw) or isinstance(raw, staticmethod)):
                continue
            label = f"{owner}.{name}"
            offered = HOOK_POINTS.get(name)
            if offered is None:
                raise ConfigError(
                    f"agent '{agent.name}': hooks method {label} is not a hook this engine calls; "
                    f"the hooks are {', '.join(HOOK_POINTS)} (prefix helpers with '_')",
                    setting="hooks",
                    accepted=list(HOOK_POINTS),
                )
            self._methods[name] = _read_method(agent.name, label, getattr(hooks, name), offered)

    def __bool__(self) -> bool:
        return bool(self._methods)

    def has(self, point: str) -> bool:
        return point in self._methods

    async def call(self, point: str, scope: RunScope | None, **offered: Any) -> Any:
        """Call the hook for ``point`` (if declared) with the arguments it takes."""
        method = self._methods.get(point)
        if method is None:
            return None
        kwargs = {
            key: value
            for key, value in offered.items()
            if method.takes_everything or key in method.takes
        }
        requirement = method.requirement
        if requirement is not None and requirement.parameter is not None:
            if scope is None:
                raise missing_context_error(f"hook method '{method.label}'", requirement, None)
            kwargs[requirement.parameter] = scope.tool_ctx
        try:
            result = method.fn(**kwargs)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            raise HookFailed(method.label, type(exc).__name__) from exc
        return result


def _read_method(
    agent: str, label: str, fn: Callable[..., Any], offered: tuple[str, ...]
) -> _Method:
    requirement = context_requirement(fn)
    context_parameter = requirement.parameter if requirement is not None else None
    takes: set[str] = set()
    everything = False
    for parameter in inspect.signature(fn).parameters.values():
        if parameter.name == context_parameter:
            continue
        if parameter.kind is parameter.VAR_KEYWORD:
            everything = True
            continue
        if parameter.kind is parameter.VAR_POSITIONAL:
            continue
        if parameter.name in offered:
            takes.add(parameter.name)
        elif parameter.default is parameter.empty:
            raise ConfigError(
                f"agent '{agent}': hook {label} takes '{parameter.name}', which this hook is not "
                f"given; it may take {', '.join(offered)} and a ToolCtx[...] parameter",
                setting="hooks",
                accepted=list(offered),
            )
    return _Method(label, fn, requirement, frozenset(takes), everything)


def _tool_name(tool: object) -> str:
    name = getattr(tool, "name", None)
    return name if isinstance(name, str) else type(tool).__name__


class _Bridge(AgentHooks[Any]):
    """The SDK side: receives the SDK's agent hooks and calls the application's methods."""

    def __init__(self, hooks: HookSet) -> None:
        self._hooks = hooks

    async def on_start(self, context: Any, agent: Any) -> None:
        await self._hooks.call("on_start", scope_of(context), agent=agent.name)

    async def on_end(self, context: Any, agent: Any, output: Any) -> None:
        await self._hooks.call("on_end", scope_of(context), agent=agent.name, output=output)

    async def on_handoff(self, context: Any, agent: Any, source: Any) -> None:
        await self._hooks.call(
            "on_handoff", scope_of(context), agent=agent.name, source=source.name
        )

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        await self._hooks.call(
            "on_tool_start", scope_of(context), agent=agent.name, tool=_tool_name(tool)
        )

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        await self._hooks.call(
            "on_tool_end",
            scope_of(context),
            agent=agent.name,
            tool=_tool_name(tool),
            result=result if isinstance(result, str) else str(type(result).__name__),
        )

    async def on_llm_start(
        self, context: Any, agent: Any, system_prompt: Any, input_items: Any
    ) -> None:
        await self._hooks.call("on_llm_start", scope_of(context), agent=agent.name)

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        await self._hooks.call("on_llm_end", scope_of(context), agent=agent.name)


def sdk_hooks(hooks: HookSet) -> AgentHooks[Any] | None:
    """The SDK ``AgentHooks`` calling ``hooks``, or ``None`` when the agent declares none."""
    lifecycle = [point for point in HOOK_POINTS if point != "approve_tool_call"]
    return _Bridge(hooks) if any(hooks.has(point) for point in lifecycle) else None
