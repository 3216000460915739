"""Playing a run: asking its engine for one payload at a time and recording each.

A play is one task per run (:meth:`Player.launch`). It persists every payload before it is
handed to the observers -- in line with the memory store, written behind the engine in bursts
with a durable one (:mod:`agentdeck.runtime.write_behind`), and flushed before anything that
needs the log complete: the play's ending, a safe point where side effects may follow, the end
of the play. After a suspending payload the play ends -- except that further
``run.interrupted`` payloads may follow, one per question opened together.

The engine is handed a **checkpointer** (its safe points: where a pending pause or cancel is
taken and turned into the payloads that end the play), the run's engine-state area, the clock
and a child-run invoker. A deadline cuts the play off; a usage budget fails it at the event that
crosses it; an engine that raises or stops without an ending fails the run (its exception's
text is never recorded). What happens once the play stops -- a parked run acted on, a finished
run tidied, its children cancelled, its parent woken -- closes :meth:`Player._play`.

This is the runtime's hot path: per run it costs one task and no callback (see
``test_runtime_hot_path.py``); per event one append and one observer hand-off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from agentdeck.errors import AgentDeckError
from agentdeck.model.clock import Clock
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    Payload,
    RunCancelled,
    RunFailed,
    RunPaused,
    RunStarted,
    Usage,
    UsageReported,
)
from agentdeck.ports import (
    ControlDirective,
    Engine,
    EngineStateArea,
    Entry,
    EventStore,
    Invocation,
    Suspension,
)
from agentdeck.runtime.config import Budget, NonDurableStoreWarning
from agentdeck.runtime.control import ControlRequests, RunControl, control_payloads
from agentdeck.runtime.held import HeldRuns, Parked, Playing
from agentdeck.runtime.liveness import Liveness
from agentdeck.runtime.recording import Recorder
from agentdeck.runtime.write_behind import WriteBehind
from agentdeck.vocabulary import (
    ENDING_KINDS,
    SUSPENDING_KINDS,
    TERMINAL_KINDS,
    ControlVerb,
    ErrorCode,
    RunStatus,
    SafePoint,
    WaitKind,
)

__all__ = ["CLOSING_PAUSE_REASON", "CONTROL_RECHECK", "ChildRunHooks", "Player"]

log = logging.getLogger("agentdeck.runtime")

CLOSING_PAUSE_REASON = "deck closing"
"""The reason a closing deck pauses the runs it is still playing. The pause is the deck's, not
an operator's, so the sweep of the next deck that opens with the run's invocable continues it."""

CONTROL_RECHECK = 0.02
"""Seconds between reads of a control port at ``stream_item`` safe points: how late a pause or
cancel made through another port object (another process) can be seen by a run that is
streaming. Requests counted by this runtime's handle are seen at once
(:mod:`agentdeck.runtime.control`)."""

_NO_USAGE = Usage()
"""What a run has used before its first ``usage.reported`` (frozen, so shared)."""


class ChildRunHooks(Protocol):
    """What a play needs of child runs (:mod:`agentdeck.runtime.children` implements it)."""

    def invoker(self, parent: Invocation) -> Callable[..., Awaitable[Any]]:
        """The ``invoke_child`` handed to the engine playing ``parent``."""
        ...

    async def child_ended(self, parent_run_id: str, child_run_id: str) -> None:
        """A child's play ended its run: continue its parent if that waits for it."""
        ...

    async def parent_paused(self, run_id: str, paused: RunPaused) -> None:
        """A run paused waiting for child runs: continue it if one ended meanwhile."""
        ...


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


class _DeadlinePassed(Exception):
    pass


