"""The ``code_digest`` of an ``Agent`` declaration, computed without the Agents SDK.

A run records its agent's digest in ``run.started``; the worker that plays or continues it
refuses a run whose digest is not its own (replaying a turn against a changed agent could
repeat or skip a tool call). A client deck that only admits runs records it too
(:mod:`agentdeck_openai.client`), so this module imports nothing of the SDK: the digest is the
same whichever side computes it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from agentdeck.authoring.agents import Agent
from agentdeck.authoring.context_check import callable_label
from agentdeck.authoring.tools import Tool

__all__ = ["agent_digest"]


def agent_digest(agent: Agent) -> str:
    """A digest of the declaration's shape: names, texts and schemas (callables by name)."""
    shape = {
        "name": agent.name,
        "instructions": _describe(agent.instructions),
        "tools": _describe(agent.tools),
        "model": agent.model,
        "handoffs": [_name_of(h) for h in agent.handoffs],
        "subagents": [_name_of(s) for s in agent.subagents],
        "skills": _describe(agent.skills),
        "mcp_servers": list(agent.mcp_servers),
        "output_type": _describe(agent.output_type),
        "interrupt_on": list(agent.interrupt_on),
        "planning": agent.planning,
        # The SDK's ModelSettings is a dataclass; a mapping of its fields is taken as given.
        "model_settings": _describe(
            dataclasses.asdict(agent.model_settings)
            if dataclasses.is_dataclass(agent.model_settings)
            and not isinstance(agent.model_settings, type)
            else agent.model_settings
        ),
        "tool_errors": agent.tool_errors,
        "tool_use_behavior": _describe(agent.tool_use_behavior),
    }
    text = json.dumps(shape, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _describe(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, Tool):
        return {"tool": value.name, "schema": dict(value.params_json_schema)}
    if isinstance(value, Agent):
        return {"agent": value.name}
    if isinstance(value, Mapping):
        return {str(k): _describe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_describe(v) for v in value]
    return getattr(value, "name", None) or callable_label(value)


def _name_of(target: object) -> str:
    if isinstance(target, str):
        return target
    return str(getattr(target, "name", type(target).__name__))
