"""The Runtime: plays runs on engines and records every one of them in the event log.

Every turn a deck starts, from Python, HTTP or the terminal, goes through here. The Runtime owns
the run model and nothing of execution:

* **Opening** is the store's conditional write of ``run.started`` (one turn per session, one run
  per ``(namespace, key)``), with a stale or dead holder stepped over and closed in its own name.
* **Playing** asks the engine for one payload at a time, persists it and hands it to the
  observers; followers are woken by the append itself. With the memory store each payload is
  appended before the next is asked for; with a durable store they are written behind the engine,
  a burst per append (:mod:`agentdeck.runtime.write_behind`), and flushed before anything that
  needs the log complete.
* **Control** requests go to the control port and are acted on at the engine's next safe point;
  a suspended run is acted on at once. Continuing a run is a conditional ``run.resumed`` append:
  whichever process wins it drives the run, from the log and the store's engine-state area.
* **Liveness**: a playing run holds a lease renewed on a schedule; whoever sees a lapsed lease
  closes the abandoned run as ``run.failed(lease_expired)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time
import uuid
import warnings
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from agentdeck.errors import (
    AgentDeckError,
    DuplicateKeyError,
    NotFoundError,
    ReplayError,
    RunFailedError,
    RunStateError,
    RunSuspendedError,
    SessionBusyError,
)
from agentdeck.model import trusted
from agentdeck.model.clock import Clock
from agentdeck.model.content import ContentBlock
from agentdeck.model.events import (
    AnswerRecorded,
    ControlObserved,
    ControlRequested,
    Event,
    Payload,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunPaused,
    RunResumed,
    RunStarted,
    Usage,
    UsageReported,
)
from agentdeck.model.results import agent_output, workflow_output
from agentdeck.model.status import fold
from agentdeck.observing.hub import ObserverHub
from agentdeck.ports import (
    ControlDirective,
    ControlPort,
    Engine,
    EngineStateArea,
    Entry,
    EventStore,
    Invocable,
    Invocation,
    LeasePort,
    LeaseState,
    NewRun,
    RunQuery,
    RunRecord,
    Takeover,
)
from agentdeck.runtime.write_behind import WriteBehind
from agentdeck.vocabulary import (
    SUSPENDED,
    TERMINAL,
    TERMINAL_KINDS,
    ControlVerb,
    ErrorCode,
    RunStatus,
    SafePoint,
    WaitKind,
)

__all__ = [
    "Budget",
    "NonDurableStoreWarning",
    "Runtime",
    "RuntimeConfig",
    "StartRequest",
    "closing",
    "new_run_id",
]

log = logging.getLogger("agentdeck.runtime")

# The reason a closing deck pauses the runs it is still playing. The pause is the deck's, not an
# operator's, so the sweep of the next deck that opens with the run's invocable continues it.
CLOSING_PAUSE_REASON = "deck closing"


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    """The runtime knobs (``AGENTDECK_RUNTIME_*``), in seconds."""

    stale_run_after: float = 3600.0
    lease_ttl: float = 90.0
    sweep_interval: float = 30.0

    @property
    def lease_renew_every(self) -> float:
        # Six renewals per TTL: a blocked loop has to stall for most of a TTL to lose the lease.
        return self.lease_ttl / 6


@dataclass(frozen=True, slots=True)
class Budget:
    """Caps on one run's model usage, summed from its ``usage.reported`` events.

    A run that goes over any cap ends ``run.failed(budget_exceeded)`` at the event that crossed
    it. ``None`` means no cap on that measure.
    """

    max_total_tokens: int | None = None
    max_output_tokens: int | None = None
    max_requests: int | None = None

    def exceeded_by(self, usage: Usage) -> str | None:
        """The measure ``usage`` went over, or ``None``."""
        for measure, cap, used in (
            ("total tokens", self.max_total_tokens, usage.total_tokens),
            ("output tokens", self.max_output_tokens, usage.output_tokens),
            ("model requests", self.max_requests, usage.requests),
        ):
            if cap is not None and used > cap:
                return f"{measure}: {used} used, budget {cap}"
        return None


@dataclass(frozen=True, slots=True)
class StartRequest:
    """One run to start, after the deck resolved the name and normalized the input."""

    invocable: Invocable
    input: list[ContentBlock]
    context: Any = None
    session_id: str | None = None
    namespace: str | None = None
    key: str | None = None
    parent_run_id: str | None = None
    deadline: datetime | None = None
    budget: Budget | None = None
    deltas: bool = True
    """See :attr:`agentdeck.ports.Invocation.deltas`."""


@dataclass(slots=True)
class _Playing:
    context: Any
    budget: Budget | None = None
    ended: bool = False
    waiters: list[asyncio.Future[Event | None]] = field(default_factory=list)
    """Callers in this process waiting for the play's ending: handed the event as it is
    recorded (``None`` if the play stops without one), so they need not follow the log."""
    writer: WriteBehind | None = None
    """Persists the play's payloads behind it (durable stores); ``None``: appended in line."""
    control_checked: tuple[int, float] = (-1, 0.0)
    """(process control generation, monotonic time) of the last read that found no request."""
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
class _StateArea(EngineStateArea):
    store: EventStore
    run_id: str

    async def get(self, name: str) -> bytes | None:
        return await self.store.get_state(self.run_id, name)

    async def put(self, name: str, value: bytes) -> None:
        await self.store.put_state(self.run_id, name, value)

    async def delete(self, name: str) -> None:
        await self.store.delete_state(self.run_id, name)


