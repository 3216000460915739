"""Opening a run: the store's conditional write of ``run.started``, then handing it to the
deck's execution -- which plays it here at once (in-process), or queues it for a worker (the
run is recorded ``queued`` first).

The store decides who may open (one turn per session, one run per ``(namespace, key)``); the
runtime only says whom it may step over: a holder of the session that went quiet past the
stale-run window, or one whose lease lapsed (its worker is gone). A run stepped over is closed in
its own name, saying who took over. (A holder nobody has held a lease for since its last event,
one TTL ago, counts as one whose lease lapsed: its worker died before writing it.) A refusal is
data from the store and an error here (:class:`~agentdeck.errors.SessionBusyError`,
:class:`~agentdeck.errors.DuplicateKeyError`).
"""

from __future__ import annotations

import contextlib
from datetime import timedelta
from functools import partial

from agentdeck.errors import AgentDeckError, DuplicateKeyError, RunStateError, SessionBusyError
from agentdeck.model import trusted
from agentdeck.model.clock import Clock
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunFailed, RunQueued, RunStarted
from agentdeck.observing.hub import ObserverHub
from agentdeck.plugins.urls import scheme_of
from agentdeck.ports import (
    Admission,
    Entry,
    EventStore,
    Execution,
    Invocation,
    LeasePort,
    LeaseState,
    NewRun,
    RunRecord,
    Takeover,
)
from agentdeck.runtime.config import RuntimeConfig, StartRequest
from agentdeck.runtime.ids import new_run_id
from agentdeck.runtime.play import Player
from agentdeck.runtime.recording import Recorder
from agentdeck.vocabulary import ErrorCode, RunStatus

__all__ = ["Opener"]


