"""Opening a run: the store's conditional write of ``run.started``, then its first play.

The store decides who may open (one turn per session, one run per ``(namespace, key)``); the
runtime only says whom it may step over: a holder of the session that went quiet past the
stale-run window, or one whose lease lapsed (its worker is gone). A run stepped over is closed in
its own name, saying who took over. A refusal is data from the store and an error here
(:class:`~agentdeck.errors.SessionBusyError`, :class:`~agentdeck.errors.DuplicateKeyError`).
"""

from __future__ import annotations

from datetime import timedelta

from agentdeck.errors import DuplicateKeyError, RunStateError, SessionBusyError
from agentdeck.model import trusted
from agentdeck.model.clock import Clock
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunStarted
from agentdeck.observing.hub import ObserverHub
from agentdeck.ports import (
    Entry,
    EventStore,
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
    ) -> None:
        self.store = store
        self.leases = leases
        self.observers = observers
        self.clock = clock
        self.config = config
        self.recorder = recorder
        self.player = player
        self.closed = False
        """Set when the runtime closes: no new runs from then on."""

    async def start(self, request: StartRequest) -> tuple[RunRecord, bool]:
        """Open a run and start playing it. Returns its record as opened (``running``, at seq 0:
        built from the ``run.started`` the store recorded, not read back) and whether it was
        newly opened.

        Raises ``SessionBusyError`` or ``DuplicateKeyError`` when the store refuses the open.
        """
        return _opened_record(await self.launch(request)), True

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
            and await self.leases.state(outcome.busy.run_id) is LeaseState.LAPSED
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
        self.player.launch(
            run_id,
            Invocation(
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
            ),
            request.budget,
        )
        return outcome.event

    def _takeover(self, dead: frozenset[str] = frozenset()) -> Takeover:
        stale_before = self.clock.now() - timedelta(seconds=self.config.stale_run_after)
        return Takeover(stale_before=stale_before, dead_run_ids=dead)


def _opened_record(event: Event) -> RunRecord:
    """The record of a run just opened, from the ``run.started`` event the store recorded."""
    started = event.payload
    assert isinstance(started, RunStarted)
    return RunRecord(
        run_id=event.run_id,
        name=started.name,
        invocable_kind=started.invocable_kind,
        status=RunStatus.RUNNING,
        created_at=event.ts,
        updated_at=event.ts,
        last_seq=event.seq,
        namespace=event.namespace,
        session_id=event.session_id,
        key=started.key,
        parent_run_id=event.parent_run_id,
    )
