"""The in-memory event store: the default backend, and the reference the contract kit runs on.

Everything lives in one :class:`MemoryLog` (runs, their logs, the indexes, the engine-state
area). A :class:`MemoryEventStore` is a handle onto a log: ``memory://`` builds a handle onto a
fresh log, ``memory://<name>`` a handle onto the process-wide log of that name, so two decks (or
a deck and the CLI) in one process can share runs. Each handle has its own clock and its own
followers, so closing one deck's handle never ends another deck's streams.

Atomicity comes from doing every conditional write without an ``await`` in the middle, under a
``threading.Lock`` (uncontended, it costs well under a microsecond) so a named log shared by
decks on different threads stays consistent too. Followers park on futures that the append
itself resolves, on whichever event loop each follower runs: nothing polls.

Not durable and not shared across processes: a run parked here is lost with the process.
"""

from __future__ import annotations

import asyncio
import functools
from bisect import bisect_left, bisect_right
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from datetime import UTC, datetime
from typing import ClassVar

from agentdeck.errors import ConfigError, StoreError
from agentdeck.memory.log import (
    MemoryLog,
    MemoryRun,
    add,
    candidates,
    envelope,
    forget,
    named_log,
    ordinal,
    wake,
)
from agentdeck.model.clock import Clock, SystemClock, utc
from agentdeck.model.events import Event
from agentdeck.model.payloads import Payload
from agentdeck.model.status import FOLDED_KINDS, RunState, apply
from agentdeck.ports import (
    BackendRequest,
    EventStore,
    NewRun,
    OpenOutcome,
    PruneQuery,
    RunPage,
    RunQuery,
    RunRecord,
    Takeover,
)
from agentdeck.storage import (
    KNOWN_PAYLOADS,
    append_time,
    check_batch,
    checked_limit,
    checked_payloads,
    checked_started,
    decode_cursor,
    may_step_over,
    no_such_run,
    prunable,
    refuse_transition,
    run_filter,
    run_id_taken,
    run_page,
)
from agentdeck.vocabulary import TERMINAL, TERMINAL_KINDS, RunStatus

__all__ = ["MemoryEventStore", "instance_name", "read_only_error"]

SCHEME = "memory"

# =========================================================================== URLs