@dataclass(slots=True)
class _Parked:
    """A run suspended in this process by an engine that can only park in memory."""

    context: Any
    extra: dict[str, Any] = field(default_factory=dict)


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
    ) -> None:
        self.store = store
        self.control = control
        self.leases = leases
        self.invocables = invocables
        self.engines = engines
        self.observers = observers
        self.clock = clock
        self.config = config or RuntimeConfig()
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._playing: dict[str, _Playing] = {}
        self._parked: dict[str, _Parked] = {}
        # Budgets and contexts live with the process that started the run: a continuation in
        # this process reuses them, one elsewhere has none (a context is never written anywhere).
        self._budgets: dict[str, Budget] = {}
        self._contexts: dict[str, Any] = {}
        self._closed = False
        self._warned_not_durable = False
        # Runs whose lease this process holds (renewed together by one task, `_renewer`).
        self._leased: dict[str, None] = {}
        self._renewer: asyncio.Task[None] | None = None
        # Finished runs whose leftover control requests are still to be dropped, and whose
        # leases are still to be released (together, by `_tidier`).
        self._ended: dict[str, None] = {}
        self._unleased: dict[str, None] = {}
        self._tidier: asyncio.Task[None] | None = None
        # run id -> last seq the sweep already checked for an owed continuation.
        self._owed_checked: dict[str, int] = {}

    # ------------------------------------------------------------------------------- lifecycle

    async def close(self, *, grace: float = 5.0) -> None:
        """Stop playing: ask live runs to pause at their next safe point, then cut the rest."""
        self._closed = True
        playing = list(self._playing.items())
        requested: list[str] = []
        for run_id, _ in playing:
            with contextlib.suppress(AgentDeckError):
                _control_generation[0] += 1
                if await self.control.request(run_id, ControlVerb.PAUSE, CLOSING_PAUSE_REASON):
                    requested.append(run_id)
        tasks = [p.task for _, p in playing]
        if tasks:
            _done, pending = await asyncio.wait(tasks, timeout=grace)
            for task in pending:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for run_id, play in playing:
                self._played(run_id, play)  # a task cancelled before it ran never said so
        # A play that ended without reaching a safe point (it parked on a question, or was just
        # winding down) never took the pause: withdraw it, or it would veto the run's answers.
        for run_id in requested:
            with contextlib.suppress(AgentDeckError):
                await self.control.withdraw(run_id, ControlVerb.PAUSE)
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer
        if self._tidier is not None:
            self._tidier.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._tidier
        # Best effort, and bounded: a port torn down under us (at interpreter exit) must not
        # hold the close; what is left of a finished run is harmless, and pruned with it.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._tidy(), timeout=grace)

    # ------------------------------------------------------------------------------- starting

    async def start(self, request: StartRequest) -> tuple[RunRecord, bool]:
        """Open a run and start playing it. Returns its record as opened (``running``, at seq 0:
        built from the ``run.started`` the store recorded, not read back) and whether it was
        newly opened.

        Raises ``SessionBusyError`` or ``DuplicateKeyError`` when the store refuses the open.
        """
        return _opened_record(await self.launch(request)), True

    async def launch(self, request: StartRequest) -> Event:
        """:meth:`start`, returning the ``run.started`` event the store recorded."""
        if self._closed:
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
            await self._close_abandoned(displaced, code, f"{why}; taken over by run {run_id}")
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
        self._launch(
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
                history=(outcome.event,),
                clock=self.clock,
                deltas=request.deltas,
            ),
            request.budget,
        )
        return outcome.event

    def _takeover(self, dead: frozenset[str] = frozenset()) -> Takeover:
        stale_before = self.clock.now() - timedelta(seconds=self.config.stale_run_after)
        return Takeover(stale_before=stale_before, dead_run_ids=dead)

    # ------------------------------------------------------------------------------- playing

    def _launch(self, run_id: str, invocation: Invocation, budget: Budget | None = None) -> None:
        invocation.checkpoint = self._checkpointer(run_id)
        invocation.state = _StateArea(self.store, run_id)
        invocation.clock = self.clock
        invocation.invoke_child = self._child_invoker(invocation)
        if budget is not None:
            self._budgets[run_id] = budget
        if invocation.context is not None:
            self._contexts[run_id] = invocation.context
        budget = self._budgets.get(run_id)
        playing = _Playing(context=invocation.context, budget=budget)
        if self.store.durable:
            # A durable append is a commit or a round trip: persisted behind the engine, in
            # bursts (see agentdeck.runtime.write_behind). The memory store's append is cheaper than
            # the task a writer needs, so it stays in line.
            playing.writer = WriteBehind(
                lambda batch: self.append(run_id, batch), name=f"run-writer:{run_id}"
            )
        playing.task = asyncio.get_running_loop().create_task(
            self._play(invocation, budget), name=f"run:{run_id}"
        )
        if invocation.entry is Entry.FRESH:
            # Nobody can have asked to pause or cancel a run before it was opened just now: its
            # first stream_item safe points need no read (see _checkpointer).
            playing.control_checked = (_control_generation[0], time.monotonic())
        self._playing[run_id] = playing

    def _played(self, run_id: str, playing: _Playing | None) -> None:
        """A play ended: drop it (unless a newer play of the run replaced it already) and
        release whoever waits for an ending it never recorded.

        Called as the play's last act rather than from a done callback, which would cost every
        run a callback scheduled on the loop; a play task cancelled before it ever ran is seen
        to by :meth:`close`, the only place that cancels one.
        """
        if playing is None:
            return
        if self._playing.get(run_id) is playing:
            del self._playing[run_id]
        playing.end(None)

    async def _play(self, invocation: Invocation, budget: Budget | None = None) -> None:
        playing = self._playing.get(invocation.run_id)
        try:
            await self._play_through(invocation, playing, budget)
        finally:
            self._played(invocation.run_id, playing)

    async def _play_through(
        self, invocation: Invocation, playing: _Playing | None, budget: Budget | None
    ) -> None:
        run_id = invocation.run_id
        used = _NO_USAGE
        engine = self.engines[invocation.invocable.engine]
        ending: Payload | None = None
        acquiring: asyncio.Task[bool] | None = None
        if self.leases.shared:
            # A shared lease is a round trip: taken alongside the play rather than before it.
            # Until it lands the run's lease reads NONE, which lets nobody take the run over.
            acquiring = asyncio.get_running_loop().create_task(
                self.leases.acquire(run_id, self.owner, self.config.lease_ttl)
            )
            acquiring.add_done_callback(lambda t: self._on_lease_taken(run_id, t))
            leased = False
        else:
            leased = await self.leases.acquire(run_id, self.owner, self.config.lease_ttl)
            if leased:
                self._hold_lease(run_id)
        writer = playing.writer if playing is not None else None
        stream = engine.play(invocation)
        payloads = self._with_deadline(stream, invocation)
        try:
            async for payload in payloads:
                if ending is not None and payload.kind != "run.interrupted":
                    break  # after a suspension only further open questions may follow
                if writer is None or (writer.idle and payload.kind in TERMINAL_OR_SUSPENDING):
                    # (An ending with nothing ahead of it is awaited anyway: no writer needed.)
                    await self.append(run_id, [payload])
                else:
                    writer.push(payload)
                if payload.kind == "run.interrupted":
                    ending = payload  # several questions may open together: keep reading
                    continue
                if payload.kind in TERMINAL_OR_SUSPENDING:
                    ending = payload
                    break
                if budget is not None and isinstance(payload, UsageReported):
                    used = used + payload.usage
                    over = budget.exceeded_by(used)
                    if over is not None:
                        ending = RunFailed(
                            error_code=ErrorCode.BUDGET_EXCEEDED, message=over, retryable=False
                        )
                        if writer is not None:
                            await writer.flush()
                        await self.append(run_id, [ending], expect=(RunStatus.RUNNING,))
                        break
            if writer is not None:
                await writer.flush()
            if ending is None:
                await self.append_failure(
                    run_id,
                    ErrorCode.ENGINE_ERROR,
                    f"engine {engine.name!r} stopped without finishing the run",
                )
        except _DeadlinePassed:
            await _settle(writer)
            await self.append_failure(run_id, ErrorCode.DEADLINE, "the run's deadline passed")
        except asyncio.CancelledError:
            await _settle(writer)
            await self._record_cut(run_id)
            raise
        except AgentDeckError as exc:
            log.warning("run %s failed: %s", run_id, exc)
            await _settle(writer)
            await self.append_failure(run_id, ErrorCode.ENGINE_ERROR, type(exc).__name__)
        except Exception as exc:
            # The exception's text is not recorded: it may carry anything the engine saw.
            log.exception("run %s: engine %r raised", run_id, engine.name)
            await _settle(writer)
            await self.append_failure(run_id, ErrorCode.ENGINE_ERROR, type(exc).__name__)
        finally:
            # Closed here rather than left to the loop's async-generator finalizer, which would
            # schedule a task per generator through the loop's self-pipe. (try/except rather
            # than contextlib.suppress: this runs for every run.)
            try:
                if payloads is not stream:
                    await payloads.aclose()  # type: ignore[attr-defined]
                await stream.aclose()  # type: ignore[attr-defined]
            except Exception:
                pass
            if acquiring is not None:
                try:
                    leased = await acquiring
                except Exception:
                    leased = False
            if leased:
                self._leased.pop(run_id, None)
                if ending is not None and ending.kind in TERMINAL_KINDS:
                    self._release_later(run_id)  # a finished run is never played again
                else:
                    try:  # noqa: SIM105 - see above
                        await self.leases.release(run_id, self.owner)
                    except Exception:
                        pass
        if ending is not None and ending.kind in SUSPENDING:
            if not engine.capabilities.durable_suspend:
                self._parked[run_id] = _Parked(context=invocation.context)
            await self._act_on_parked(run_id, invocation.context)
            # Under -W error the warning raises; the run is parked either way.
            with contextlib.suppress(NonDurableStoreWarning):
                self._warn_if_not_durable(run_id)
            if isinstance(ending, RunPaused) and ending.waiting_on == WaitKind.CHILD_RUNS:
                await self._wake_if_children_ended(run_id, ending)
        elif ending is not None:
            self._forget(run_id)
            self._forget_signals_later(run_id)
            if ending.kind == "run.cancelled":
                await self._cascade_cancel(run_id, "parent run cancelled")
            if invocation.parent_run_id is not None:
                await self._wake_parent(invocation.parent_run_id, run_id)

    def _warn_if_not_durable(self, run_id: str) -> None:
        """Say once, loudly, that parked runs will not outlive this process."""
        if self.store.durable or self._warned_not_durable:
            return
        self._warned_not_durable = True
        warnings.warn(
            f"run {run_id} is parked on the non-durable event store {self.store.url!r}: it and "
            "every other parked run are lost when this process exits. Set AGENTDECK_STATE to a "
            "durable store (sqlite:///..., postgresql://..., redis://...) to keep them.",
            NonDurableStoreWarning,
            stacklevel=2,
        )
        log.warning("parked runs on %s will not survive this process", self.store.url)

    def _with_deadline(
        self, stream: AsyncIterator[Payload], invocation: Invocation
    ) -> AsyncIterator[Payload]:
        """``stream``, cut off at the run's deadline (``stream`` itself when it has none)."""
        started = invocation.history[0].payload if invocation.history else None
        deadline = started.deadline if isinstance(started, RunStarted) else None
        if deadline is None:
            return stream
        return self._until(stream, deadline)

    async def _until(
        self, stream: AsyncIterator[Payload], deadline: datetime
    ) -> AsyncIterator[Payload]:
        while True:
            remaining = (deadline - self.clock.now()).total_seconds()
            if remaining <= 0:
                raise _DeadlinePassed
            try:
                payload = await asyncio.wait_for(anext(stream), timeout=remaining)
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise _DeadlinePassed from None
            yield payload

    # A finished run leaves two things to tidy: control requests that arrived too late to be
    # acted on, and its lease. Neither is read again (every control verb on a finished run is a
    # no-op; a lease only matters while its run is running), so both are dropped shortly after,
    # together with those of the other runs that finished meanwhile: one ``forget`` for many
    # runs, and releases that a durable port commits together, rather than writes on every
    # run's way out that contend with the next runs' opens. The deck's close tidies what is left.

    def _forget_signals_later(self, run_id: str) -> None:
        self._ended[run_id] = None
        self._tidy_soon()

    def _release_later(self, run_id: str) -> None:
        self._unleased[run_id] = None
        self._tidy_soon()

    def _tidy_soon(self) -> None:
        if self._tidier is None or self._tidier.done():
            self._tidier = asyncio.create_task(self._tidy_in_batches(), name="tidy-finished-runs")

    async def _tidy_in_batches(self) -> None:
        while self._ended or self._unleased:
            await asyncio.sleep(TIDY_BATCH_SECONDS)
            await self._tidy()

    async def _tidy(self) -> None:
        ended, unleased = list(self._ended), list(self._unleased)
        self._ended.clear()
        self._unleased.clear()
        if ended:
            try:
                await self.control.forget(ended)
            except AgentDeckError:
                log.warning("dropping the control requests of %d run(s) failed", len(ended))
        if not unleased:
            return
        if self.leases.shared:  # I/O: issued together, so the port can commit them together
            outcomes = await asyncio.gather(
                *(self.leases.release(run_id, self.owner) for run_id in unleased),
                return_exceptions=True,
            )
            failed = sum(isinstance(outcome, BaseException) for outcome in outcomes)
        else:  # in this process: each is immediate, and a task apiece would cost more
            failed = 0
            for run_id in unleased:
                try:
                    await self.leases.release(run_id, self.owner)
                except Exception:
                    failed += 1
        if failed:
            log.warning("releasing the leases of %d finished run(s) failed", failed)

    def _on_lease_taken(self, run_id: str, acquiring: asyncio.Task[bool]) -> None:
        if not acquiring.cancelled() and acquiring.exception() is None and acquiring.result():
            self._hold_lease(run_id)

    def _hold_lease(self, run_id: str) -> None:
        """Keep ``run_id``'s lease renewed while it plays here.

        One renewer serves every run this process plays (a task per run would cost each run a
        task, a timer and a cancellation). Each lease is renewed at least once per
        ``lease_renew_every`` after it was taken, so it never gets closer to lapsing than the
        per-run schedule allowed.
        """
        self._leased[run_id] = None
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.create_task(self._renew_leases(), name="lease-renewer")

    async def _renew_leases(self) -> None:
        """Renew the leases of the runs playing here, every ``lease_renew_every``, until none
        is left (the next lease taken starts a new renewer)."""
        while self._leased:
            await self.clock.sleep(self.config.lease_renew_every)
            held = list(self._leased)
            outcomes = await asyncio.gather(
                *(self.leases.renew(run_id, self.owner, self.config.lease_ttl) for run_id in held),
                return_exceptions=True,
            )
            for run_id, renewed in zip(held, outcomes, strict=True):
                if run_id not in self._leased:
                    continue  # released while the renewal was in flight
                if isinstance(renewed, BaseException):
                    log.warning("run %s: lease renewal failed", run_id, exc_info=renewed)
                elif not renewed:
                    log.warning("run %s lost its lease", run_id)
                    del self._leased[run_id]  # as before: a lost lease is not renewed again

    async def _record_cut(self, run_id: str) -> None:
        """The play task was cancelled (the consumer walked away, or the deck closed)."""
        with contextlib.suppress(AgentDeckError):
            await self.append(
                run_id,
                [RunCancelled(reason="the run's caller went away")],
                expect=(RunStatus.RUNNING,),
            )

    def _checkpointer(self, run_id: str) -> Any:
        async def checkpoint(point: SafePoint) -> ControlDirective | None:
            playing = self._playing.get(run_id)
            generation = _control_generation[0]
            if playing is not None:
                if point is not SafePoint.STREAM_ITEM and playing.writer is not None:
                    # Side effects may follow (a tool, the next node): the log is complete
                    # before they start, so a crash in them leaves the call on record.
                    await playing.writer.flush()
                if point is SafePoint.STREAM_ITEM:
                    # Between stream items the port is read at most every CONTROL_RECHECK
                    # seconds: a request made in this process bumps the generation and is
                    # seen at once; one from another process (a shared port) within that.
                    seen, at = playing.control_checked
                    if seen == generation and time.monotonic() - at < CONTROL_RECHECK:
                        return None
            signals = await self.control.pending(run_id)
            if not signals:
                if playing is not None:
                    playing.control_checked = (generation, time.monotonic())
                return None
            for signal in signals:
                if signal.verb not in (ControlVerb.CANCEL, ControlVerb.PAUSE):
                    continue
                taken = await self.control.take(run_id, signal.verb)
                if taken is None:
                    continue
                return ControlDirective(
                    verb=taken.verb,
                    payloads=_control_payloads(taken.verb, taken.reason, point),
                )
            return None

        return checkpoint

    def _child_invoker(self, parent: Invocation) -> Any:
        """``invoke_child(name, input, *, key=None) -> result`` for the engine playing ``parent``.

        Starts ``name`` as a child run (the parent's namespace and context, ``parent_run_id``
        set) and returns its result as JSON data: a workflow's return value, an agent's final
        text or structured output. A ``key`` already claimed attaches to the run holding it, so a
        replay after a crash finds the same child instead of starting another. A child that fails
        or is cancelled raises ``RunFailedError``; one that parks raises ``RunSuspendedError`` —
        the parent then parks too, and is resumed here when the child ends.

        The closure holds the parent's fields, not the invocation that will hold the closure:
        a reference cycle per run would leave every run's invocation to the cyclic garbage
        collector instead of freeing it when the play ends.
        """
        context, namespace, parent_run_id, deltas = (
            parent.context,
            parent.namespace,
            parent.run_id,
            parent.deltas,
        )

        async def invoke_child(name: str, input: Any = None, *, key: str | None = None) -> Any:
            invocable = self.invocables.get(name)
            if invocable is None:
                raise NotFoundError(
                    f"no agent or workflow named {name!r}; available: "
                    + ", ".join(sorted(self.invocables)),
                    what="invocable",
                    name=name,
                    available=sorted(self.invocables),
                )
            blocks = self.engines[invocable.engine].prepare_input(invocable, input)
            try:
                record, _ = await self.start(
                    StartRequest(
                        invocable=invocable,
                        input=blocks,
                        context=context,
                        namespace=namespace,
                        parent_run_id=parent_run_id,
                        key=key,
                        deltas=deltas,
                    )
                )
                child_id = record.run_id
            except DuplicateKeyError as held:
                child_id = held.holder_run_id
            return await self.outcome(child_id, kind=invocable.kind)

        return invoke_child

    async def outcome(self, run_id: str, *, kind: str) -> Any:
        """Wait for a run to stop and return its result as JSON data, or raise why it has none."""
        ending = await self.played_ending(run_id)
        if ending is None:
            ending = await self._logged_ending(run_id)
        if ending is None:
            raise RunStateError(
                f"run '{run_id}' stopped without a final event", run_id=run_id, status=None
            )
        payload = ending.payload
        if isinstance(payload, RunCompleted):
            return agent_output(payload) if kind == "agent" else _json_result(payload)
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
        status = RunStatus.PAUSED if ending.kind == "run.paused" else RunStatus.WAITING_ANSWER
        raise RunSuspendedError(run_id=run_id, status=status)

    async def _logged_ending(self, run_id: str) -> Event | None:
        """The run's ending as its log tells it: its last event if it has stopped, else the
        next ending the log records."""
        record = await self._record(run_id)
        if record.status in TERMINAL or record.status in SUSPENDED:
            [ending] = await self.store.read(run_id, from_seq=record.last_seq)
            return ending
        async with closing(self.store.follow(run_id, from_seq=record.last_seq)) as log:
            async for event in log:
                if event.kind in TERMINAL_OR_SUSPENDING:
                    return event
        return None

    async def _wake_if_children_ended(self, run_id: str, paused: RunPaused) -> None:
        """Close the gap between a parent deciding to wait and its pause being recorded: a child
        that ended in between found the parent still running and could not wake it."""
        for child_id in paused.waiting_for:
            child = await self.store.get_run(child_id)
            if child is not None and child.status in TERMINAL:
                await self._wake_parent(run_id, child_id)
                return

    async def _wake_parent(self, parent_run_id: str, child_run_id: str) -> None:
        """A child ended: a parent paused waiting for it continues (if it still waits)."""
        parent = await self.store.get_run(parent_run_id)
        if parent is None or parent.status is not RunStatus.PAUSED:
            return
        last = await self.store.read(parent_run_id, from_seq=parent.last_seq, limit=1)
        paused = last[0].payload if last else None
        if (
            not isinstance(paused, RunPaused)
            or paused.waiting_on != WaitKind.CHILD_RUNS
            or child_run_id not in paused.waiting_for
        ):
            return
        with contextlib.suppress(RunStateError, ReplayError, NotFoundError):
            await self.resume(parent_run_id, reason=f"child run {child_run_id} ended")

    # ------------------------------------------------------------------------------- appending

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
                if event.kind in TERMINAL_OR_SUSPENDING:
                    playing.end(event)
                    break
        return events

    async def append_failure(self, run_id: str, code: ErrorCode, message: str) -> None:
        with contextlib.suppress(RunStateError):
            await self.append(
                run_id,
                [RunFailed(error_code=code, message=message, retryable=False)],
                expect=(RunStatus.RUNNING,),
            )

    async def _close_abandoned(self, run_id: str, code: ErrorCode, message: str) -> None:
        """Close a run whose worker is gone, in its own name. Losing the race is fine."""
        with contextlib.suppress(RunStateError, NotFoundError):
            await self.append(
                run_id,
                [RunFailed(error_code=code, message=message, retryable=True)],
                expect=(RunStatus.RUNNING,),
            )

    # ------------------------------------------------------------------------------- control

    async def request_control(self, run_id: str, verb: ControlVerb, reason: str | None) -> bool:
        """Record a pause or cancel; act at once if the run is (or just became) suspended."""
        record = await self._record(run_id)
        if record.status in TERMINAL:
            return True
        if verb is ControlVerb.PAUSE and record.status is RunStatus.PAUSED:
            return True
        await self.control.request(run_id, verb, reason)
        _control_generation[0] += 1
        if verb is ControlVerb.CANCEL:
            await self._act_on_parked(run_id, None)
            await self._cascade_cancel(run_id, reason or "parent run cancelled")
        return True

    async def _act_on_parked(self, run_id: str, context: Any) -> None:
        """A cancel pending on a suspended run ends it now (no safe point needed)."""
        record = await self.store.get_run(run_id)
        if record is None or record.status not in SUSPENDED:
            return
        signals = await self.control.pending(run_id)
        if not any(s.verb is ControlVerb.CANCEL for s in signals):
            return
        taken = await self.control.take(run_id, ControlVerb.CANCEL)
        if taken is None:
            return
        try:
            await self.append(
                run_id,
                _control_payloads(ControlVerb.CANCEL, taken.reason, SafePoint.SUSPENDED),
                expect=tuple(SUSPENDED),
            )
        except RunStateError:
            # It was resumed in between; the player acts on the cancel at its next safe point.
            await self.control.request(run_id, ControlVerb.CANCEL, taken.reason)
            _control_generation[0] += 1
            return
        self._forget(run_id)
        await self.control.forget([run_id])

    async def _cascade_cancel(self, run_id: str, reason: str) -> None:
        page = await self.store.list_runs(
            RunQuery(all_namespaces=True, parent_run_id=run_id, limit=1000)
        )
        for child in page.runs:
            if child.status not in TERMINAL:
                await self.request_control(child.run_id, ControlVerb.CANCEL, reason)

    async def resume(
        self, run_id: str, *, context: Any = None, reason: str = "resumed", play: bool = True
    ) -> bool:
        """Continue a paused run (conditional ``run.resumed``); returns whether this call won.

        On a waiting run it lifts a pending pause, and otherwise refuses (answer it instead).
        A pending pause on a running run is withdrawn; a pending cancel on a paused run ends it.

        ``play=False`` is for a process that has no engine for the run (the ``agentdeck``
        command without a project): a paused run is not continued here, the request is recorded
        as ``control.requested(verb="resume")`` and a deck that has the engine continues it at
        its next sweep (:meth:`sweep_once`).
        """
        record = await self._record(run_id)
        if record.status in TERMINAL:
            return False
        if record.status is RunStatus.RUNNING:
            await self.control.withdraw(run_id, ControlVerb.PAUSE)
            return False
        if record.status is RunStatus.WAITING_ANSWER:
            if await self.control.withdraw(run_id, ControlVerb.PAUSE):
                return False
            raise RunStateError(
                f"run '{run_id}' is waiting for an answer; continue it with run.answer(...)",
                run_id=run_id,
                status=record.status,
                accepted=(RunStatus.PAUSED,),
                hint="answer",
            )
        await self.control.withdraw(run_id, ControlVerb.PAUSE)
        if any(s.verb is ControlVerb.CANCEL for s in await self.control.pending(run_id)):
            await self._act_on_parked(run_id, context)
            return False
        if not play:
            await self.append(
                run_id,
                [ControlRequested(verb=ControlVerb.RESUME, reason=reason)],
                expect=(RunStatus.PAUSED,),
            )
            return False
        try:
            return await self._continue(
                run_id, [RunResumed(reason=reason)], entry=Entry.AFTER_PAUSE, context=context
            )
        except RunStateError:
            # The conditional run.resumed lost to another caller (a sweep, another process)
            # that continued or ended the run first: this call did not win, as documented.
            now = await self.store.get_run(run_id)
            if now is not None and now.status is not RunStatus.PAUSED:
                return False
            raise

    async def answer(
        self,
        run_id: str,
        interrupt_id: str,
        value: Any,
        *,
        context: Any = None,
        last: bool,
        expect_seq: int,
        play: bool = True,
    ) -> bool:
        """Record an accepted answer; when it closes the last open question, continue the run.

        ``play=False`` is for a process that has no engine for the run (the ``agentdeck``
        command without a project): the answer is recorded and nothing more, even when it closes
        the last question. The run stays ``waiting_answer`` with no open question until a deck
        that has the engine continues it at its next sweep (:meth:`sweep_once`).
        """
        payloads: list[Payload] = [AnswerRecorded(interrupt_id=interrupt_id, value=value)]
        if not last or not play:
            await self.append(
                run_id, payloads, expect=(RunStatus.WAITING_ANSWER,), expect_seq=expect_seq
            )
            return True
        payloads.append(RunResumed(reason="answered", interrupt_id=interrupt_id))
        return await self._continue(
            run_id, payloads, entry=Entry.ANSWERED, context=context, expect_seq=expect_seq
        )

    async def _continue(
        self,
        run_id: str,
        payloads: list[Payload],
        *,
        entry: Entry,
        context: Any,
        expect_seq: int | None = None,
    ) -> bool:
        history = await self.store.read(run_id)
        started = history[0].payload if history else None
        if not isinstance(started, RunStarted):
            raise NotFoundError(f"run '{run_id}' has no log", what="run", name=run_id)
        invocable = self.invocables.get(started.name)
        if invocable is None:
            raise ReplayError(
                f"run '{run_id}' was started from {started.name!r}, which this deck does not "
                "have, so it cannot be continued here",
                run_id=run_id,
                reason="unknown_invocable",
            )
        engine = self.engines[invocable.engine]
        parked = self._parked.get(run_id)
        if not engine.capabilities.durable_suspend and parked is None:
            raise ReplayError(
                f"run '{run_id}' was parked in memory by engine {engine.name!r} in a process "
                "that no longer holds it; this engine cannot continue a run from durable state",
                run_id=run_id,
                reason="parked_in_memory",
            )
        if (
            invocable.code_digest is not None
            and started.code_digest is not None
            and invocable.code_digest != started.code_digest
        ):
            raise ReplayError(
                f"run '{run_id}' started with different code for {started.name!r} than this "
                "deck has; replaying it against changed code could repeat or skip its steps",
                run_id=run_id,
                reason="code_changed",
            )
        events = await self.append(run_id, payloads, expect=tuple(SUSPENDED), expect_seq=expect_seq)
        if context is None:
            context = self._contexts.get(run_id)
        self._parked.pop(run_id, None)
        full = [*history, *events]
        answers: dict[str, Any] = {}
        for event in full:
            if isinstance(event.payload, AnswerRecorded):
                answers[event.payload.interrupt_id] = event.payload.value  # the last one counts
        first = full[0]
        self._launch(
            run_id,
            Invocation(
                run_id=run_id,
                invocable=invocable,
                input=list(started.input),
                entry=entry,
                context=context,
                session_id=first.session_id,
                namespace=first.namespace,
                parent_run_id=first.parent_run_id,
                answers=answers,
                history=tuple(full),
                clock=self.clock,
            ),
        )
        return True

    # ------------------------------------------------------------------------------- liveness

    async def sweep_once(self) -> None:
        """Close runs whose leases lapsed, wake paused runs whose timer is due, and continue
        runs another process answered or asked to resume without playing them."""
        for run_id in await self.leases.lapsed():
            if run_id in self._playing:
                continue
            record = await self.store.get_run(run_id)
            if record is not None and record.status is RunStatus.RUNNING:
                await self._close_abandoned(
                    run_id, ErrorCode.LEASE_EXPIRED, "the worker playing this run stopped renewing"
                )
        due = await self.store.list_runs(
            RunQuery(
                all_namespaces=True,
                status=RunStatus.PAUSED,
                wake_before=self.clock.now(),
                limit=100,
            )
        )
        for record in due.runs:
            with contextlib.suppress(RunStateError, ReplayError):
                await self.resume(record.run_id, reason="timer")
        await self._continue_owed()

    async def _continue_owed(self) -> None:
        """Continue the suspended runs a process without their engine answered or resumed, and
        the runs a closing deck paused.

        Such a process (``answer(..., play=False)``, ``resume(..., play=False)``) leaves the
        run suspended with its decision as the last event: ``answer.recorded`` closing the last
        open question, or ``control.requested(verb="resume")`` on a paused run. Listing
        suspended runs reads only the index; a run's last event is read only when this deck
        has its invocable and its log moved since a sweep here last looked, so a run parked for
        days costs one read per process. Between several decks the conditional append of
        ``run.resumed`` picks one.
        """
        if self._closed:
            return  # a closing deck admits no continuations
        checked: dict[str, int] = {}
        cursor: str | None = None
        while True:
            page = await self.store.list_runs(
                RunQuery(all_namespaces=True, status=SUSPENDED, limit=500, cursor=cursor)
            )
            for record in page.runs:
                if record.name not in self.invocables:
                    continue
                if self._owed_checked.get(record.run_id) == record.last_seq:
                    checked[record.run_id] = record.last_seq
                    continue
                try:
                    await self._continue_if_owed(record)
                except (RunStateError, ReplayError, NotFoundError) as refused:
                    log.warning("run %s cannot be continued here: %s", record.run_id, refused)
                except AgentDeckError:
                    log.warning("checking run %s failed", record.run_id, exc_info=True)
                    continue  # not marked checked: the next sweep tries again
                checked[record.run_id] = record.last_seq
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        self._owed_checked = checked

    async def _continue_if_owed(self, record: RunRecord) -> None:
        last = await self.store.read(record.run_id, from_seq=record.last_seq, limit=1)
        if not last:
            return
        payload = last[0].payload
        if record.status is RunStatus.PAUSED:
            if isinstance(payload, ControlRequested) and payload.verb == ControlVerb.RESUME:
                await self.resume(record.run_id, reason=payload.reason or "resumed")
            elif isinstance(payload, RunPaused) and payload.reason == CLOSING_PAUSE_REASON:
                # The pause was the closing deck's, not an operator's: a rolling restart or a
                # drained worker hands its live runs to whichever deck opens next.
                await self.resume(record.run_id, reason="continued after its deck closed")
            return
        if not isinstance(payload, AnswerRecorded):
            return
        state = fold(await self.store.read(record.run_id))
        if state.status is RunStatus.WAITING_ANSWER and not state.interrupts:
            await self._continue(
                record.run_id,
                [RunResumed(reason="answered", interrupt_id=payload.interrupt_id)],
                entry=Entry.ANSWERED,
                context=None,
                expect_seq=state.last_seq,
            )

    async def sweep_forever(self) -> None:
        """Sweep at once (a deck opening after a restart wakes what fell due meanwhile), then
        every ``sweep_interval`` seconds, for the deck's lifetime."""
        while True:
            try:
                await self.sweep_once()
            except Exception:
                log.exception("sweep failed")
            await self.clock.sleep(self.config.sweep_interval)

    # ------------------------------------------------------------------------------- reading

    async def _record(self, run_id: str) -> RunRecord:
        record = await self.store.get_run(run_id)
        if record is None:
            raise NotFoundError(f"no run with id '{run_id}'", what="run", name=run_id)
        return record

    def _forget(self, run_id: str) -> None:
        """Drop what this process held for a run that has ended."""
        self._parked.pop(run_id, None)
        self._budgets.pop(run_id, None)
        self._contexts.pop(run_id, None)

    def context_of(self, run_id: str) -> Any:
        """The live context this process holds for ``run_id`` (``None`` if it holds none)."""
        playing = self._playing.get(run_id)
        if playing is not None and playing.context is not None:
            return playing.context
        return self._contexts.get(run_id)

    async def played_ending(self, run_id: str) -> Event | None:
        """The next ending event (terminal or suspending) recorded for ``run_id`` while this
        process plays it -- what following its log from now on would find first.

        ``None`` at once when this process is not playing the run or its play has already
        recorded its ending (the run may have moved on since: the log says how it stands), and
        ``None`` when the play stops without an ending being recorded.
        """
        playing = self._playing.get(run_id)
        if playing is None or playing.ended:
            return None
        waiter: asyncio.Future[Event | None] = asyncio.get_running_loop().create_future()
        playing.waiters.append(waiter)
        try:
            return await waiter
        finally:
            if waiter.cancelled() and waiter in playing.waiters:
                playing.waiters.remove(waiter)

    async def wait_played(self, run_id: str) -> None:
        """Wait until this process stops playing ``run_id`` (returns at once if it is not)."""
        playing = self._playing.get(run_id)
        if playing is not None:
            await asyncio.shield(playing.task)


