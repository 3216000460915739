"""The Runtime: plays runs on engines and records every one of them in the event log.

Every turn a deck starts, from Python, HTTP or the terminal, goes through here. The Runtime owns
the run model and nothing of execution. It is a façade: each of its jobs is a module of this
package, and this class builds them for one open deck and wires them together.

* :mod:`~agentdeck.runtime.opening` -- the store's conditional write of ``run.started``, and
  handing the run to the deck's execution (:mod:`~agentdeck.runtime.in_process` by default).
* :mod:`~agentdeck.runtime.play` -- playing a run: payloads recorded one at a time (or behind
  the engine, :mod:`~agentdeck.runtime.write_behind`), deadline, budget, safe points.
* :mod:`~agentdeck.runtime.control` -- pause and cancel requests, acting on suspended runs,
  cancelling children.
* :mod:`~agentdeck.runtime.continuation` -- resume, answer (:mod:`~agentdeck.runtime.answers`
  says what an answer must fit) and the continuations a sweep owes.
* :mod:`~agentdeck.runtime.children` -- child runs, and waking their parents.
* :mod:`~agentdeck.runtime.forking` -- retries and forks: new runs from another's log.
* :mod:`~agentdeck.runtime.claiming` -- a worker claiming and playing a queued run.
* :mod:`~agentdeck.runtime.liveness` -- leases, their renewal, tidying, closing abandoned runs.
* :mod:`~agentdeck.runtime.recording` -- appending events, and how a run's play ended.
* :mod:`~agentdeck.runtime.held` -- what this process holds in memory for runs.
* :mod:`~agentdeck.runtime.config` and :mod:`~agentdeck.runtime.ids` -- knobs, run ids.

Methods that only hand a call on return the component's awaitable rather than awaiting it, so
the façade adds no coroutine to a run's path.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any

from agentdeck.errors import StoreError
from agentdeck.model.clock import Clock
from agentdeck.model.events import Event
from agentdeck.model.payloads import Payload
from agentdeck.observing.hub import ObserverHub
from agentdeck.ports import (
    ControlPort,
    Engine,
    EventStore,
    Execution,
    Invocable,
    LeasePort,
    RunRecord,
)
from agentdeck.runtime.awaiting import awaited_ending
from agentdeck.runtime.children import Children
from agentdeck.runtime.claiming import Claims
from agentdeck.runtime.config import RuntimeConfig, StartRequest
from agentdeck.runtime.continuation import Answered, Continuation
from agentdeck.runtime.control import ControlRequests, RunControl
from agentdeck.runtime.forking import Forking
from agentdeck.runtime.held import HeldRuns
from agentdeck.runtime.in_process import InProcessExecution
from agentdeck.runtime.liveness import Liveness
from agentdeck.runtime.opening import Opener
from agentdeck.runtime.play import Player
from agentdeck.runtime.recording import Recorder
from agentdeck.vocabulary import ControlVerb, RunStatus

__all__ = ["Runtime"]

log = logging.getLogger("agentdeck.runtime")


class Runtime:
    """Plays runs for one open deck. Constructed and closed by the deck."""

    def __init__(
        self,
        *,
        store: EventStore,
        control: ControlPort,
        leases: LeasePort,
        invocables: Mapping[str, Invocable],
        engines: Mapping[str, Engine],
        observers: ObserverHub,
        clock: Clock,
        config: RuntimeConfig | None = None,
        execution: Execution | None = None,
    ) -> None:
        self.store = store
        self.execution = execution = execution or InProcessExecution()
        self.control = control
        self.leases = leases
        self.invocables = invocables
        self.engines = engines
        self.observers = observers
        self.clock = clock
        self.config = config = config or RuntimeConfig()
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.held = held = HeldRuns(max_suspended=config.max_suspended)
        self.recorder = recorder = Recorder(store, observers, held)
        self.requests = requests = ControlRequests(control)
        self.liveness = liveness = Liveness(
            store=store,
            control=control,
            leases=leases,
            recorder=recorder,
            held=held,
            clock=clock,
            config=config,
            owner=self.owner,
        )
        self.run_control = run_control = RunControl(
            store=store, requests=requests, recorder=recorder, held=held
        )
        self.player = player = Player(
            store=store,
            engines=engines,
            clock=clock,
            recorder=recorder,
            held=held,
            liveness=liveness,
            control=run_control,
            requests=requests,
        )
        self.opener = opener = Opener(
            store=store,
            leases=leases,
            observers=observers,
            clock=clock,
            config=config,
            recorder=recorder,
            player=player,
            execution=execution,
        )
        self.continuation = continuation = Continuation(
            store=store,
            invocables=invocables,
            engines=engines,
            clock=clock,
            recorder=recorder,
            held=held,
            player=player,
            control=run_control,
            requests=requests,
        )
        self.children = Children(
            store=store,
            invocables=invocables,
            engines=engines,
            recorder=recorder,
            opener=opener,
            resume=self.resume,
            queued=execution.queues,
        )
        self.forking = Forking(store=store, invocables=invocables, engines=engines, opener=opener)
        self.claims = Claims(
            store=store,
            invocables=invocables,
            clock=clock,
            recorder=recorder,
            held=held,
            player=player,
            continuation=continuation,
            leases=leases,
            owner=self.owner,
        )
        # The player starts children and wakes parents through them, and they start runs
        # through the player: the one link wired after both exist.
        player.children = self.children

    # ------------------------------------------------------------------------------- lifecycle

    async def close(self, *, grace: float = 5.0) -> None:
        """Stop playing: ask live runs to pause at their next safe point, then cut the rest."""
        self.opener.closed = self.continuation.closed = True
        await self.player.stop(grace=grace)
        # Suspended bodies die with the deck (their runs replay wherever they continue next).
        await self.held.release_all()
        await self.liveness.close(grace=grace)

    # ------------------------------------------------------------------------------- runs

    def start(self, request: StartRequest) -> Awaitable[tuple[RunRecord, bool]]:
        """Open a run and start playing it (see :meth:`Opener.start
        <agentdeck.runtime.opening.Opener.start>`)."""
        return self.opener.start(request)

    def launch(self, request: StartRequest) -> Awaitable[Event]:
        """Open a run and start playing it; the ``run.started`` event the store recorded."""
        return self.opener.launch(request)

    def retry(self, run_id: str, *, context: Any = None) -> Awaitable[Event]:
        """Start a retry of a failed or cancelled run (see :meth:`Forking.retry
        <agentdeck.runtime.forking.Forking.retry>`); the new run's ``run.started``."""
        return self.forking.retry(run_id, context=context)

    def fork(self, run_id: str, *, at: int, context: Any = None) -> Awaitable[Event]:
        """Start a fork of a run from its recorded point ``at`` (see :meth:`Forking.fork
        <agentdeck.runtime.forking.Forking.fork>`); the new run's ``run.started``."""
        return self.forking.fork(run_id, at=at, context=context)

    def play_admitted(self, run_id: str) -> Awaitable[RunRecord]:
        """Claim a queued run and play it here, for a worker (see :meth:`Claims.play_admitted
        <agentdeck.runtime.claiming.Claims.play_admitted>`); its record as the play left it.
        This makes the runtime the :class:`~agentdeck.ports.RecordedRuns` a worker plays
        through."""
        return self.claims.play_admitted(run_id)

    def request_control(
        self, run_id: str, verb: ControlVerb, reason: str | None
    ) -> Awaitable[bool]:
        """Record a pause or cancel; act at once if the run is (or just became) suspended.
        On an execution that queues, a cancel also wakes the run's wait there, so it ends."""
        if self.execution.queues and verb is ControlVerb.CANCEL:
            return self._cancel_on_worker(run_id, reason)
        return self.run_control.request(run_id, verb, reason)

    async def _cancel_on_worker(self, run_id: str, reason: str | None) -> bool:
        requested = await self.run_control.request(run_id, ControlVerb.CANCEL, reason)
        await self.execution.wake(run_id)
        return requested

    def request_unseen(self, run_id: str, verb: ControlVerb, reason: str | None) -> Awaitable[None]:
        """Record a request for a run whose log lives in another process's store (see
        :meth:`RunControl.request_unseen <agentdeck.runtime.control.RunControl.request_unseen>`)."""
        return self.run_control.request_unseen(run_id, verb, reason)

    def resume(
        self, run_id: str, *, context: Any = None, reason: str = "resumed", play: bool = True
    ) -> Awaitable[bool]:
        """Continue a paused run; whether this call won (see :meth:`Continuation.resume
        <agentdeck.runtime.continuation.Continuation.resume>`). On an execution that queues,
        the request is recorded and a worker continues the run (this call did not play it)."""
        if self.execution.queues:
            return self._resume_on_worker(run_id, reason)
        return self.continuation.resume(run_id, context=context, reason=reason, play=play)

    async def _resume_on_worker(self, run_id: str, reason: str) -> bool:
        won = await self.continuation.resume(run_id, reason=reason, play=False)
        await self.execution.wake(run_id)
        return won

    def answer(
        self,
        run_id: str,
        value: Any,
        *,
        interrupt_id: str | None = None,
        context: Any = None,
        play: bool = True,
    ) -> Awaitable[Answered]:
        """Answer the question a run waits on (see :meth:`Continuation.answer
        <agentdeck.runtime.continuation.Continuation.answer>`). On an execution that queues,
        the answer is recorded here and a worker continues the run."""
        if self.execution.queues:
            return self._answer_on_worker(run_id, value, interrupt_id)
        return self.continuation.answer(
            run_id, value, interrupt_id=interrupt_id, context=context, play=play
        )

    async def _answer_on_worker(
        self, run_id: str, value: Any, interrupt_id: str | None
    ) -> Answered:
        answered = await self.continuation.answer(
            run_id, value, interrupt_id=interrupt_id, play=False
        )
        if answered.appended:
            await self.execution.wake(run_id)
        return answered

    def append(
        self,
        run_id: str,
        payloads: Sequence[Payload],
        *,
        expect: Sequence[RunStatus] | None = None,
        expect_seq: int | None = None,
    ) -> Awaitable[list[Event]]:
        """Persist, then fan out to observers. Followers are woken by the append itself."""
        return self.recorder.append(run_id, payloads, expect=expect, expect_seq=expect_seq)

    # ------------------------------------------------------------------------------- sweeping

    async def sweep_once(self) -> None:
        """Close runs whose leases lapsed, wake paused runs whose timer is due, and continue
        runs another process answered or asked to resume without playing them."""
        await self.liveness.close_lapsed()
        await self.continuation.wake_due()
        await self.continuation.continue_owed()

    async def sweep_forever(self) -> None:
        """Sweep at once (a deck opening after a restart wakes what fell due meanwhile), then
        every ``sweep_interval`` seconds, for the deck's lifetime."""
        sweeper = asyncio.current_task()
        unreachable = False  # the last sweep failed on an unreachable store: said already
        while True:
            try:
                await self.sweep_once()
                unreachable = False
            except StoreError as exc:
                # An outage fails every sweep until the server is back; the store says so once
                # (and once when it is back), so the sweep does too, not once per interval.
                if not unreachable:
                    log.warning(
                        "sweep failed, retried every %g s: %s", self.config.sweep_interval, exc
                    )
                unreachable = exc.retryable
            except Exception:
                log.exception("sweep failed")
            _raise_if_cancelling(sweeper)
            await self.clock.sleep(self.config.sweep_interval)
            _raise_if_cancelling(sweeper)

    # ------------------------------------------------------------------------------- reading

    def record(self, run_id: str) -> Awaitable[RunRecord]:
        """The run's indexed record; :class:`~agentdeck.errors.NotFoundError` if it has none."""
        return self.recorder.record(run_id)

    def context_of(self, run_id: str) -> Any:
        """The live context this process holds for ``run_id`` (``None`` if it holds none)."""
        return self.held.context_of(run_id)

    def played_ending(self, run_id: str) -> Awaitable[Event | None]:
        """The next ending recorded while this process plays ``run_id`` (``None`` at once when
        it does not; see :meth:`Recorder.played_ending
        <agentdeck.runtime.recording.Recorder.played_ending>`)."""
        return self.recorder.played_ending(run_id)

    def logged_ending(self, run_id: str, record: RunRecord) -> Awaitable[Event]:
        """The run's ending as its log tells it (see :meth:`Recorder.logged_ending
        <agentdeck.runtime.recording.Recorder.logged_ending>`)."""
        return self.recorder.logged_ending(run_id, record)

    def awaited_ending(self, run_id: str) -> Awaitable[Event]:
        """The ending a caller awaiting ``run_id`` gets: its play's, or its log's, followed past
        a pause on child runs that go on by themselves (see :mod:`agentdeck.runtime.awaiting`)."""
        return awaited_ending(self.recorder, run_id)

    async def wait_played(self, run_id: str) -> None:
        """Wait until this process stops playing ``run_id`` (returns at once if it is not)."""
        playing = self.held.playing.get(run_id)
        if playing is not None:
            await asyncio.shield(playing.task)


def _raise_if_cancelling(task: asyncio.Task[Any] | None) -> None:
    """End ``task`` if it was asked to cancel and the request was lost on the way.

    A driver can swallow a cancellation: on Python 3.11, ``asyncio.wait_for`` (which
    connection pools wait with) returns its result instead of raising when the cancellation
    arrives as the awaited thing completes. The task still counts the request
    (``Task.cancelling``), so a loop that checks it ends when told to -- the deck's close
    waits for its sweep, and must not wait forever.
    """
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