def instance_name(url: str) -> str | None:
    """The named instance ``url`` addresses (``memory://<name>``), or ``None`` for a fresh one.

    Raises :class:`ConfigError` for a URL of another scheme.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, sep, rest = url.partition(":")
    if scheme.lower() != SCHEME or not sep:
        raise ConfigError(
            f"{url!r} is not a memory URL; use 'memory://' for a fresh instance or "
            "'memory://<name>' for one shared by name within the process",
            accepted=["memory://", "memory://<name>"],
        )
    name = rest.strip("/")
    return name or None


def read_only_error(url: str, operation: str) -> StoreError:
    """What a write on a handle opened with ``BackendRequest(read_only=True)`` raises."""
    return StoreError(
        f"{operation} refused: this handle was opened read-only (a reader such as "
        "`agentdeck runs list` never writes); open it without read_only to write",
        backend="memory",
        url=url,
    )


_system_now = functools.partial(datetime.now, UTC)
"""What :meth:`SystemClock.now` returns, called without a Python frame."""


# =========================================================================== the store


class MemoryEventStore(EventStore):
    """An :class:`~agentdeck.ports.EventStore` held in this process's memory.

    Fast (a plain list per run, every index a dict) and exact, but neither durable nor shared
    across processes. ``name`` selects a process-wide instance; without one the store is private
    to this object.
    """

    durable: ClassVar[bool] = False
    shared: ClassVar[bool] = False

    def __init__(
        self,
        *,
        name: str | None = None,
        clock: Clock | None = None,
        url: str | None = None,
        read_only: bool = False,
    ) -> None:
        """``read_only``: every write raises :class:`~agentdeck.errors.StoreError`, and a name
        no log has yet reads as an empty log instead of creating one."""
        self.name = name
        self.url = url if url is not None else f"{SCHEME}://{name or ''}"
        self.read_only = read_only
        self._clock: Clock = clock if clock is not None else SystemClock()
        # The system clock read without its method call (every append reads the time).
        self._now: Callable[[], datetime] = (
            _system_now if type(self._clock) is SystemClock else self._clock.now
        )
        shared = named_log(name, create=not read_only) if name is not None else None
        self._log = shared if shared is not None else MemoryLog()
        self._closed = False
        self._parked: set[asyncio.Future[None]] = set()

    @classmethod
    def from_request(cls, request: BackendRequest) -> MemoryEventStore:
        """The factory the ``memory`` scheme registers: ``memory://`` or ``memory://<name>``."""
        return cls(
            name=instance_name(request.url),
            clock=request.clock,
            url=request.url,
            read_only=request.read_only,
        )

    async def close(self) -> None:
        """End this handle's followers. The data stays (a named log outlives its handles)."""
        self._closed = True
        parked, self._parked = self._parked, set()
        wake(parked)

    # -- opening runs -------------------------------------------------------------------------

    async def open_run(self, new: NewRun, *, takeover: Takeover | None = None) -> OpenOutcome:
        if self.read_only:
            raise read_only_error(self.url, "opening a run")
        started = checked_started(new)
        namespace, session_id, key = new.namespace, new.session_id, new.key
        log = self._log
        with log.lock:
            if new.run_id in log.runs:
                raise run_id_taken(new.run_id, log.runs[new.run_id].state.status)
            stepped_over: MemoryRun | None = None
            if session_id is not None:
                holder_id = log.sessions.get((namespace, session_id))
                holder = log.runs.get(holder_id) if holder_id is not None else None
                if holder is not None and holder.state.status not in TERMINAL:
                    if may_step_over(holder.run_id, holder.status, holder.last_ts, takeover):
                        stepped_over = holder
                    else:
                        return OpenOutcome(busy=holder.record())
            if key is not None:
                key_holder = log.keys.get((namespace, key))
                if key_holder is not None:
                    return OpenOutcome(key_holder=log.runs[key_holder].record())
            ts = utc(self._now())
            event = envelope(
                started, 0, new.run_id, ts, session_id, namespace, new.parent_run_id, started.name
            )
            state = apply(RunState(), event)
            assert state.status is not None
            run = MemoryRun(
                run_id=new.run_id,
                ordinal=log.next_ordinal,
                name=started.name,
                invocable_kind=started.invocable_kind,
                namespace=namespace,
                session_id=session_id,
                key=key,
                parent_run_id=new.parent_run_id,
                created_at=ts,
                events=[event],
                state=state,
                last_seq=0,
                last_ts=ts,
            )
            log.next_ordinal += 1
            run_id = run.run_id
            log.runs[run_id] = run
            add(log.by_namespace, namespace, run_id)
            log.by_status[state.status].add(run_id)
            add(log.by_name, run.name, run_id)
            if run.parent_run_id is not None:
                add(log.by_parent, run.parent_run_id, run_id)
            if session_id is not None:
                add(log.by_session, (namespace, session_id), run_id)
                log.sessions[(namespace, session_id)] = run_id
            if key is not None:
                log.keys[(namespace, key)] = run.run_id
            stepped_record = stepped_over.record() if stepped_over is not None else None
            waiters = log.waiters.pop(run.run_id, None) if log.waiters else None
        if waiters:
            wake(waiters)
        return OpenOutcome(event=event, stepped_over=stepped_record)

    # -- appending ----------------------------------------------------------------------------

    async def append(
        self,
        run_id: str,
        payloads: Sequence[Payload],
        *,
        expect: Collection[RunStatus] | None = None,
        expect_seq: int | None = None,
    ) -> list[Event]:
        if self.read_only:
            raise read_only_error(self.url, "appending")
        if expect is None and expect_seq is None and len(payloads) == 1:
            payload = payloads[0]
            if type(payload) in KNOWN_PAYLOADS and payload.kind not in FOLDED_KINDS:
                # One unconditional payload that changes no status (a delta, a tool call, a
                # report: nearly every event of a run). It moves only the run's last seq and
                # time: its status, open questions and timer stay as they are, so neither the
                # fold nor the status and wake indexes need it. (In line rather than a method of
                # its own: this is the store's hottest path.)
                log = self._log
                with log.lock:
                    run = log.runs.get(run_id)
                    if run is None:
                        raise no_such_run(run_id)
                    status = run.state.status
                    if status is None or status in TERMINAL:
                        raise refuse_transition(run_id, status, status, payload.kind, 0)
                    ts = self._now()
                    if ts.tzinfo is not UTC:
                        ts = utc(ts)
                    last_ts = run.last_ts
                    if ts < last_ts:
                        ts = last_ts  # a run's times never go backwards, whatever the clock does
                    seq = run.last_seq + 1
                    event = envelope(
                        payload,
                        seq,
                        run_id,
                        ts,
                        run.session_id,
                        run.namespace,
                        run.parent_run_id,
                        run.name,
                    )
                    events = run.events
                    assert events is not None  # a run's log is packed only once it has ended
                    events.append(event)
                    run.last_seq, run.last_ts = seq, ts
                    waiters = log.waiters.pop(run_id, None) if log.waiters else None
                if waiters:
                    wake(waiters)
                return [event]
        checked = checked_payloads(payloads)
        log = self._log
        with log.lock:
            run = log.runs.get(run_id)
            if run is None:
                raise no_such_run(run_id)
            state = run.state
            before = state.status
            check_batch(run_id, before, run.last_seq, checked, expect=expect, expect_seq=expect_seq)
            if not checked:
                return []
            ts = append_time(self._now(), run.last_ts)
            seq = run.last_seq + 1
            recorded: list[Event] = []
            namespace, session_id, parent, origin = (
                run.namespace,
                run.session_id,
                run.parent_run_id,
                run.name,
            )
            for payload in checked:
                event = envelope(payload, seq, run_id, ts, session_id, namespace, parent, origin)
                state = apply(state, event)
                recorded.append(event)
                seq += 1
            assert run.events is not None  # a run's log is packed only once it has ended
            run.events.extend(recorded)
            run.state = state
            run.last_seq, run.last_ts = seq - 1, ts
            after = state.status
            if after is not before:
                assert before is not None and after is not None
                log.by_status[before].discard(run_id)
                log.by_status[after].add(run_id)
            if state.wake_at is not None:
                log.waking.add(run_id)
            elif run_id in log.waking:
                log.waking.discard(run_id)
            waiters = log.waiters.pop(run_id, None) if log.waiters else None
        if after in TERMINAL:
            # Nothing is appended after a terminal event, so the log is final: packed (with the
            # batch this completes), it costs the garbage collector nothing.
            log.packer.add(run.pack)
        if waiters:
            wake(waiters)
        return recorded

    # -- reading ------------------------------------------------------------------------------

    async def read(
        self, run_id: str, *, from_seq: int = 0, limit: int | None = None
    ) -> list[Event]:
        run = self._log.runs.get(run_id)
        if run is None:
            return []
        start = max(0, from_seq)
        return run.read(start, None if limit is None else start + max(0, limit))

    async def follow(self, run_id: str, *, from_seq: int = 0) -> AsyncIterator[Event]:
        log = self._log
        position = max(0, from_seq)
        loop = asyncio.get_running_loop()
        while not self._closed:
            run = log.runs.get(run_id)
            if run is not None:
                events = run.events  # a run ending meanwhile leaves this list complete
                if events is None:  # it had ended: its packed log, to the terminal event
                    for event in run.read(position, None):
                        yield event
                    return
                while position < len(events):
                    event = events[position]
                    position += 1
                    yield event
                    if event.kind in TERMINAL_KINDS:
                        return
                if run.state.status in TERMINAL:
                    return  # already finished, and from_seq is past its last event
            future: asyncio.Future[None] = loop.create_future()
            with log.lock:
                current = log.runs.get(run_id)
                if current is not None and (current.last_seq >= position or current is not run):
                    continue  # written while we looked: no need to park
                log.waiters.setdefault(run_id, set()).add(future)
            self._parked.add(future)
            try:
                await future
            finally:
                self._parked.discard(future)
                with log.lock:
                    parked = log.waiters.get(run_id)
                    if parked is not None:
                        parked.discard(future)
                        if not parked:
                            del log.waiters[run_id]

    async def get_run(self, run_id: str) -> RunRecord | None:
        run = self._log.runs.get(run_id)
        return run.record() if run is not None else None

    async def find_key(self, namespace: str | None, key: str) -> RunRecord | None:
        log = self._log
        with log.lock:
            run_id = log.keys.get((namespace, key))
            run = log.runs.get(run_id) if run_id is not None else None
            return run.record() if run is not None else None

    async def list_runs(self, query: RunQuery) -> RunPage:
        limit = checked_limit(query)
        after = decode_cursor(SCHEME, query.cursor) if query.cursor is not None else -1
        matches = run_filter(query)
        log = self._log
        with log.lock:
            runs: Sequence[MemoryRun] = candidates(log, query)
            if query.newest_first:
                if after >= 0:
                    runs = runs[: bisect_left(runs, after, key=ordinal)]
                runs = runs[::-1]
            elif after >= 0:
                runs = runs[bisect_right(runs, after, key=ordinal) :]
            return run_page(
                filter(matches, runs),
                limit,
                scheme=SCHEME,
                ordinal=ordinal,
                record=MemoryRun.record,
            )

    # -- pruning ------------------------------------------------------------------------------

    async def prune(self, query: PruneQuery) -> int:
        if self.read_only:
            raise read_only_error(self.url, "pruning")
        statuses = prunable(query)
        log = self._log
        removed = 0
        with log.lock:
            candidates = sorted(
                (log.runs[run_id] for status in statuses for run_id in log.by_status[status]),
                key=ordinal,
            )
            finished_before = (
                utc(query.finished_before) if query.finished_before is not None else None
            )
            for run in candidates:
                if query.limit is not None and removed >= query.limit:
                    break
                if not query.all_namespaces and run.namespace != query.namespace:
                    continue
                last = run.last_ts
                if finished_before is not None and last >= finished_before:
                    continue
                forget(log, run)
                removed += 1
        return removed

    # -- engine state -------------------------------------------------------------------------

    async def put_state(self, run_id: str, name: str, value: bytes) -> None:
        if self.read_only:
            raise read_only_error(self.url, "writing engine state")
        data = bytes(value)
        with self._log.lock:
            self._log.engine_state.setdefault(run_id, {})[name] = data

    async def get_state(self, run_id: str, name: str) -> bytes | None:
        return self._log.engine_state.get(run_id, {}).get(name)

    async def delete_state(self, run_id: str, name: str) -> None:
        if self.read_only:
            raise read_only_error(self.url, "deleting engine state")
        log = self._log
        with log.lock:
            area = log.engine_state.get(run_id)
            if area is not None:
                area.pop(name, None)
                if not area:
                    del log.engine_state[run_id]