TIDY_BATCH_SECONDS = 0.05
"""How long finished runs' leftovers wait to be tidied together (a batching delay in real time,
not a timer of the run model: the injected clock does not govern it)."""

_NO_USAGE = Usage()

CONTROL_RECHECK = 0.02
"""Seconds between reads of a shared control port at ``stream_item`` safe points (see
``Runtime._checkpointer``): how late a pause or cancel made in *another* process can be seen by
a run that is streaming. A read per token would put a store round trip between every two."""

# Bumped by every control request made in this process (any deck): a playing run whose last
# read is older than the current generation reads its control port again at once.
_control_generation = [0]


async def _settle(writer: WriteBehind | None) -> None:
    """Let a play's writer finish before the play records its failure (its error is moot)."""
    if writer is not None:
        with contextlib.suppress(Exception):
            await writer.flush()


"""What a run has used before its first ``usage.reported`` (frozen, so shared)."""

TERMINAL_OR_SUSPENDING = frozenset(
    {"run.completed", "run.failed", "run.cancelled", "run.paused", "run.interrupted"}
)
SUSPENDING = frozenset({"run.paused", "run.interrupted"})


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


def new_run_id() -> str:
    """A fresh run id: what ``uuid.uuid4().hex`` gives (random, version 4).

    The randomness is drawn from ``os.urandom`` a few hundred ids at a time, with the version
    and variant bits set for the whole draw at once: a system call per run was a noticeable part
    of a short run's cost. A forked child drops the parent's draw, so no two processes hand out
    the same ids.
    """
    with _IDS.lock:
        at = _IDS.at
        if at >= len(_IDS.pool):
            _IDS.pool, at = _random_ids(), 0
        _IDS.at = at + 16
        return _IDS.pool[at : at + 16].hex()


