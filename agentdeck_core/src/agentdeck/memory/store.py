"""The in-memory event store: the default backend, and the reference the contract kit runs on.

Everything lives in one :class:`_MemoryLog` (runs, their logs, the indexes, the engine-state
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
import base64
import binascii
import contextlib
import functools
import threading
from bisect import bisect_left, bisect_right
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar

from agentdeck.errors import (
    ConfigError,
    EventSchemaError,
    InvalidInputError,
    NotFoundError,
    RunStateError,
)
from agentdeck.memory.packed import Packed, Packer, pack, unpack
from agentdeck.model.clock import Clock, SystemClock, utc
from agentdeck.model.events import Event, parse_payload, record_unchecked
from agentdeck.model.payloads import (
    PAYLOAD_TYPES,
    Payload,
    RunStarted,
    UnknownEvent,
    payload_type,
)
from agentdeck.model.status import (
    FOLDED_KINDS,
    RunState,
    apply,
    is_transition_allowed,
    next_status,
)
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
from agentdeck.vocabulary import TERMINAL, TERMINAL_KINDS, RunStatus

__all__ = ["MemoryEventStore", "instance_name"]

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


# =========================================================================== envelopes

_envelope = record_unchecked
"""Every envelope this store builds: the one :meth:`Event.record` would, without checking its
parts again -- each is the store's own (a payload model checked on its way in, its seq, its
clock's UTC time, the run's fields), which makes an append several times cheaper."""


# =========================================================================== the shared log


@dataclass(slots=True, eq=False)
class _Run:
    run_id: str
    ordinal: int
    name: str
    invocable_kind: str
    namespace: str | None
    session_id: str | None
    key: str | None
    parent_run_id: str | None
    created_at: datetime
    events: list[Event] | None
    """The log while the run is live; ``None`` once it has ended and its log is packed."""
    state: RunState
    """The fold as of the run's last lifecycle event or answer: its status, open questions
    and timer. (Its ``last_seq`` and ``last_ts`` lag behind content events: read the run's.)"""
    last_seq: int
    last_ts: datetime
    """The run's last event, kept here so that a content event, which changes nothing else,
    costs no new fold state."""
    packed: Packed | None = None
    """A finished run's log (see :mod:`agentdeck.memory.packed`)."""

    def read(self, start: int, stop: int | None) -> list[Event]:
        """The run's events in ``[start, stop)`` (``stop`` ``None``: to the end)."""
        events = self.events
        if events is not None:
            return events[start:stop]
        packed = self.packed
        assert packed is not None  # set before `events` is cleared
        run_id, session_id, namespace, parent = (
            self.run_id,
            self.session_id,
            self.namespace,
            self.parent_run_id,
        )
        origin = self.name
        return [
            _envelope(payload, seq, run_id, ts, session_id, namespace, parent, origin)
            for seq, ts, payload in unpack(packed, start, stop)
        ]

    def pack(self) -> None:
        """Keep the log of a run that has ended packed (see :mod:`agentdeck.memory.packed`).

        A follower or reader holding the live list reads on from it: it is replaced, never
        changed."""
        events = self.events
        if events is not None:
            self.packed = pack(events)
            self.events = None  # after `packed` is set: a reader finds one or the other

    def record(self) -> RunRecord:
        state = self.state
        assert state.status is not None
        return RunRecord(
            run_id=self.run_id,
            name=self.name,
            invocable_kind=self.invocable_kind,
            status=state.status,
            created_at=self.created_at,
            updated_at=self.last_ts,
            last_seq=self.last_seq,
            namespace=self.namespace,
            session_id=self.session_id,
            key=self.key,
            parent_run_id=self.parent_run_id,
            wake_at=state.wake_at,
        )


_Scoped = tuple[str | None, str]
"""A ``(namespace, name)`` pair: how keys and sessions are claimed."""


@dataclass(slots=True, eq=False)
class _MemoryLog:
    """All the data of one memory store; shared by every handle onto it."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    runs: dict[str, _Run] = field(default_factory=dict)
    next_ordinal: int = 0
    # Indexes. Those keyed by identity are insertion-ordered dicts (runs are only ever added in
    # ordinal order, so they stay sorted); the status and wake indexes are sets, sorted on use.
    by_namespace: dict[str | None, dict[str, None]] = field(default_factory=dict)
    by_status: dict[RunStatus, set[str]] = field(
        default_factory=lambda: {status: set() for status in RunStatus}
    )
    by_session: dict[_Scoped, dict[str, None]] = field(default_factory=dict)
    by_name: dict[str, dict[str, None]] = field(default_factory=dict)
    by_parent: dict[str, dict[str, None]] = field(default_factory=dict)
    waking: set[str] = field(default_factory=set)
    keys: dict[_Scoped, str] = field(default_factory=dict)
    """Permanent ``(namespace, key)`` claims (released only by prune)."""
    sessions: dict[_Scoped, str] = field(default_factory=dict)
    """The run that last claimed each ``(namespace, session)``; it holds it while not terminal."""
    engine_state: dict[str, dict[str, bytes]] = field(default_factory=dict)
    waiters: dict[str, set[asyncio.Future[None]]] = field(default_factory=dict)
    """Followers parked per run id (also before the run exists), resolved by the next write."""
    packer: Packer = field(default_factory=Packer)
    """Packs finished runs' logs, a batch at a time."""


_NAMED: dict[str, _MemoryLog] = {}
_NAMED_LOCK = threading.Lock()


def _named_log(name: str) -> _MemoryLog:
    with _NAMED_LOCK:
        log = _NAMED.get(name)
        if log is None:
            log = _NAMED[name] = _MemoryLog()
        return log


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _wake(waiters: Iterable[asyncio.Future[None]]) -> None:
    """Resolve parked followers, each on its own loop (a named log may serve several)."""
    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    for future in waiters:
        if future.done():
            continue
        loop = future.get_loop()
        if loop is running:
            future.set_result(None)
        else:
            with contextlib.suppress(RuntimeError):  # a closed loop took its follower with it
                loop.call_soon_threadsafe(_resolve, future)


# =========================================================================== cursors


def _encode_cursor(ordinal: int) -> str:
    return base64.urlsafe_b64encode(f"memory:{ordinal}".encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        prefix, _, number = raw.partition(":")
        if prefix != SCHEME:
            raise ValueError(prefix)
        return int(number)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidInputError(
            f"cursor {cursor!r} was not issued by this store; pass a RunPage.next_cursor "
            "from an earlier list_runs call, or None for the first page",
            field="cursor",
        ) from None


# =========================================================================== errors


def _accepting(kind: str) -> list[RunStatus]:
    """The statuses in which an event of ``kind`` may be appended."""
    return [status for status in RunStatus if is_transition_allowed(status, kind)]


def _no_such_run(run_id: str) -> NotFoundError:
    return NotFoundError(
        f"run '{run_id}' is not in this store (never opened here, or pruned)",
        what="run",
        name=run_id,
    )


def _refuse_transition(
    run_id: str, status: RunStatus | None, at: RunStatus | None, kind: str, position: int
) -> RunStateError:
    """The refusal of ``kind`` at ``position`` of a batch, reaching it in status ``at``.

    ``status`` (the error's field) is the run's recorded status, which the refusal leaves as it
    was; the message also names the status the batch itself would have reached.
    """
    within = (
        f" (the batch's earlier events would leave it {at.value})"
        if at is not None and at is not status
        else ""
    )
    shown = status.value if status is not None else "not started"
    if at is not None and at in TERMINAL:
        message = (
            f"run '{run_id}' is {shown}{within}: nothing is appended after a terminal event "
            f"(refused '{kind}' at position {position} of the batch); nothing was recorded"
        )
    else:
        accepted = ", ".join(s.value for s in _accepting(kind)) or "nowhere"
        message = (
            f"run '{run_id}' is {shown}{within}: '{kind}' is not a designed transition from "
            f"there (accepted from: {accepted}); nothing was recorded"
        )
    return RunStateError(message, run_id=run_id, status=status, accepted=_accepting(kind))


_KNOWN_PAYLOADS = frozenset(PAYLOAD_TYPES)
_system_now = functools.partial(datetime.now, UTC)
"""What :meth:`SystemClock.now` returns, called without a Python frame."""


def _as_payload(payload: Any) -> Any:
    """``payload`` as a validated payload model (dicts are parsed; models are checked)."""
    if isinstance(payload, UnknownEvent):
        if payload_type(payload.kind) is not None:
            raise EventSchemaError(
                f"an UnknownEvent cannot carry the known kind {payload.kind!r}; "
                f"build a {payload_type(payload.kind).__name__} instead",  # type: ignore[union-attr]
                kind=payload.kind,
            )
        return payload
    if isinstance(payload, dict):
        return parse_payload(payload)
    kind = getattr(payload, "kind", None)
    expected = payload_type(kind) if isinstance(kind, str) else None
    if expected is None or type(payload) is not expected:
        raise EventSchemaError(
            f"{type(payload).__name__} is not an event payload; append payload models from "
            "agentdeck.model.payloads (TextDelta, RunCompleted, ...)",
            kind=kind if isinstance(kind, str) else None,
        )
    return payload


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
        self, *, name: str | None = None, clock: Clock | None = None, url: str | None = None
    ) -> None:
        self.name = name
        self.url = url if url is not None else f"{SCHEME}://{name or ''}"
        self._clock: Clock = clock if clock is not None else SystemClock()
        # The system clock read without its method call (every append reads the time).
        self._now: Callable[[], datetime] = (
            _system_now if type(self._clock) is SystemClock else self._clock.now
        )
        self._log = _named_log(name) if name is not None else _MemoryLog()
        self._closed = False
        self._parked: set[asyncio.Future[None]] = set()

    @classmethod
    def from_request(cls, request: BackendRequest) -> MemoryEventStore:
        """The factory the ``memory`` scheme registers: ``memory://`` or ``memory://<name>``."""
        return cls(name=instance_name(request.url), clock=request.clock, url=request.url)

    async def close(self) -> None:
        """End this handle's followers. The data stays (a named log outlives its handles)."""
        self._closed = True
        parked, self._parked = self._parked, set()
        _wake(parked)

    # -- opening runs -------------------------------------------------------------------------

    async def open_run(self, new: NewRun, *, takeover: Takeover | None = None) -> OpenOutcome:
        started = new.started
        if not isinstance(started, RunStarted):
            raise EventSchemaError(
                f"NewRun.started must be a RunStarted payload, not {type(started).__name__}",
                kind=getattr(started, "kind", None),
            )
        namespace, session_id, key = new.namespace, new.session_id, new.key
        log = self._log
        with log.lock:
            if new.run_id in log.runs:
                existing = log.runs[new.run_id]
                raise RunStateError(
                    f"run id '{new.run_id}' is already taken; mint a fresh id for every run",
                    run_id=new.run_id,
                    status=existing.state.status,
                )
            stepped_over: _Run | None = None
            if session_id is not None:
                holder_id = log.sessions.get((namespace, session_id))
                holder = log.runs.get(holder_id) if holder_id is not None else None
                if holder is not None and holder.state.status not in TERMINAL:
                    if self._may_step_over(holder, takeover):
                        stepped_over = holder
                    else:
                        return OpenOutcome(busy=holder.record())
            if key is not None:
                key_holder = log.keys.get((namespace, key))
                if key_holder is not None:
                    return OpenOutcome(key_holder=log.runs[key_holder].record())
            ts = utc(self._now())
            event = _envelope(
                started, 0, new.run_id, ts, session_id, namespace, new.parent_run_id, started.name
            )
            state = apply(RunState(), event)
            assert state.status is not None
            run = _Run(
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
            _add(log.by_namespace, namespace, run_id)
            log.by_status[state.status].add(run_id)
            _add(log.by_name, run.name, run_id)
            if run.parent_run_id is not None:
                _add(log.by_parent, run.parent_run_id, run_id)
            if session_id is not None:
                _add(log.by_session, (namespace, session_id), run_id)
                log.sessions[(namespace, session_id)] = run_id
            if key is not None:
                log.keys[(namespace, key)] = run.run_id
            stepped_record = stepped_over.record() if stepped_over is not None else None
            waiters = log.waiters.pop(run.run_id, None) if log.waiters else None
        if waiters:
            _wake(waiters)
        return OpenOutcome(event=event, stepped_over=stepped_record)

    @staticmethod
    def _may_step_over(holder: _Run, takeover: Takeover | None) -> bool:
        """A running holder may be displaced if its lease is dead or its last event is stale."""
        if takeover is None or holder.state.status is not RunStatus.RUNNING:
            return False
        if holder.run_id in takeover.dead_run_ids:
            return True
        return takeover.stale_before is not None and holder.last_ts < utc(takeover.stale_before)

    # -- appending ----------------------------------------------------------------------------

    async def append(
        self,
        run_id: str,
        payloads: Sequence[Payload],
        *,
        expect: Collection[RunStatus] | None = None,
        expect_seq: int | None = None,
    ) -> list[Event]:
        if expect is None and expect_seq is None and len(payloads) == 1:
            payload = payloads[0]
            if type(payload) in _KNOWN_PAYLOADS and payload.kind not in FOLDED_KINDS:
                # One unconditional payload that changes no status (a delta, a tool call, a
                # report: nearly every event of a run). It moves only the run's last seq and
                # time: its status, open questions and timer stay as they are, so neither the
                # fold nor the status and wake indexes need it. (In line rather than a method of
                # its own: this is the store's hottest path.)
                log = self._log
                with log.lock:
                    run = log.runs.get(run_id)
                    if run is None:
                        raise _no_such_run(run_id)
                    status = run.state.status
                    if status is None or status in TERMINAL:
                        raise _refuse_transition(run_id, status, status, payload.kind, 0)
                    ts = self._now()
                    if ts.tzinfo is not UTC:
                        ts = utc(ts)
                    last_ts = run.last_ts
                    if ts < last_ts:
                        ts = last_ts  # a run's times never go backwards, whatever the clock does
                    seq = run.last_seq + 1
                    event = _envelope(
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
                    _wake(waiters)
                return [event]
        checked: Sequence[Any] = payloads
        for payload in payloads:
            if type(payload) not in _KNOWN_PAYLOADS:
                checked = [_as_payload(payload) for payload in payloads]
                break
        log = self._log
        with log.lock:
            run = log.runs.get(run_id)
            if run is None:
                raise _no_such_run(run_id)
            state = run.state
            before = state.status
            if expect is not None and before not in expect:
                raise RunStateError(
                    f"run '{run_id}' is {before.value if before else 'not started'}, not "
                    f"{' or '.join(sorted(s.value for s in expect)) or 'any status'} as the "
                    "append expected; nothing was recorded",
                    run_id=run_id,
                    status=before,
                    accepted=sorted(expect),
                )
            if expect_seq is not None and run.last_seq != expect_seq:
                raise RunStateError(
                    f"run '{run_id}' has moved on: its last seq is {run.last_seq}, not "
                    f"{expect_seq} as the append expected; nothing was recorded",
                    run_id=run_id,
                    status=before,
                )
            status = before
            for position, payload in enumerate(checked):
                kind = payload.kind
                if not is_transition_allowed(status, kind):
                    raise _refuse_transition(run_id, before, status, kind, position)
                status = next_status(status, kind)
            if not checked:
                return []
            ts = self._now()
            if ts.tzinfo is not UTC:
                ts = utc(ts)
            if ts < run.last_ts:
                ts = run.last_ts  # a run's times never go backwards, whatever the wall clock does
            seq = run.last_seq + 1
            recorded: list[Event] = []
            namespace, session_id, parent, origin = (
                run.namespace,
                run.session_id,
                run.parent_run_id,
                run.name,
            )
            for payload in checked:
                event = _envelope(payload, seq, run_id, ts, session_id, namespace, parent, origin)
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
            _wake(waiters)
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
        if query.limit < 1:
            raise InvalidInputError(
                f"list_runs limit must be at least 1, not {query.limit}", field="limit"
            )
        after = _decode_cursor(query.cursor) if query.cursor is not None else -1
        log = self._log
        with log.lock:
            candidates: Sequence[_Run] = self._candidates(query)
            if query.newest_first:
                if after >= 0:
                    candidates = candidates[: bisect_left(candidates, after, key=_ordinal)]
                candidates = candidates[::-1]
            elif after >= 0:
                candidates = candidates[bisect_right(candidates, after, key=_ordinal) :]
            matched: list[RunRecord] = []
            last_ordinal = -1
            more = False
            for run in candidates:
                if not _matches(run, query):
                    continue
                if len(matched) == query.limit:
                    more = True
                    break
                matched.append(run.record())
                last_ordinal = run.ordinal
        return RunPage(runs=matched, next_cursor=_encode_cursor(last_ordinal) if more else None)

    def _candidates(self, query: RunQuery) -> list[_Run]:
        """The runs of the narrowest index the query names, in ordinal order."""
        log = self._log
        ordered: list[Collection[str]] = []
        unordered: list[Collection[str]] = []
        if query.key is not None:
            if query.all_namespaces:
                unordered.append(
                    [run_id for (_, key), run_id in log.keys.items() if key == query.key]
                )
            else:
                holder = log.keys.get((query.namespace, query.key))
                unordered.append([holder] if holder is not None else [])
        if query.session_id is not None:
            if query.all_namespaces:
                unordered.append(
                    [
                        run_id
                        for (_, session), runs in log.by_session.items()
                        if session == query.session_id
                        for run_id in runs
                    ]
                )
            else:
                ordered.append(log.by_session.get((query.namespace, query.session_id), {}))
        statuses = query.statuses()
        if statuses is not None:
            unordered.append(
                [run_id for status in statuses for run_id in log.by_status.get(status, ())]
            )
        if query.wake_before is not None:
            unordered.append(log.waking)
        if query.name is not None:
            ordered.append(log.by_name.get(query.name, {}))
        if query.parent_run_id is not None:
            ordered.append(log.by_parent.get(query.parent_run_id, {}))
        if not query.all_namespaces:
            ordered.append(log.by_namespace.get(query.namespace, {}))
        runs = log.runs
        if not ordered and not unordered:
            return list(runs.values())  # every run, already in ordinal order
        smallest_ordered = min(ordered, key=_size, default=None)
        smallest_unordered = min(unordered, key=_size, default=None)
        if smallest_unordered is not None and (
            smallest_ordered is None or _size(smallest_unordered) < _size(smallest_ordered)
        ):
            return sorted((runs[run_id] for run_id in smallest_unordered), key=_ordinal)
        assert smallest_ordered is not None
        return [runs[run_id] for run_id in smallest_ordered]

    # -- pruning ------------------------------------------------------------------------------

    async def prune(self, query: PruneQuery) -> int:
        statuses = frozenset(query.statuses) & TERMINAL
        log = self._log
        removed = 0
        with log.lock:
            candidates = sorted(
                (log.runs[run_id] for status in statuses for run_id in log.by_status[status]),
                key=_ordinal,
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
                self._forget(run)
                removed += 1
        return removed

    def _forget(self, run: _Run) -> None:
        log = self._log
        run_id = run.run_id
        del log.runs[run_id]
        _drop(log.by_namespace, run.namespace, run_id)
        _drop(log.by_name, run.name, run_id)
        if run.parent_run_id is not None:
            _drop(log.by_parent, run.parent_run_id, run_id)
        if run.state.status is not None:
            log.by_status[run.state.status].discard(run_id)
        log.waking.discard(run_id)
        if run.session_id is not None:
            scoped = (run.namespace, run.session_id)
            _drop(log.by_session, scoped, run_id)
            if log.sessions.get(scoped) == run_id:
                del log.sessions[scoped]
        if run.key is not None and log.keys.get((run.namespace, run.key)) == run_id:
            del log.keys[(run.namespace, run.key)]
        log.engine_state.pop(run_id, None)

    # -- engine state -------------------------------------------------------------------------

    async def put_state(self, run_id: str, name: str, value: bytes) -> None:
        data = bytes(value)
        with self._log.lock:
            self._log.engine_state.setdefault(run_id, {})[name] = data

    async def get_state(self, run_id: str, name: str) -> bytes | None:
        return self._log.engine_state.get(run_id, {}).get(name)

    async def delete_state(self, run_id: str, name: str) -> None:
        log = self._log
        with log.lock:
            area = log.engine_state.get(run_id)
            if area is not None:
                area.pop(name, None)
                if not area:
                    del log.engine_state[run_id]


# =========================================================================== helpers


def _ordinal(run: _Run) -> int:
    return run.ordinal


def _size(ids: Collection[str]) -> int:
    return len(ids)


def _add(index: dict[Any, dict[str, None]], bucket: Any, run_id: str) -> None:
    # Not ``setdefault(bucket, {})``: that builds an empty dict on every call, bucket or not.
    runs = index.get(bucket)
    if runs is None:
        index[bucket] = {run_id: None}
    else:
        runs[run_id] = None


def _drop(index: dict[Any, dict[str, None]], bucket: Any, run_id: str) -> None:
    runs = index.get(bucket)
    if runs is not None:
        runs.pop(run_id, None)
        if not runs:
            del index[bucket]


def _matches(run: _Run, query: RunQuery) -> bool:
    """Every filter of ``query``, checked against the indexed record (never the log)."""
    if not query.all_namespaces and run.namespace != query.namespace:
        return False
    statuses = query.statuses()
    state = run.state
    if statuses is not None and state.status not in statuses:
        return False
    if query.session_id is not None and run.session_id != query.session_id:
        return False
    if query.key is not None and run.key != query.key:
        return False
    if query.name is not None and run.name != query.name:
        return False
    if query.parent_run_id is not None and run.parent_run_id != query.parent_run_id:
        return False
    if query.created_after is not None and not run.created_at > utc(query.created_after):
        return False
    if query.created_before is not None and not run.created_at < utc(query.created_before):
        return False
    if query.updated_before is not None and not run.last_ts < utc(query.updated_before):
        return False
    return query.wake_before is None or (
        state.wake_at is not None and state.wake_at < utc(query.wake_before)
    )