class Opener:
    """Opens runs for one runtime and hands each to the player."""

    def __init__(
        self,
        *,
        store: EventStore,
        leases: LeasePort,
        observers: ObserverHub,
        clock: Clock,
        config: RuntimeConfig,
        recorder: Recorder,
        player: Player,
        execution: Execution,
    ) -> None:
        self.store = store
        self.execution = execution
        self.leases = leases
        self.observers = observers
        self.clock = clock
        self.config = config
        self.recorder = recorder
        self.player = player
        self.closed = False
        """Set when the runtime closes: no new runs from then on."""

    async def start(self, request: StartRequest) -> tuple[RunRecord, bool]:
        """Open a run and start playing it. Returns its record as opened (``running``, or
        ``queued`` for an execution that queues; built from the ``run.started`` the store
        recorded, not read back) and whether it was newly opened.

        Raises ``SessionBusyError`` or ``DuplicateKeyError`` when the store refuses the open.
        """
        status = RunStatus.QUEUED if self.execution.queues else RunStatus.RUNNING
        return _opened_record(await self.launch(request), status), True

    async def launch(self, request: StartRequest) -> Event:
        """:meth:`start`, returning the ``run.started`` event the store recorded."""
        if self.closed:
            raise RunStateError(
                "the deck is closing; no new runs", run_id="", status=None, accepted=()
            )
        invocable = request.invocable
        run_id = new_run_id()
        new = NewRun(
            run_id=run_id,
            started=trusted.started(
                name=invocable.name,
                invocable_kind=invocable.kind,
                input=request.input,
                key=request.key,
                code_digest=invocable.code_digest,
                deadline=request.deadline,
                trace_context=request.trace_context,
                forked_from=request.forked_from,
                retry_of=request.retry_of,
                budget=request.budget,
            ),
            session_id=request.session_id,
            namespace=request.namespace,
            parent_run_id=request.parent_run_id,
        )
        # A takeover only ever steps over the holder of a session: none to build without one.
        takeover = self._takeover() if request.session_id is not None else None
        outcome = await self.store.open_run(new, takeover=takeover)
        dead: frozenset[str] = frozenset()
        if (
            outcome.busy is not None
            and outcome.busy.status is RunStatus.RUNNING
            and await self._worker_gone(outcome.busy)
        ):
            dead = frozenset({outcome.busy.run_id})
            outcome = await self.store.open_run(new, takeover=self._takeover(dead=dead))
        if outcome.stepped_over is not None:
            displaced = outcome.stepped_over.run_id
            if displaced in dead:
                code, why = ErrorCode.LEASE_EXPIRED, "its worker stopped renewing its lease"
            else:
                code, why = ErrorCode.CANCELLED_HARD, "it went quiet past the stale-run window"
            await self.recorder.close_abandoned(
                displaced, code, f"{why}; taken over by run {run_id}"
            )
        if outcome.busy is not None:
            raise SessionBusyError(
                session_id=request.session_id or "",
                holder_run_id=outcome.busy.run_id,
                holder_status=outcome.busy.status,
                run_id=run_id,
            )
        if outcome.key_holder is not None:
            raise DuplicateKeyError(
                namespace=request.namespace,
                key=request.key or "",
                holder_run_id=outcome.key_holder.run_id,
            )
        assert outcome.event is not None
        self.observers.publish([outcome.event])
        history: tuple[Event, ...] = (outcome.event,)
        if request.seed:  # a fork: what it reuses of its origin is in its own log first
            history += tuple(await self.recorder.append(run_id, request.seed))
        invocation = Invocation(
            run_id=run_id,
            invocable=invocable,
            input=request.input,
            entry=Entry.FRESH,
            context=request.context,
            session_id=request.session_id,
            namespace=request.namespace,
            parent_run_id=request.parent_run_id,
            history=history,
            clock=self.clock,
            deltas=request.deltas,
        )
        if self.execution.queues:
            # Queued before the execution hears of it: a worker's claim must find it so.
            await self.recorder.append(
                run_id, [RunQueued(execution=scheme_of(self.execution.url or "queue://"))]
            )
        admission = Admission(
            run_id=run_id,
            name=invocable.name,
            namespace=request.namespace,
            play_here=partial(self.player.launch, run_id, invocation, request.budget),
        )
        if not self.execution.queues:
            await self.execution.admit(admission)
            return outcome.event
        try:
            await self.execution.admit(admission)
        except BaseException as refused:
            # No worker will ever hear of it: the run ends here, saying why, rather than wait
            # queued for good. (The text is the execution's own, never the run's content.)
            with contextlib.suppress(AgentDeckError):
                await self.recorder.append(
                    run_id,
                    [
                        RunFailed(
                            error_code=ErrorCode.NOT_ADMITTED,
                            message=f"the execution did not take the run: {type(refused).__name__}",
                            retryable=True,
                        )
                    ],
                    expect=(RunStatus.QUEUED,),
                )
            raise
        return outcome.event

    async def _worker_gone(self, holder: RunRecord) -> bool:
        """Whether the running holder of a session has no live worker: its lease lapsed, or
        (where leases are shared, so silence means something) nobody has held one since its
        last event, one TTL ago -- a worker killed before it wrote its lease."""
        state = await self.leases.state(holder.run_id)
        if state is LeaseState.LAPSED:
            return True
        if state is LeaseState.ALIVE or not self.leases.shared:
            return False
        quiet_since = self.clock.now() - timedelta(seconds=self.config.lease_ttl)
        return holder.updated_at <= quiet_since

    def _takeover(self, dead: frozenset[str] = frozenset()) -> Takeover:
        stale_before = self.clock.now() - timedelta(seconds=self.config.stale_run_after)
        return Takeover(stale_before=stale_before, dead_run_ids=dead)


def _opened_record(event: Event, status: RunStatus) -> RunRecord:
    """The record of a run just opened, from the ``run.started`` event the store recorded."""
    started = event.payload
    assert isinstance(started, RunStarted)
    return RunRecord(
        run_id=event.run_id,
        name=started.name,
        invocable_kind=started.invocable_kind,
        status=status,
        created_at=event.ts,
        updated_at=event.ts,
        last_seq=event.seq,
        namespace=event.namespace,
        session_id=event.session_id,
        key=started.key,
        parent_run_id=event.parent_run_id,
    )
