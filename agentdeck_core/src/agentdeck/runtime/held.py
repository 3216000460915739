"""What one runtime holds in memory for runs: the plays in flight, runs parked in memory, the
suspensions engines kept of parked runs, and the contexts of the runs it started.

Everything else about a run is in the store (its usage budget too, in ``run.started``). What is
here cannot be, and so it is lost with the process -- by design: a context is a live object
that is never written anywhere, and a memory-parked run belongs to the process that started it.
A continuation in this process finds them here; one elsewhere plays without them.

Every module of the runtime shares one :class:`HeldRuns` (the deck's runtime builds it), so a
play, a control request and a continuation of the same run see the same entry.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from agentdeck.model.events import Event
from agentdeck.ports import Suspension
from agentdeck.runtime.config import Budget
from agentdeck.runtime.write_behind import WriteBehind

__all__ = ["HeldRuns", "Parked", "Playing"]


@dataclass(slots=True)
class Playing:
    """One play of a run in flight in this process."""

    context: Any
    budget: Budget | None = None
    ended: bool = False
    waiters: list[asyncio.Future[Event | None]] = field(default_factory=list)
    """Callers in this process waiting for the play's ending: handed the event as it is
    recorded (``None`` if the play stops without one), so they need not follow the log."""
    interrupted: Event | None = None
    """The first ``run.interrupted`` this play recorded: a run parking on several questions
    records one per question, so waiters are handed it when the play stops, once every question
    is in the log (on a durable store each is its own commit)."""
    writer: WriteBehind | None = None
    """Persists the play's payloads behind it (durable stores); ``None``: appended in line."""
    control_checked: tuple[int, float] = (-1, 0.0)
    """(control request count, monotonic time) of the last read that found no request."""
    kept: Suspension | None = None
    """What the engine kept of the run when this play parked it (see :class:`Suspension`)."""
    task: asyncio.Task[None] = field(init=False)

    def end(self, ending: Event | None) -> None:
        """The play's ending was recorded (or it stopped): wake whoever waits for it, once."""
        if self.ended:
            return
        self.ended = True
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_result(ending)
        self.waiters.clear()


@dataclass(slots=True)
class Parked:
    """A run suspended in this process by an engine that can only park in memory."""

    context: Any
    extra: dict[str, Any] = field(default_factory=dict)


class HeldRuns:
    """The runtime's in-memory tables, by run id."""

    __slots__ = ("contexts", "max_suspended", "parked", "playing", "suspended")

    def __init__(self, *, max_suspended: int = 1000) -> None:
        self.playing: dict[str, Playing] = {}
        self.parked: dict[str, Parked] = {}
        # Suspensions engines kept of runs parked here, oldest first (insertion order): what
        # lets a continuation in this process go on where the run stood instead of replaying.
        self.suspended: dict[str, Suspension] = {}
        self.max_suspended = max_suspended
        # Contexts live with the process that started the run: a continuation in this process
        # reuses them, one elsewhere has none (a context is never written anywhere).
        self.contexts: dict[str, Any] = {}

    def forget(self, run_id: str) -> None:
        """Drop what this process held for a run that has ended."""
        self.release(run_id)
        self.parked.pop(run_id, None)
        self.contexts.pop(run_id, None)

    def context_of(self, run_id: str) -> Any:
        """The live context this process holds for ``run_id`` (``None`` if it holds none)."""
        playing = self.playing.get(run_id)
        if playing is not None and playing.context is not None:
            return playing.context
        return self.contexts.get(run_id)

    # -- suspensions ---------------------------------------------------------------------------

    def keep(self, run_id: str, suspension: Suspension) -> None:
        """Hold ``suspension`` until the run continues here; past ``max_suspended`` the oldest
        one is released (its run replays from the log when it continues)."""
        previous = self.suspended.pop(run_id, None)
        if previous is not None and previous is not suspension:
            previous.discard()
        self.suspended[run_id] = suspension
        while len(self.suspended) > self.max_suspended:
            oldest = next(iter(self.suspended))
            self.suspended.pop(oldest).discard()

    def take(self, run_id: str) -> Suspension | None:
        """Hand the run's suspension to the play that continues it (it holds it from now on)."""
        return self.suspended.pop(run_id, None)

    def release(self, run_id: str, only: Suspension | None = None) -> None:
        """Discard the run's suspension (``only``: if it is still that one)."""
        held = self.suspended.get(run_id)
        if held is None or (only is not None and held is not only):
            return
        del self.suspended[run_id]
        held.discard()

    async def release_all(self) -> None:
        """Discard every suspension and wait until what they held has stopped (deck close)."""
        suspensions = list(self.suspended.values())
        self.suspended.clear()
        for suspension in suspensions:
            suspension.discard()
        for suspension in suspensions:
            await suspension.released()
