"""``Agent(planning=True)``: an ``update_plan`` tool whose updates are recorded as events.

The model keeps a short todo list by calling ``update_plan(items)`` with the whole list each time;
every call is recorded as a ``plan.updated`` event (between the call's ``tool.call.started`` and
``tool.call.completed``), so an operator reading the run's log sees the plan as it evolves. The
plan lives in the log and the conversation only: nothing else stores it.
"""

from __future__ import annotations

from typing import Any

from agents.tool import FunctionTool
from agents.tool_context import ToolContext
from pydantic import TypeAdapter, ValidationError

from agentdeck.model.payloads import PlanItem, PlanUpdated
from agentdeck_openai.function_tools import hinted
from agentdeck_openai.scope import scope_of
from agentdeck_openai.tool_results import parse_arguments

__all__ = ["PLAN_STATUSES", "PLAN_TOOL", "plan_tool"]

PLAN_TOOL = "update_plan"
PLAN_STATUSES = ("pending", "in_progress", "completed")

_DESCRIPTION = (
    "Keep a short plan for this task as a todo list. Call it with the whole list every time it "
    "changes: when you make the plan, when you start an item (in_progress) and when you finish "
    "one (completed). Keep at most one item in_progress."
)

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "description": "The whole plan, in order.",
            "items": {
                "type": "object",
                "properties": {
                    "title": {"type": "string", "description": "What this step does."},
                    "status": {"type": "string", "enum": list(PLAN_STATUSES)},
                },
                "required": ["title", "status"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["items"],
    "additionalProperties": False,
}

_ITEMS: TypeAdapter[list[PlanItem]] = TypeAdapter(list[PlanItem])


async def _update_plan(context: ToolContext[Any], arguments: str) -> str:
    scope = scope_of(context)
    if scope is not None:
        await scope.before_dispatch()
    call_id = getattr(context, "tool_call_id", None)
    parsed = parse_arguments(arguments)
    problem = parsed.error
    items: list[PlanItem] = []
    if problem is None:
        try:
            items = _ITEMS.validate_python(parsed.value.get("items"))
        except ValidationError:
            problem = "'items' must be a list of {title, status} objects"
        else:
            bad = sorted({item.status for item in items} - set(PLAN_STATUSES))
            if bad:
                problem = f"unknown status {bad[0]!r}; use one of {', '.join(PLAN_STATUSES)}"
    if problem is not None:
        message = f"Error: the plan was not updated: {problem}."
        if scope is not None:
            scope.note(call_id, message, problem)
        return message
    done = sum(item.status == "completed" for item in items)
    text = f"Plan updated: {len(items)} item(s), {done} completed."
    if scope is not None:
        scope.emit(PlanUpdated(items=items), call_id)
        scope.note(call_id, text)
    return text


def plan_tool() -> FunctionTool:
    """A fresh ``update_plan`` tool (one per compiled agent, like every tool)."""
    return FunctionTool(
        name=PLAN_TOOL,
        description=_DESCRIPTION,
        params_json_schema=_SCHEMA,
        on_invoke_tool=hinted(_update_plan),
        strict_json_schema=True,
    )
