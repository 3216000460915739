"""Claiming a queued run: how a worker plays a run another process admitted.

A deck on an execution that queues (``AGENTDECK_EXECUTION=temporal://...``) records each run it
opens as ``queued`` and hands only its id on; the process that plays it is a worker whose own
deck has the same catalog. :meth:`Claims.play_admitted` is the worker's whole entry point: it
reads the run's log from the shared store, claims it with a conditional ``run.claimed`` (of
several workers handed the same run, exactly one wins; a cancelled run is claimed by none),
plays it here from its recorded input, and waits for the play to end. Everything the play
needs comes from the log -- the caller's context and budget stay with the caller, as every
object that is not data does.

A run a stopping worker paused (its deck closing, :data:`~agentdeck.runtime.play.
CLOSING_PAUSE_REASON`) is handed on the same way: the next worker the execution gives it to
resumes it from the log, so a rolling restart of workers loses no run. So is a run whose worker
died mid-play, once its lease has lapsed (never before: a worker that is only slow still renews
it): the worker taking over records ``run.paused`` in the dead worker's name -- a conditional
append on the log as it read it -- and resumes it from the engine's last safe point.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from agentdeck.errors import NotFoundError, ReplayError, RunStateError
from agentdeck.model.clock import Clock
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunClaimed, RunPaused, RunStarted
from agentdeck.model.status import fold
from agentdeck.ports import (
    Entry,
    EventStore,
    Invocable,
    Invocation,
    LeasePort,
    LeaseState,
    RunRecord,
)
from agentdeck.runtime.continuation import Continuation, refuse_changed_code
from agentdeck.runtime.held import HeldRuns
from agentdeck.runtime.play import CLOSING_PAUSE_REASON, Player
from agentdeck.runtime.recording import Recorder
from agentdeck.vocabulary import SUSPENDED, RunStatus

__all__ = ["WORKER_LOST_REASON", "Claims"]

WORKER_LOST_REASON = "its worker stopped renewing its lease"
"""The reason of the ``run.paused`` a worker records when it takes over a dead worker's run."""


_HANDED_ON = frozenset({CLOSING_PAUSE_REASON, WORKER_LOST_REASON})
"""Pauses that mean "go on with it on another worker", not an operator's."""


def _handed_on(history: Sequence[Event]) -> bool:
    last = history[-1].payload if history else None
    return isinstance(last, RunPaused) and last.reason in _HANDED_ON


class Claims:
    """Plays queued runs for one worker's runtime."""

    def __init__(
        self,
        *,
        store: EventStore,
        invocables: Mapping[str, Invocable],
        clock: Clock,
        recorder: Recorder,
        held: HeldRuns,
        player: Player,
        continuation: Continuation,
        leases: LeasePort,
        owner: str,
    ) -> None:
        self.store = store
        self.invocables = invocables
        self.clock = clock
        self.recorder = recorder
        self.held = held
        self.player = player
        self.continuation = continuation
        self.leases = leases
        self.owner = owner

    async def play_admitted(self, run_id: str) -> RunRecord:
        """Play ``run_id`` here to its next ending, and return its record as that left it.

        What is played depends on where the log says the run stands: a queued run is claimed
        (a conditional ``run.claimed``) and played from its input; one a stopping worker paused,
        or one whose dead worker's lease lapsed (paused here in its name first), is resumed;
        one whose timer is due is resumed as a sweep would; one a client answered or asked to
        resume without playing is continued; any other suspended run is left as it is.

        Raises :class:`NotFoundError` for a run the store does not have, :class:`ReplayError`
        (before claiming it, so another worker may) for one started from an invocable this deck
        lacks or from other code than this deck has, and :class:`RunStateError` -- its
        ``status`` saying where the run stands -- for one that is over, or still played by a
        worker whose lease has not lapsed.
        """
        history = await self.store.read(run_id)
        state = fold(history)
        if state.status is RunStatus.RUNNING and state.last_seq > 0:
            if await self.leases.state(run_id) is not LeaseState.LAPSED:
                raise RunStateError(
                    f"run '{run_id}' is being played by a worker whose lease is not lapsed",
                    run_id=run_id,
                    status=RunStatus.RUNNING,
                    accepted=(RunStatus.QUEUED, RunStatus.PAUSED),
                )
            # Its worker died mid-play: paused in its name (only if nothing was written since
            # the log was read), then continued here like a run a stopping worker paused.
            paused = await self.recorder.append(
                run_id,
                [RunPaused(reason=WORKER_LOST_REASON)],
                expect=(RunStatus.RUNNING,),
                expect_seq=state.last_seq,
            )
            history = [*history, *paused]
        if (
            state.status is RunStatus.PAUSED
            and state.wake_at is not None
            and state.wake_at <= self.clock.now()
        ):
            # Its timer is due (the execution's own timer said so): woken as a sweep would.
            await self.continuation.resume(run_id, reason="timer")
            return await self._played(run_id)
        if state.status in SUSPENDED and not _handed_on(history):
            # Answered or asked to resume by a client, which recorded it without playing.
            record = await self.recorder.record(run_id)
            await self.continuation.continue_if_owed(record)
            return await self._played(run_id)
        last = history[-1].payload if history else None
        if isinstance(last, RunPaused) and last.reason in _HANDED_ON:
            # The worker that played it stopped: go on with it here, from its log.
            if not await self.continuation.resume(
                run_id, reason="continued after its worker stopped"
            ):
                now = await self.recorder.record(run_id)
                raise RunStateError(
                    f"run '{run_id}' was continued by another process first",
                    run_id=run_id,
                    status=now.status,
                    accepted=(RunStatus.QUEUED, RunStatus.PAUSED),
                )
            return await self._played(run_id)
        started = history[0].payload if history else None
        if not isinstance(started, RunStarted):
            raise NotFoundError(f"run '{run_id}' has no log", what="run", name=run_id)
        invocable = self.invocables.get(started.name)
        if invocable is None:
            raise ReplayError(
                f"run '{run_id}' was started from {started.name!r}, which this worker's deck "
                "does not have; start the worker on the same project as its clients",
                run_id=run_id,
                reason="unknown_invocable",
            )
        refuse_changed_code(
            run_id,
            started,
            invocable,
            opened="was admitted",
            here="this worker",
            note="deploy the same code to clients and workers",
        )
        claimed = await self.recorder.append(
            run_id, [RunClaimed(worker=self.owner)], expect=(RunStatus.QUEUED,)
        )
        first = history[0]
        self.player.launch(
            run_id,
            Invocation(
                run_id=run_id,
                invocable=invocable,
                input=list(started.input),
                entry=Entry.FRESH,
                session_id=first.session_id,
                namespace=first.namespace,
                parent_run_id=first.parent_run_id,
                history=(*history, *claimed),
                clock=self.clock,
            ),
        )
        return await self._played(run_id)

    async def _played(self, run_id: str) -> RunRecord:
        """Wait for this process's play of ``run_id`` to end; the run's record as it left it."""
        playing = self.held.playing.get(run_id)
        if playing is not None:
            # Shielded: a caller that stops waiting (a worker's activity being cancelled) does
            # not cut the play; the deck's close pauses it at a safe point like any other.
            await asyncio.shield(playing.task)
        return await self.recorder.record(run_id)
