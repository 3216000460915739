"""Tool approvals: parking a run on a pending tool call, and continuing it from the store alone.

When the Agents SDK stops a run on tool calls that need approval (``Agent(interrupt_on=[...])``,
a tool's ``needs_approval``, an MCP tool listed in ``interrupt_on``), the engine first offers each
pending call to the agent's ``approve_tool_call`` hook (the application's policy, see
:mod:`agentdeck_openai.hooks`). What the policy decides is applied at once and recorded as
``approval.decided`` with ``origin="policy"``; the run never parks for it. What is left waits for a
person:

* the SDK's serialized run state (``RunState.to_string()``, with our run context left out) and
  the open interrupt ids go into the run's engine-state area under :data:`STATE_NAME`;
* the run parks on one ``run.interrupted(reason="approval")`` per pending call, all together
  (consecutive payloads ending the play), each with its own id, the tool, its arguments and the
  call id as payload, answered with ``{"approved": bool, "message": str}``.

The runtime continues the run when the last open question is answered, with every answer at
hand: all the decisions are applied at once and nothing runs until every call is decided.

Continuing needs nothing but the run's log and its state area: a fresh engine instance compiles
the same agent graph, restores the SDK state with ``RunState.from_string``, applies the answer
(``approve``/``reject`` with the answer's message, which the model receives as the tool's output)
and streams the rest of the run.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.items import ToolApprovalItem

from agentdeck.errors import ReplayError
from agentdeck.model.content import ContentBlock, content_blocks
from agentdeck.model.events import Event
from agentdeck.model.payloads import AnswerRecorded, AnswerShape, ApprovalDecided, RunInterrupted
from agentdeck.ports import EngineStateArea
from agentdeck.vocabulary import AnswerOrigin, InterruptReason
from agentdeck_openai.tool_results import parse_arguments

__all__ = [
    "APPROVAL_SHAPE",
    "STATE_NAME",
    "Decision",
    "Parked",
    "Pending",
    "answers_of",
    "decided_event",
    "interrupt_event",
    "load_parked",
    "new_interrupt_id",
    "pending_of",
    "read_decision",
    "used_interrupt_ids",
]

STATE_NAME = "openai.run_state"
"""The engine-state area entry holding a paused or parked run (see :class:`Parked`)."""

_FORMAT = 1

APPROVAL_SHAPE = AnswerShape(
    json_schema={
        "type": "object",
        "properties": {
            "approved": {"type": "boolean", "description": "Whether the tool call may run."},
            "message": {
                "type": "string",
                "description": "Why not: the text the model receives instead of the result.",
            },
        },
        "required": ["approved"],
        "additionalProperties": False,
    }
)
"""What an approval interrupt accepts as its answer."""

REJECTED = "The tool call was not approved."
"""What the model receives for a rejection that gives no message."""


@dataclass(frozen=True, slots=True)
class Decision:
    approved: bool
    message: str | None = None


def read_decision(value: Any) -> Decision | None:
    """An approval decision from an answer or a policy's return value, ``None`` if it is none.

    Accepted: ``True``/``False``, or a mapping with a boolean ``approved`` and an optional string
    ``message``.
    """
    if isinstance(value, bool):
        return Decision(value)
    if isinstance(value, Mapping) and isinstance(value.get("approved"), bool):
        message = value.get("message")
        return Decision(
            value["approved"], message if isinstance(message, str) and message else None
        )
    return None


@dataclass(frozen=True, slots=True)
class Pending:
    """One tool call waiting for approval, as the SDK reports it."""

    item: ToolApprovalItem
    call_id: str
    tool: str
    arguments: str | None
    agent: str | None


def pending_of(items: Sequence[ToolApprovalItem]) -> list[Pending]:
    found = []
    for item in items:
        agent = getattr(item, "agent", None)
        found.append(
            Pending(
                item=item,
                call_id=item.call_id or "",
                tool=item.name or "",
                arguments=item.arguments,
                agent=getattr(agent, "name", None),
            )
        )
    return found


@dataclass(slots=True)
class Parked:
    """A paused or parked run, as the engine-state area keeps it.

    ``sdk_state`` is ``RunState.to_string()``; ``interrupts`` maps each open interrupt id to the
    call id it asks about (empty after a pause); ``decided`` lists the call ids whose approval is
    already decided in ``sdk_state``; ``cleared`` the calls of subagents run as child runs that
    an approval let through, whose child must still end before the SDK runs them; ``artifacts``
    are blocks tools produced before the run stopped, which ``run.completed`` still has to carry;
    ``held`` the calls a pause held back at the dispatch gate of a quiet play (they never ran;
    the resumed run lets them through); ``completed`` the output of a quiet play paused after its
    final reply (the resumed run completes with it, ``sdk_state`` is then empty), and ``agent``
    the agent that gave it.
    """

    sdk_state: str
    interrupts: dict[str, str] = field(default_factory=dict)
    decided: list[str] = field(default_factory=list)
    cleared: list[str] = field(default_factory=list)
    artifacts: list[ContentBlock] = field(default_factory=list)
    held: list[str] = field(default_factory=list)
    completed: list[ContentBlock] | None = None
    agent: str | None = None

    def to_bytes(self) -> bytes:
        return json.dumps(
            {
                "format": _FORMAT,
                "sdk_state": self.sdk_state,
                "interrupts": self.interrupts,
                "decided": self.decided,
                "cleared": self.cleared,
                "artifacts": [block.model_dump(mode="json") for block in self.artifacts],
                "held": self.held,
                "completed": (
                    None
                    if self.completed is None
                    else [block.model_dump(mode="json") for block in self.completed]
                ),
                "agent": self.agent,
            },
            ensure_ascii=False,
        ).encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes, run_id: str) -> Parked:
        try:
            raw = json.loads(data)
            if raw.get("format") != _FORMAT:
                raise ValueError("unknown format")
            return cls(
                sdk_state=str(raw["sdk_state"]),
                interrupts={str(k): str(v) for k, v in raw["interrupts"].items()},
                decided=[str(call_id) for call_id in raw.get("decided") or []],
                cleared=[str(call_id) for call_id in raw.get("cleared") or []],
                artifacts=content_blocks(list(raw.get("artifacts") or [])),
                held=[str(call_id) for call_id in raw.get("held") or []],
                completed=(
                    None if raw.get("completed") is None else content_blocks(raw["completed"])
                ),
                agent=str(raw["agent"]) if raw.get("agent") is not None else None,
            )
        except (ValueError, KeyError, TypeError, AttributeError) as bad:
            raise ReplayError(
                f"run '{run_id}': the openai engine's saved state ({STATE_NAME}) cannot be read",
                run_id=run_id,
                reason="state_unreadable",
            ) from bad


async def load_parked(area: EngineStateArea | None, run_id: str) -> Parked | None:
    if area is None:
        return None
    data = await area.get(STATE_NAME)
    return None if data is None else Parked.from_bytes(data, run_id)


def new_interrupt_id(call_id: str, used: Collection[str]) -> str:
    """``approval-<call id>``, made unique among the run's interrupt ids (a model may reuse a
    call id after a pause re-asks it)."""
    base = f"approval-{call_id or 'call'}"
    candidate, n = base, 1
    while candidate in used:
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def used_interrupt_ids(history: Sequence[Event]) -> set[str]:
    return {e.payload.interrupt_id for e in history if isinstance(e.payload, RunInterrupted)}


def answers_of(history: Sequence[Event], given: Mapping[str, Any]) -> dict[str, Any]:
    """Every answer the run's log records, by interrupt id, with this continuation's on top."""
    answers = {
        event.payload.interrupt_id: event.payload.value
        for event in history
        if isinstance(event.payload, AnswerRecorded)
    }
    answers.update(given)
    return answers


def interrupt_event(pending: Pending, interrupt_id: str) -> RunInterrupted:
    parsed = parse_arguments(pending.arguments)
    payload: dict[str, Any] = {
        "tool": pending.tool,
        "args": parsed.value,
        "call_id": pending.call_id,
        "agent": pending.agent,
    }
    if parsed.error is not None:
        payload["args_error"] = parsed.error
    return RunInterrupted(
        interrupt_id=interrupt_id,
        reason=InterruptReason.APPROVAL,
        payload=payload,
        expected=APPROVAL_SHAPE,
    )


def decided_event(
    pending: Pending,
    decision: Decision,
    origin: AnswerOrigin,
    interrupt_id: str | None = None,
) -> ApprovalDecided:
    return ApprovalDecided(
        call_id=pending.call_id,
        tool=pending.tool,
        approved=decision.approved,
        origin=origin,
        interrupt_id=interrupt_id,
        message=decision.message,
    )
