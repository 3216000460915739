"""Writing a run's events, and reading back how a run ended.

Every event the runtime writes goes through :meth:`Recorder.append`: the store persists it (and
wakes its followers), then the observers are offered it, so a follower never sees an event an
observer was not offered; an ending recorded while this process plays the run is handed straight
to whoever waits for it here (:meth:`Recorder.played_ending`), without anyone following the log.

:meth:`Recorder.stopped_ending` and :meth:`Recorder.logged_ending` are the one reading of "how
did this run's play end" from the log, for ``Run.result()`` and a parent waiting on its child
alike.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence

from agentdeck.errors import NotFoundError, RunStateError
from agentdeck.model.events import Event
from agentdeck.model.payloads import Payload, RunFailed
from agentdeck.observing.hub import ObserverHub
from agentdeck.ports import EventStore, RunRecord
from agentdeck.runtime.held import HeldRuns
from agentdeck.vocabulary import (
    ENDING_KINDS,
    SUSPENDED,
    SUSPENDING_KINDS,
    TERMINAL,
    TERMINAL_KINDS,
    ErrorCode,
    RunStatus,
)

__all__ = ["Recorder", "closing"]

_MOVED_ON_KINDS = frozenset({"run.resumed", "run.claimed"}) | TERMINAL_KINDS
"""Kinds that, recorded after a parking, mean the run left it (another process continued it)."""


class Recorder:
    """Appends to one store and fans out to one observer hub, for one runtime."""

    __slots__ = ("_playing", "observers", "store")

    def __init__(self, store: EventStore, observers: ObserverHub, held: HeldRuns) -> None:
        self.store = store
        self.observers = observers
        self._playing = held.playing

    async def append(
        self,
        run_id: str,
        payloads: Sequence[Payload],
        *,
        expect: Sequence[RunStatus] | None = None,
        expect_seq: int | None = None,
    ) -> list[Event]:
        """Persist, then fan out to observers. Followers are woken by the append itself."""
        events = await self.store.append(run_id, payloads, expect=expect, expect_seq=expect_seq)
        self.observers.publish(events)
        playing = self._playing.get(run_id)
        if playing is not None and not playing.ended:
            for event in events:
                if event.kind == "run.interrupted":
                    # More questions may follow in their own appends: see Playing.interrupted.
                    if playing.interrupted is None:
                        playing.interrupted = event
                elif event.kind in ENDING_KINDS:
                    playing.end(event)
                    break
        return events

    async def append_failure(self, run_id: str, code: ErrorCode, message: str) -> None:
        """End a running run as failed; a run that is no longer running is left as it is."""
        with contextlib.suppress(RunStateError):
            await self.append(
                run_id,
                [RunFailed(error_code=code, message=message, retryable=False)],
                expect=(RunStatus.RUNNING,),
            )

    async def close_abandoned(
        self, run_id: str, code: ErrorCode, message: str, *, expect_seq: int | None = None
    ) -> bool:
        """Close a run whose worker is gone, in its own name (only if its log still ends at
        ``expect_seq``, when given); whether this call closed it. Losing the race is fine."""
        try:
            await self.append(
                run_id,
                [RunFailed(error_code=code, message=message, retryable=True)],
                expect=(RunStatus.RUNNING,),
                expect_seq=expect_seq,
            )
        except (RunStateError, NotFoundError):
            return False
        return True

    # ------------------------------------------------------------------------------- reading

    async def record(self, run_id: str) -> RunRecord:
        """The run's indexed record; :class:`NotFoundError` when the store has none."""
        record = await self.store.get_run(run_id)
        if record is None:
            raise NotFoundError(f"no run with id '{run_id}'", what="run", name=run_id)
        return record

    async def played_ending(self, run_id: str) -> Event | None:
        """The next ending event (terminal or suspending) recorded for ``run_id`` while this
        process plays it -- what following its log from now on would find first.

        ``None`` at once when this process is not playing the run or its play has already
        recorded its ending (the run may have moved on since: the log says how it stands), and
        ``None`` when the play stops without an ending being recorded. ``None`` too for a
        parking that is already past: waiters are handed a parking only when the play has
        stopped, and by then another process may have answered or resumed the run (the
        parking is in the store first) -- handing it over would report a finished run as
        suspended.
        """
        playing = self._playing.get(run_id)
        if playing is None or playing.ended:
            return None
        waiter: asyncio.Future[Event | None] = asyncio.get_running_loop().create_future()
        playing.waiters.append(waiter)
        try:
            ending = await waiter
        finally:
            if waiter.cancelled() and waiter in playing.waiters:
                playing.waiters.remove(waiter)
        if ending is not None and ending.kind in SUSPENDING_KINDS:
            later = await self.store.read(run_id, from_seq=ending.seq + 1)
            if any(event.kind in _MOVED_ON_KINDS for event in later):
                return None
        return ending

    async def stopped_ending(self, run_id: str, record: RunRecord) -> Event | None:
        """The ending a run that has stopped (``record`` says so) stopped at: its last event.
        ``None`` for a run still playing, and for one whose last event is a decision a deck has
        yet to act on (an answer or a resume recorded by a process without its engine)."""
        if record.status not in TERMINAL and record.status not in SUSPENDED:
            return None
        last = await self.store.read(run_id, from_seq=record.last_seq, limit=1)
        return last[0] if last and last[0].kind in ENDING_KINDS else None

    async def logged_ending(self, run_id: str, record: RunRecord) -> Event:
        """The run's ending as its log tells it: where it stopped (:meth:`stopped_ending`), else
        the next ending the log records.

        Raises :class:`RunStateError` when the log ends without one (its store closed).
        """
        stopped = await self.stopped_ending(run_id, record)
        if stopped is not None:
            return stopped
        async with closing(self.store.follow(run_id, from_seq=record.last_seq)) as log:
            async for event in log:
                if event.kind in ENDING_KINDS:
                    return event
        raise RunStateError(
            f"the log of run '{run_id}' ended without a final event", run_id=run_id, status=None
        )


@contextlib.asynccontextmanager
async def closing(events: AsyncIterator[Event]) -> AsyncIterator[AsyncIterator[Event]]:
    """``events`` (a store's ``follow``), closed on the way out if it can be.

    A follower left to the event loop's async-generator finalizer costs a task and a wake-up of
    the loop's self-pipe when it is collected; closing it here costs neither.
    """
    try:
        yield events
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()
