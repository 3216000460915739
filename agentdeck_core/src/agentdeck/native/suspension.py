"""A ``@workflow`` body kept suspended between plays, so the process that holds it continues the
run where it stood instead of replaying it.

When a play parks (on asks, a sleep, a suspended child run) or pauses at ``ctx.safepoint()``,
and nothing of the body is left running or half-delivered, the engine hands the runtime a
:class:`SuspendedBody` (``Invocation.keep_suspended``) instead of cancelling the body: its task
stays alive, its branches wait in the channel, its context still holds the caller's ``ctx.data``.
The runtime holds it by run id (bounded, released when the run ends, is cancelled, or the deck
closes) and hands it back with the next continuation in this process.

The log still decides. The body may only go on if nothing but that continuation moved the run
since it parked: :meth:`SuspendedBody.tail` checks that the log ends in the very events its play
left (the parking), followed only by what a caller appends between plays (answers, refusals,
resume requests) and the one ``run.resumed`` of this continuation. Another process that
continued the run meanwhile (it wrote its own ``run.resumed`` and more) makes the check fail: the
body is dropped without writing anything, and the run replays from the log as anywhere else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentdeck.model.events import Event
from agentdeck.model.payloads import AnswerRecorded, AnswerRefused, ControlRequested, RunResumed
from agentdeck.native.channel import Channel
from agentdeck.native.ctx import PlayState
from agentdeck.ports import Suspension
from agentdeck.vocabulary import SUSPENDING_KINDS

__all__ = ["SuspendedBody"]

_BETWEEN_PLAYS = (AnswerRecorded, AnswerRefused, ControlRequested)
"""What callers append to a suspended run before it continues, besides the ``run.resumed``."""


@dataclass(eq=False, slots=True)
class SuspendedBody(Suspension):
    """One parked body: its task, its play state, and where its play left the log.

    ``parked_at`` is the length of the log when the play ended (its last payload included) and
    ``parking`` how many of those last events parked it (the open questions, or one pause).
    """

    task: asyncio.Task[None]
    state: PlayState
    channel: Channel
    parked_at: int
    parking: int
    grace: float
    discarded: bool = False
    _settled: asyncio.Event = field(default_factory=asyncio.Event)

    def settle(self) -> None:
        """The play that parked the body has finished handing it over (or dropping it)."""
        self._settled.set()

    async def settled(self, timeout: float) -> bool:
        """Wait for :meth:`settle`; whether the body can be continued at all."""
        if not self._settled.is_set():
            try:
                await asyncio.wait_for(self._settled.wait(), timeout)
            except TimeoutError:
                self.discard()
        return not self.discarded and not self.task.done()

    def still_parked(self) -> bool:
        """Whether the body still waits as its play left it (checked as that play ends)."""
        return not self.discarded and not self.task.done() and self.channel.retainable

    def tail(self, history: Sequence[Event]) -> Sequence[Event] | None:
        """The log from the parking events on, if only a continuation by this process moved the
        run since the body parked; ``None`` means the body lost the run and must be dropped."""
        if self.discarded or self.task.done():
            return None
        start = self.parked_at - self.parking
        if start < 1 or len(history) <= self.parked_at:
            return None
        if any(event.kind not in SUSPENDING_KINDS for event in history[start : self.parked_at]):
            return None
        between = history[self.parked_at :]
        if not isinstance(between[-1].payload, RunResumed):
            return None
        if not all(isinstance(event.payload, _BETWEEN_PLAYS) for event in between[:-1]):
            return None
        return history[start:]

    def claim(self) -> None:
        """A play continues the body: this record of its parking is spent (not cancelled)."""
        self.discarded = True

    def discard(self) -> None:
        if self.discarded:
            return
        self.discarded = True
        self._settled.set()
        self.channel.close()
        if not self.task.done():
            self.task.cancel()

    async def released(self) -> None:
        if not self.task.done():
            await asyncio.wait({self.task}, timeout=self.grace)
        if self.task.done() and not self.task.cancelled():
            self.task.exception()  # retrieved: the body's failures went through the channel
