"""AgentDeck tools as Agents SDK function tools.

Every function tool an agent offers goes through one wrapper, which is where the engine keeps its
word about tools:

* the tool-dispatch safe point is reached before the body runs (a pause or cancel stops the run
  there, with the tool never called);
* the model's argument text is parsed here, so malformed JSON reaches the model as an error it
  can correct instead of an exception, and arguments that do not fit the parameters likewise;
* the run's :class:`~agentdeck.authoring.context.ToolCtx` is built for the call and injected where
  the tool declares it (never in the schema the model sees);
* a body that raises is recorded by type and re-raised, so the run ends ``run.failed`` naming the
  tool (a raising tool never ends a run ``completed``);
* the result is rendered by :mod:`agentdeck_openai.tool_results` (no ``repr()`` ever reaches the
  model).

Engine-native ``FunctionTool`` objects keep their own invoker; they get the safe point only.
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
from agents.tool import FunctionTool
from agents.tool_context import ToolContext

from agentdeck.authoring.tools import Tool
from agentdeck.errors import InvalidInputError
from agentdeck_openai.scope import scope_of
from agentdeck_openai.tool_results import parse_arguments, render_result

__all__ = ["function_tool", "hinted", "is_strict_compatible", "wrap_native"]

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


def function_tool(tool: Tool, *, needs_approval: bool) -> FunctionTool:
    """A ``FunctionTool`` serving ``tool`` through the wrapper described in the module doc."""
    schema = dict(tool.params_json_schema)
    return FunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=schema,
        on_invoke_tool=_invoker(tool),
        strict_json_schema=is_strict_compatible(schema),
        needs_approval=needs_approval,
    )


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


def _invoker(tool: Tool) -> Invoker:
    body = _body_code(tool.fn)

    async def invoke(context: ToolContext[Any], arguments: str) -> Any:
        scope = scope_of(context)
        call_id = getattr(context, "tool_call_id", None)
        if scope is not None:
            await scope.before_dispatch()
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
                _record_failure(context, call_id, tool.name, invalid)
                raise
            message = f"Error: {invalid.message}. Call the tool again with arguments that fit."
            if scope is not None:
                scope.note(call_id, message, "the arguments do not fit the tool's parameters")
            return message
        except Exception as exc:
            _record_failure(context, call_id, tool.name, exc)
            raise
        rendered = render_result(tool.name, value)
        if scope is not None:
            scope.note(call_id, rendered.text, rendered.error)
            scope.collect_artifacts(call_id, rendered.artifacts)
        return rendered.output

    return hinted(invoke)


def wrap_native(tool: FunctionTool, *, needs_approval: bool) -> FunctionTool:
    """A copy of an engine-native function tool that stops at the tool-dispatch safe point, and
    waits for approval when the agent says so; its own invoker still does the rest."""
    inner = tool.on_invoke_tool

    async def invoke(context: ToolContext[Any], arguments: str) -> Any:
        scope = scope_of(context)
        if scope is not None:
            await scope.before_dispatch()
        try:
            return await inner(context, arguments)
        except Exception as exc:
            _record_failure(context, getattr(context, "tool_call_id", None), tool.name, exc)
            raise

    approval = True if needs_approval else tool.needs_approval
    return dataclasses.replace(tool, on_invoke_tool=hinted(invoke), needs_approval=approval)


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
