"""What a finished (or parked) run hands back to a caller, folded from its own events.

A caller depends on AgentDeck's event schema, never on the engine that ran the turn: a
:class:`TurnResult` is assembled from the run's ``run.completed`` event, and an
:class:`InterruptResult` from its open ``run.interrupted``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentdeck.model.content import ContentBlock, DataBlock, TextBlock
from agentdeck.model.payloads import RunCompleted, Usage
from agentdeck.model.status import OpenInterrupt

__all__ = ["InterruptResult", "TurnResult", "agent_output", "workflow_output"]


@dataclass(frozen=True, slots=True)
class TurnResult:
    """An agent turn's result.

    ``output`` is the run's structured output (a ``DataBlock``'s data) or the text of its final
    message; ``blocks`` is the full ``run.completed.output`` (artifacts first, final text last).
    ``usage.usd`` is always ``None``: AgentDeck does not price model calls. ``last_agent`` names
    the agent that gave the answer: the one the turn started at, or the one a handoff passed the
    conversation to (``run.completed.agent``).
    """

    output: Any
    usage: Usage
    run_id: str
    session_id: str | None = None
    blocks: list[ContentBlock] = field(default_factory=list)
    last_agent: str | None = None


class InterruptResult(dict[str, Any]):
    """A run parked on a question: ``{"type": "interrupt", "payload", "thread_id", "id"}``.

    ``id`` is the run's own id (address the run by it); ``interrupt_id`` names the open question.
    ``thread_id`` is vestigial and always empty. A ``dict`` so the 4.x idiom of indexing keeps
    working; attributes are the typed way in.
    """

    def __init__(self, *, run_id: str, interrupt: OpenInterrupt) -> None:
        super().__init__(
            type="interrupt",
            payload=interrupt.payload,
            thread_id="",
            id=run_id,
            interrupt_id=interrupt.interrupt_id,
        )

    @property
    def payload(self) -> Any:
        return self["payload"]

    @property
    def run_id(self) -> str:
        return str(self["id"])

    @property
    def interrupt_id(self) -> str:
        return str(self["interrupt_id"])


def agent_output(completed: RunCompleted) -> Any:
    """An agent's ``TurnResult.output``: trailing structured data, else the final text."""
    blocks = completed.output
    if not blocks:
        return ""
    last = blocks[-1]
    if isinstance(last, DataBlock):
        return last.data
    if isinstance(last, TextBlock):
        return last.text
    return blocks


def workflow_output(completed: RunCompleted) -> Any:
    """A workflow's return value as recorded.

    A body's non-block return value is recorded as one ``DataBlock`` and comes back as its data;
    a body that returned content blocks gets exactly those blocks back.
    """
    blocks = completed.output
    if len(blocks) == 1 and isinstance(blocks[0], DataBlock):
        return blocks[0].data
    return list(blocks)