_IDS_PER_DRAW = 256


def _random_ids() -> bytes:
    """``_IDS_PER_DRAW`` random 16-byte ids, each with the version-4 and RFC 4122 variant bits
    set as ``uuid.uuid4`` sets them."""
    raw = bytearray(os.urandom(16 * _IDS_PER_DRAW))
    raw[6::16] = bytes([(byte & 0x0F) | 0x40 for byte in raw[6::16]])
    raw[8::16] = bytes([(byte & 0x3F) | 0x80 for byte in raw[8::16]])
    return bytes(raw)


@dataclass(slots=True, eq=False)
class _IdPool:
    lock: threading.Lock = field(default_factory=threading.Lock)
    pool: bytes = b""
    at: int = 0

    def drop(self) -> None:
        self.lock = threading.Lock()  # a lock held in the parent at the fork stays held
        self.pool, self.at = b"", 0


_IDS = _IdPool()
os.register_at_fork(after_in_child=_IDS.drop)


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


def _json_result(completed: RunCompleted) -> Any:
    """A workflow child's result as JSON data (blocks become their JSON form)."""
    value = workflow_output(completed)
    if isinstance(value, list):
        return [block.model_dump(mode="json") for block in value]
    return value


class _DeadlinePassed(Exception):
    pass


class NonDurableStoreWarning(UserWarning):
    """A run parked on a store that will not outlive the process."""


def _control_payloads(
    verb: ControlVerb, reason: str | None, point: SafePoint
) -> tuple[Payload, ...]:
    ending: Payload = (
        RunCancelled(reason=reason) if verb is ControlVerb.CANCEL else RunPaused(reason=reason)
    )
    return (
        ControlRequested(verb=verb, reason=reason),
        ControlObserved(verb=verb, safe_point=point),
        ending,
    )