class Player:
    """Plays runs for one runtime: a task per play, tracked in :class:`HeldRuns`."""

    children: ChildRunHooks
    """Set by the runtime once child runs are built (they start runs through this player)."""

    def __init__(
        self,
        *,
        store: EventStore,
        engines: Mapping[str, Engine],
        clock: Clock,
        recorder: Recorder,
        held: HeldRuns,
        liveness: Liveness,
        control: RunControl,
        requests: ControlRequests,
    ) -> None:
        self.store = store
        self.engines = engines
        self.clock = clock
        self.recorder = recorder
        self.held = held
        self.liveness = liveness
        self.control = control
        self.requests = requests
        # Bound once here rather than per run: a play's hot path allocates nothing of its own.
        self._append = recorder.append
        self._playing = held.playing
        self._leased = liveness.leased
        self._count = requests.count
        self.leases = liveness.leases
        self.owner = liveness.owner
        self.lease_ttl = liveness.config.lease_ttl
        self._warned_not_durable = False

    # ------------------------------------------------------------------------------- launching

    def launch(self, run_id: str, invocation: Invocation, budget: Budget | None = None) -> None:
        """Start playing ``invocation`` in a task of its own (the caller does not wait)."""
        invocation.checkpoint = self._checkpointer(run_id)
        invocation.state = _StateArea(self.store, run_id)
        invocation.clock = self.clock
        invocation.invoke_child = self.children.invoker(invocation)
        held = self.held
        if invocation.context is not None:
            held.contexts[run_id] = invocation.context
        if budget is None:
            budget = _recorded_budget(invocation.history)
        playing = Playing(context=invocation.context, budget=budget)
        invocation.keep_suspended = self._keeper(run_id, playing)
        if self.store.durable:
            # A durable append is a commit or a round trip: persisted behind the engine, in
            # bursts (see agentdeck.runtime.write_behind). The memory store's append is cheaper
            # than the task a writer needs, so it stays in line.
            append = self._append
            playing.writer = WriteBehind(
                lambda batch: append(run_id, batch), name=f"run-writer:{run_id}"
            )
        playing.task = asyncio.get_running_loop().create_task(
            self._play(invocation, budget), name=f"run:{run_id}"
        )
        if invocation.entry is Entry.FRESH:
            # Nobody can have asked to pause or cancel a run before it was opened just now: its
            # first stream_item safe points need no read (see _checkpointer).
            playing.control_checked = (self._count.value, time.monotonic())
        self._playing[run_id] = playing

    def _keeper(self, run_id: str, playing: Playing) -> Callable[[Suspension], None]:
        """``Invocation.keep_suspended`` for one play: held at once, before the engine yields
        the parking payloads, so a continuation that follows their record finds it."""
        held = self.held

        def keep(suspension: Suspension) -> None:
            playing.kept = suspension
            held.keep(run_id, suspension)

        return keep

    def _played(self, run_id: str, playing: Playing | None) -> None:
        """A play ended: drop it (unless a newer play of the run replaced it already) and
        release whoever waits for an ending it never recorded.

        Called as the play's last act rather than from a done callback, which would cost every
        run a callback scheduled on the loop; a play task cancelled before it ever ran is seen
        to by :meth:`stop`, the only place that cancels one.
        """
        if playing is None:
            return
        if self._playing.get(run_id) is playing:
            del self._playing[run_id]
        playing.end(playing.interrupted)

    async def stop(self, *, grace: float) -> None:
        """Ask every play in flight to pause at its next safe point, then cut the rest."""
        playing = list(self._playing.items())
        requested: list[str] = []
        for run_id, _ in playing:
            with contextlib.suppress(AgentDeckError):
                if await self.requests.request(run_id, ControlVerb.PAUSE, CLOSING_PAUSE_REASON):
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
                await self.requests.port.withdraw(run_id, ControlVerb.PAUSE)

    # ------------------------------------------------------------------------------- playing

    async def _play(self, invocation: Invocation, budget: Budget | None = None) -> None:
        run_id = invocation.run_id
        playing = self._playing.get(run_id)
        parked = False
        try:
            ending = await self._play_through(invocation, playing, budget)
            if ending is None:
                return
            # What the ending leaves behind (in line, not a call of its own: this is every run).
            if ending.kind in SUSPENDING_KINDS:
                parked = True
                if not self.engines[invocation.invocable.engine].capabilities.durable_suspend:
                    self.held.parked[run_id] = Parked(context=invocation.context)
                await self.control.act_on_parked(run_id)
                # Under -W error the warning raises; the run is parked either way.
                with contextlib.suppress(NonDurableStoreWarning):
                    self._warn_if_not_durable(run_id)
                if isinstance(ending, RunPaused) and ending.waiting_on == WaitKind.CHILD_RUNS:
                    await self.children.parent_paused(run_id, ending)
                return
            self.held.forget(run_id)
            self.liveness.forget_signals_later(run_id)
            if ending.kind == "run.cancelled":
                await self.control.cascade_cancel(run_id, "parent run cancelled")
            if invocation.parent_run_id is not None:
                await self.children.child_ended(invocation.parent_run_id, run_id)
        except Exception as exc:
            # Said once, here: nothing awaits a play task, so an exception left in it would
            # surface only as "Task exception was never retrieved". Most likely the store is
            # unreachable and the run's ending could not be written; the run is then left
            # `running` with no lease, and a deck's sweep closes it within one lease TTL of the
            # store answering again (Liveness.close_unleased).
            log.warning(
                "run %s: its play stopped without recording how it ended: %s",
                run_id,
                exc,
                exc_info=not isinstance(exc, AgentDeckError),
            )
        finally:
            if not parked and playing is not None and playing.kept is not None:
                # The play did not end parked after all: nothing to continue from memory.
                self.held.release(run_id, only=playing.kept)
                playing.kept.discard()
            self._played(run_id, playing)

    async def _play_through(
        self, invocation: Invocation, playing: Playing | None, budget: Budget | None
    ) -> Payload | None:
        """Play and record until the engine stops; the ending recorded (``None``: none)."""
        run_id = invocation.run_id
        # The budget caps the run's whole usage: a continuation starts from what it used so far.
        used = _NO_USAGE if budget is None else _usage_in(invocation.history)
        engine = self.engines[invocation.invocable.engine]
        append = self._append
        ending: Payload | None = None
        acquiring: asyncio.Task[bool] | None = None
        if self.leases.shared:
            acquiring = self.liveness.acquire_alongside(run_id)
            leased = False
        else:
            leased = await self.leases.acquire(run_id, self.owner, self.lease_ttl)
            if leased:
                self.liveness.hold(run_id)
        writer = playing.writer if playing is not None else None
        stream = engine.play(invocation)
        payloads = self._with_deadline(stream, invocation)
        try:
            async for payload in payloads:
                if ending is not None and payload.kind != "run.interrupted":
                    break  # after a suspension only further open questions may follow
                if writer is None or (writer.idle and payload.kind in ENDING_KINDS):
                    # (An ending with nothing ahead of it is awaited anyway: no writer needed.)
                    await append(run_id, [payload])
                else:
                    writer.push(payload)
                if payload.kind == "run.interrupted":
                    ending = payload  # several questions may open together: keep reading
                    continue
                if payload.kind in ENDING_KINDS:
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
                        await append(run_id, [ending], expect=(RunStatus.RUNNING,))
                        break
            if writer is not None:
                await writer.flush()
            if ending is None:
                await self.recorder.append_failure(
                    run_id,
                    ErrorCode.ENGINE_ERROR,
                    f"engine {engine.name!r} stopped without finishing the run",
                )
        except _DeadlinePassed:
            await _settle(writer)
            await self.recorder.append_failure(
                run_id, ErrorCode.DEADLINE, "the run's deadline passed"
            )
        except asyncio.CancelledError:
            await _settle(writer)
            await self._record_cut(run_id)
            raise
        except AgentDeckError as exc:
            log.warning("run %s failed: %s", run_id, exc)
            await _settle(writer)
            await self.recorder.append_failure(run_id, ErrorCode.ENGINE_ERROR, type(exc).__name__)
        except Exception as exc:
            # The exception's text is not recorded: it may carry anything the engine saw.
            log.exception("run %s: engine %r raised", run_id, engine.name)
            await _settle(writer)
            await self.recorder.append_failure(run_id, ErrorCode.ENGINE_ERROR, type(exc).__name__)
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
                self._leased.pop(run_id, None)  # no longer renewed
                if ending is not None and ending.kind in TERMINAL_KINDS:
                    self.liveness.release_later(run_id)  # a finished run is never played again
                else:
                    try:  # noqa: SIM105 - see above
                        await self.leases.release(run_id, self.owner)
                    except Exception:
                        pass
        return ending

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

    async def _record_cut(self, run_id: str) -> None:
        """The play task was cancelled (the consumer walked away, or the deck closed)."""
        with contextlib.suppress(AgentDeckError):
            await self.recorder.append(
                run_id,
                [RunCancelled(reason="the run's caller went away")],
                expect=(RunStatus.RUNNING,),
            )

    # ------------------------------------------------------------------------------- deadline

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

    # ------------------------------------------------------------------------------- safe points

    def _checkpointer(
        self, run_id: str
    ) -> Callable[[SafePoint], Awaitable[ControlDirective | None]]:
        async def checkpoint(point: SafePoint) -> ControlDirective | None:
            playing = self._playing.get(run_id)
            generation = self._count.value
            if playing is not None:
                if point is not SafePoint.STREAM_ITEM and playing.writer is not None:
                    # Side effects may follow (a tool, the next node): the log is complete
                    # before they start, so a crash in them leaves the call on record.
                    await playing.writer.flush()
                if point is SafePoint.STREAM_ITEM:
                    # Between stream items the port is read at most every CONTROL_RECHECK
                    # seconds: a request counted since the last read is seen at once, one made
                    # through another port object within that (see agentdeck.runtime.control).
                    seen, at = playing.control_checked
                    if seen == generation and time.monotonic() - at < CONTROL_RECHECK:
                        return None
            port = self.requests.port
            signals = await port.pending(run_id)
            if not signals:
                if playing is not None:
                    playing.control_checked = (generation, time.monotonic())
                return None
            for signal in signals:
                if signal.verb not in (ControlVerb.CANCEL, ControlVerb.PAUSE):
                    continue
                taken = await port.take(run_id, signal.verb)
                if taken is None:
                    continue
                return ControlDirective(
                    verb=taken.verb,
                    payloads=control_payloads(taken.verb, taken.reason, point),
                )
            return None

        return checkpoint


async def _settle(writer: WriteBehind | None) -> None:
    """Let a play's writer finish before the play records its failure (its error is moot)."""
    if writer is not None:
        with contextlib.suppress(Exception):
            await writer.flush()


def _recorded_budget(history: Sequence[Event]) -> Budget | None:
    """The budget a run was started with, from its ``run.started`` (first in its log)."""
    started = history[0].payload if history else None
    return started.budget if isinstance(started, RunStarted) else None


def _usage_in(history: Sequence[Event]) -> Usage:
    """The usage ``history`` reports, summed."""
    used = _NO_USAGE
    for event in history:
        if isinstance(event.payload, UsageReported):
            used = used + event.payload.usage
    return used
