"""What a finished (or parked) run hands back to a caller, folded from its own events.

A caller depends on AgentDeck's event schema, never on the engine that ran the turn: a
:class:`TurnResult` is assembled from the run's ``run.completed`` event, and an
:class:`InterruptResult` from its open ``run.interrupted``. :func:`result_of` is the one place
a play's ending becomes a result or the error saying why there is none -- for ``await run``
and, in its JSON form, for a parent waiting on a child run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentdeck.errors import RunFailedError, RunSuspendedError
from agentdeck.model.content import ContentBlock, DataBlock, TextBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    Usage,
)
from agentdeck.model.status import OpenInterrupt
from agentdeck.vocabulary import RunStatus

__all__ = [
    "InterruptResult",
    "TurnResult",
    "agent_output",
    "result_of",
    "workflow_output",
]


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


def result_of(ending: Event, *, kind: str, as_json: bool = False) -> Any:
    """What the play that recorded ``ending`` hands back to whoever waited for it.

    ``kind`` is the run's invocable kind. A completed agent gives a :class:`TurnResult`, a
    completed workflow its body's return value (:func:`workflow_output`). The JSON form
    (``as_json=True``), which a parent gets for a child run, gives an agent's
    :func:`agent_output` and a workflow's content blocks as their JSON data.

    A failed or cancelled run raises :class:`~agentdeck.errors.RunFailedError`; one that
    stopped without finishing raises :class:`~agentdeck.errors.RunSuspendedError`, whose
    ``pending`` is the question it waits on (an :class:`InterruptResult`), ``None`` for a pause.
    """
    payload = ending.payload
    run_id = ending.run_id
    if isinstance(payload, RunCompleted):
        if kind == "agent":
            if as_json:
                return agent_output(payload)
            return TurnResult(
                output=agent_output(payload),
                usage=payload.usage,
                run_id=run_id,
                session_id=ending.session_id,
                blocks=list(payload.output),
                last_agent=payload.agent,
            )
        value = workflow_output(payload)
        if as_json and isinstance(value, list):
            return [block.model_dump(mode="json") for block in value]
        return value
    if isinstance(payload, RunFailed):
        raise RunFailedError(
            run_id=run_id,
            status=RunStatus.FAILED,
            error_code=str(payload.error_code),
            reason=payload.message,
            where=payload.where,
        )
    if isinstance(payload, RunCancelled):
        raise RunFailedError(run_id=run_id, status=RunStatus.CANCELLED, reason=payload.reason)
    if isinstance(payload, RunInterrupted):
        question = OpenInterrupt(
            interrupt_id=payload.interrupt_id,
            seq=ending.seq,
            payload=payload.payload,
            reason=str(payload.reason),
            expected=payload.expected,
        )
        raise RunSuspendedError(
            run_id=run_id,
            status=RunStatus.WAITING_ANSWER,
            pending=InterruptResult(run_id=run_id, interrupt=question),
        )
    raise RunSuspendedError(run_id=run_id, status=RunStatus.PAUSED)
