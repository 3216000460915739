"""Skills as a generated ``load_skill`` tool: progressive disclosure of prose.

The tool's description lists each skill's name and description; the model calls
``load_skill(name)`` to read a skill's body (its ``SKILL.md`` without the front matter) only when
it needs it, so the instructions stay short. A skill is text, not a program: it never receives
the run's context.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.tool import FunctionTool
from agents.tool_context import ToolContext

from agentdeck.authoring.skills import Skill
from agentdeck_openai.function_tools import hinted
from agentdeck_openai.scope import scope_of
from agentdeck_openai.tool_results import parse_arguments

__all__ = ["SKILL_TOOL", "skill_tool"]

SKILL_TOOL = "load_skill"


def skill_tool(skills: Sequence[Skill]) -> FunctionTool:
    """A ``load_skill`` tool offering exactly ``skills`` (which must not be empty)."""
    by_name = {skill.name: skill for skill in skills}
    listing = "\n".join(f"- {skill.name}: {skill.description}" for skill in skills)
    description = (
        "Load the full instructions of a skill before doing work it covers. "
        f"Available skills:\n{listing}"
    )
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "enum": list(by_name),
                "description": "The skill's name, exactly as listed.",
            }
        },
        "required": ["name"],
        "additionalProperties": False,
    }

    async def load(context: ToolContext[Any], arguments: str) -> str:
        scope = scope_of(context)
        if scope is not None:
            await scope.before_dispatch()
        parsed = parse_arguments(arguments)
        name = parsed.value.get("name") if parsed.error is None else None
        skill = by_name.get(name) if isinstance(name, str) else None
        if skill is not None:
            body = skill.read()
            if scope is not None:
                scope.note(getattr(context, "tool_call_id", None), body)
            return body
        problem = parsed.error or f"there is no skill named {name!r}"
        message = f"Error: {problem}; the skills are: {', '.join(by_name)}."
        if scope is not None:
            scope.note(getattr(context, "tool_call_id", None), message, problem)
        return message

    return FunctionTool(
        name=SKILL_TOOL,
        description=description,
        params_json_schema=schema,
        on_invoke_tool=hinted(load),
        strict_json_schema=True,
    )
