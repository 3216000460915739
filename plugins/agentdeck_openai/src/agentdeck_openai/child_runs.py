"""Subagents as child runs: an agent calling a catalog agent or workflow as a tool.

``Agent(subagents=[...])`` entries that name (or are) agents and workflows of the deck's catalog
are offered to the model as function tools: named after the target, described by its
description, taking ``{"input": str}`` for an agent and the body's parameters for a workflow.
A call does not run the target inside this run: it starts it as a **child run** through the
runtime (``Invocation.invoke_child``), with ``parent_run_id`` set, the parent's namespace and
context, and the key ``"<parent run id>:<call id>"``. The child is a run of its own in the log
(readable, listable, answerable), and cancelling the parent cancels it.

How a call is served, without ever running a child inside the Agents SDK's tool dispatch:

1. Every child-run tool is declared ``needs_approval=True``, so the SDK stops its run when the
   model calls one (as it does for an approval) and hands the pending call to the play, with the
   model turn kept in its ``RunState``.
2. The play decides any approval the call needs first (``interrupt_on`` naming the subagent); a
   rejection never starts the child. Then, after the ``tool_dispatch`` safe point, it starts
   every pending child of the turn at once (:func:`settle_children`) and waits for them.
3. A child that parks (a question, a pause, its own child) parks the parent too: its state is
   saved like a pause and the play ends ``run.paused(waiting_on="child_runs",
   waiting_for=[<id>, ...])`` (its reason says the same for people). The runtime resumes the
   parent when one of those children ends; the continuation asks again with the same key, which
   attaches to the finished child.
4. Once every child of the turn has ended, the calls are approved in the SDK's state and its run
   continues: the tool (:func:`child_run_tool`) asks for the child once more with the same key,
   which returns the finished child's result at once, and hands it to the model as the tool
   output (text as it is, JSON data as JSON text).

A child that failed or was cancelled fails the parent like a raising tool
(``run.failed(tool_error)``, ``where`` the tool), unless the parent has a cancel or pause of its
own pending, which the safe point after the children takes first. Arguments the target cannot
take reach the model as an error it can correct, and no child is started for them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agents.tool import FunctionTool
from agents.tool_context import ToolContext

from agentdeck.authoring.tools import Tool
from agentdeck.authoring.workflows import WorkflowDefinition
from agentdeck.errors import ConfigError, InvalidInputError, RunSuspendedError
from agentdeck_openai.function_tools import hinted, is_strict_compatible
from agentdeck_openai.scope import RunScope, scope_of
from agentdeck_openai.tool_results import parse_arguments, render_result

__all__ = [
    "AGENT_INPUT_SCHEMA",
    "ChildCall",
    "ChildTarget",
    "child_key",
    "child_run_tool",
    "settle_children",
    "workflow_input_schema",
]

AGENT_INPUT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "input": {"type": "string", "description": "What to ask the agent, in full."},
    },
    "required": ["input"],
    "additionalProperties": False,
}
"""What a model passes to an agent called as a subagent: one message."""

_ANY_OBJECT: Mapping[str, Any] = {"type": "object", "properties": {}, "additionalProperties": True}


class _Unfit(Exception):
    """Internal: the model's arguments cannot be the target's input (``str(exc)`` says why)."""


@dataclass(frozen=True, slots=True)
class ChildTarget:
    """One subagent served as a child run, as the calling agent offers it.

    ``tool`` is the name the model calls; ``name`` the catalog name the child run is started
    under; ``needs_person`` whether the calling agent's ``interrupt_on`` makes every call wait
    for an approval before the child is started. For a ``@workflow``, ``params`` and
    ``required`` are its parameter names (``None``: a workflow kind that does not say), and
    ``open_params`` whether it takes other keys too (``**kwargs``).
    """

    tool: str
    name: str
    kind: Literal["agent", "workflow"]
    needs_person: bool = False
    params: tuple[str, ...] | None = None
    required: tuple[str, ...] = ()
    open_params: bool = False

    def input_of(self, arguments: Any) -> Any:
        """The child's input from the model's parsed arguments; raises ``_Unfit``.

        A workflow always receives its arguments by parameter name (a body of one parameter
        too, which would otherwise take an unexpected object whole).
        """
        if not isinstance(arguments, Mapping):
            raise _Unfit("the arguments must be a JSON object")
        if self.kind == "agent":
            text = arguments.get("input")
            if not isinstance(text, str) or set(arguments) != {"input"}:
                raise _Unfit('an agent takes exactly {"input": "<what to ask it>"}')
            return text
        if self.params is None:
            return dict(arguments)
        missing = [name for name in self.required if name not in arguments]
        unknown = [] if self.open_params else [k for k in arguments if k not in self.params]
        problems = []
        if missing:
            problems.append(f"missing {_quoted(missing)}")
        if unknown:
            problems.append(f"unknown {_quoted(unknown)}")
        if problems:
            takes = _quoted(list(self.params)) if self.params else "no parameters"
            raise _Unfit(f"{' and '.join(problems)}; it takes {takes}")
        return dict(arguments)


def _quoted(names: list[str]) -> str:
    return ", ".join(f"'{name}'" for name in names)


@dataclass(frozen=True, slots=True)
class ChildCall:
    """A pending call of a child-run tool: the SDK's call id, its arguments, its target."""

    call_id: str
    arguments: str | None
    target: ChildTarget


