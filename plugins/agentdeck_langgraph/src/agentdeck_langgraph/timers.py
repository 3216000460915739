"""``sleep_until``: a durable timer inside a LangGraph node.

A sleeping node parks its graph through LangGraph's own ``interrupt()`` with a marker payload, so
the graph's state is checkpointed exactly as it is for a question to a human. The engine tells the
two apart by the marker: a human question ends the play with ``run.interrupted``, a timer with
``run.paused(reason="sleep", wake_at=...)``. A timer is a pause with a wake time, so no status is
added, and whatever resumes paused runs (the deck's sweep, or an operator's ``resume()``) wakes it.

Why the interrupt is unconditional: LangGraph matches resume values to ``interrupt()`` calls by
their order within a node, and a resumed node runs again from its start. Deciding "is the wake
time past?" inside the node would give a different answer on that re-run than on the first, and
shift every later ``interrupt()`` in the node onto the wrong answer. So the node always parks,
and the engine (which owns the clock) continues a timer whose moment has already come at once,
in the same play, without recording a pause.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langgraph.types import Interrupt, interrupt

from agentdeck.model.clock import utc

__all__ = ["SLEEP_MARKER", "Sleep", "sleep_of", "sleep_until"]

SLEEP_MARKER = "agentdeck.sleep_until"
"""The single key of the interrupt payload ``sleep_until`` parks with; its value is the wake
time in ISO 8601 (UTC)."""

WOKEN = {"agentdeck.woken": True}
"""What the engine resumes a timer's interrupt with (``sleep_until`` ignores it)."""


def sleep_until(when: datetime) -> None:
    """Suspend the running node's graph until ``when`` (timezone-aware), durably.

    Call it from inside a LangGraph node the engine plays. The run records
    ``run.paused(reason="sleep", wake_at=when)`` and ends its play; the deck's sweep resumes it
    once ``when`` has passed (across a restart when the checkpointer is durable), and the node
    runs again from its start, this time passing straight through. Code before the call
    therefore runs again: keep side effects after it, or make them idempotent.

    A ``when`` already in the past costs one checkpoint round trip and records nothing.
    Raises :class:`ValueError` for a naive datetime: a wake time compared across processes needs
    a zone.
    """
    if not isinstance(when, datetime):
        raise TypeError(f"sleep_until takes a datetime, not {type(when).__name__}")
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValueError(
            f"sleep_until needs a timezone-aware datetime, got naive {when.isoformat()}; "
            "pass e.g. datetime(..., tzinfo=UTC)"
        )
    interrupt({SLEEP_MARKER: utc(when).isoformat()})


@dataclass(frozen=True, slots=True)
class Sleep:
    """A pending ``sleep_until``: its interrupt id and when it wakes."""

    interrupt_id: str
    wake_at: datetime


def sleep_of(pending: Interrupt) -> Sleep | None:
    """The timer ``pending`` stands for, or ``None`` when it is a question for a human."""
    value: Any = pending.value
    if not isinstance(value, dict) or set(value) != {SLEEP_MARKER}:
        return None
    raw = value[SLEEP_MARKER]
    if not isinstance(raw, str):
        return None
    try:
        wake_at = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return Sleep(interrupt_id=pending.id, wake_at=utc(wake_at))