def child_key(run_id: str, call_id: str) -> str:
    """The child run's key: a continuation of the parent asks with it again and attaches to the
    same child instead of starting another."""
    return f"{run_id}:{call_id}"


def workflow_input_schema(definition: object, tool_name: str) -> dict[str, Any]:
    """The JSON schema of a workflow's parameters (its context parameter left out).

    A ``@workflow`` body is read like a tool's signature; a body taking ``**kwargs`` accepts any
    object with at least its named parameters; another workflow kind may offer its own
    ``input_schema`` mapping, else any object is accepted (the workflow checks its input when the
    child run starts, and the model is told what did not fit).
    """
    if isinstance(definition, WorkflowDefinition):
        if not definition.accepts_extra:
            return dict(Tool.from_function(definition.fn, name=tool_name).params_json_schema)
        return {
            "type": "object",
            "properties": {name: {} for name in definition.params},
            "required": list(definition.required_params),
            "additionalProperties": True,
        }
    offered = getattr(definition, "input_schema", None)
    if isinstance(offered, Mapping):
        return dict(offered)
    return dict(_ANY_OBJECT)


def child_run_tool(
    target: ChildTarget, *, description: str, schema: dict[str, Any]
) -> FunctionTool:
    """The function tool a model calls to run ``target`` as a child run (see the module doc)."""
    return FunctionTool(
        name=target.tool,
        description=description,
        params_json_schema=schema,
        on_invoke_tool=hinted(_invoker(target)),
        strict_json_schema=is_strict_compatible(schema),
        # Always: the SDK stops at the call, and the play starts the child outside the SDK run.
        needs_approval=True,
    )


def _invoker(target: ChildTarget) -> Any:
    async def invoke(context: ToolContext[Any], arguments: str) -> Any:
        # No tool-dispatch safe point here: the play passed one before it started the child,
        # and the child has ended by now; what is left is handing its result to the model.
        scope = scope_of(context)
        call_id = getattr(context, "tool_call_id", None) or ""
        try:
            child_input = _input(target, arguments)
        except _Unfit as unfit:
            return _tell_model(scope, call_id, target, str(unfit))
        invoke_child = scope.invocation.invoke_child if scope is not None else None
        if scope is None or invoke_child is None:
            error = ConfigError(
                f"the subagent '{target.name}' runs as a child run, which only a deck's runtime "
                "can start (Invocation.invoke_child is not set)",
                setting="subagents",
            )
            _record_failure(scope, call_id, target, error)
            raise error
        try:
            result = await invoke_child(
                target.name, child_input, key=child_key(scope.invocation.run_id, call_id)
            )
        except InvalidInputError as invalid:
            return _tell_model(scope, call_id, target, invalid.message)
        except Exception as exc:  # a failed or cancelled child is the tool failing
            _record_failure(scope, call_id, target, exc)
            raise
        rendered = render_result(target.tool, result)
        scope.note(call_id, rendered.text, rendered.error)
        scope.collect_artifacts(call_id, rendered.artifacts)
        return rendered.output

    return invoke


def _input(target: ChildTarget, arguments: str | None) -> Any:
    parsed = parse_arguments(arguments)
    if parsed.error is not None:
        raise _Unfit(parsed.error)
    return target.input_of(parsed.value)


def _tell_model(scope: RunScope | None, call_id: str, target: ChildTarget, why: str) -> str:
    what = "agent" if target.kind == "agent" else "workflow"
    message = (
        f"Error: the {what} '{target.name}' was not started: {why}. Call '{target.tool}' again "
        "with arguments matching its parameters."
    )
    if scope is not None:
        scope.note(call_id, message, why)
    return message


def _record_failure(
    scope: RunScope | None, call_id: str, target: ChildTarget, exc: BaseException
) -> None:
    if scope is not None:
        scope.record_failure(call_id or None, target.tool, exc)


async def settle_children(scope: RunScope, calls: Sequence[ChildCall]) -> list[str]:
    """Start (or attach to) the child run of every call at once; return the ids of the children
    that parked, once every child has either ended or parked.

    A child that ended, failed or could not start is left for the tool to report: it asks with
    the same key and gets the same outcome. Calls whose arguments do not fit start nothing.
    """
    invoke_child = scope.invocation.invoke_child
    if invoke_child is None:
        return []
    run_id = scope.invocation.run_id

    async def settle(call: ChildCall) -> str | None:
        try:
            child_input = _input(call.target, call.arguments)
        except _Unfit:
            return None
        try:
            await invoke_child(call.target.name, child_input, key=child_key(run_id, call.call_id))
        except RunSuspendedError as parked:
            return parked.run_id
        except Exception:
            return None  # reported by the tool, which meets the same outcome
        return None

    outcomes = await asyncio.gather(*(settle(call) for call in calls))
    return [child for child in outcomes if child is not None]
