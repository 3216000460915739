"""The shared log behind every memory store handle: runs, their logs, the indexes and followers.

One :class:`MemoryLog` holds all the data of one memory store (``memory://<name>`` shares one
per process by name); :class:`MemoryRun` is one run in it. Everything here is called with the
log's lock held, except :func:`wake`, which resolves parked followers on their own loops and is
called after the lock is released. :mod:`agentdeck.memory.store` is the port on top of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agentdeck.memory.packed import Packed, Packer, pack, unpack
from agentdeck.model.events import Event, record_unchecked
from agentdeck.model.status import RunState
from agentdeck.ports import RunQuery, RunRecord
from agentdeck.storage import record_of
from agentdeck.vocabulary import RunStatus

__all__ = [
    "MemoryLog",
    "MemoryRun",
    "add",
    "candidates",
    "drop",
    "envelope",
    "forget",
    "named_log",
    "ordinal",
    "wake",
]

# =========================================================================== envelopes

envelope = record_unchecked
"""Every envelope this store builds: the one :meth:`Event.record` would, without checking its
parts again -- each is the store's own (a payload model checked on its way in, its seq, its
clock's UTC time, the run's fields), which makes an append several times cheaper."""


# =========================================================================== the shared log


@dataclass(slots=True, eq=False)
class MemoryRun:
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

    @property
    def status(self) -> RunStatus | None:
        return self.state.status

    @property
    def updated_at(self) -> datetime:
        return self.last_ts

    @property
    def wake_at(self) -> datetime | None:
        return self.state.wake_at

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
            envelope(payload, seq, run_id, ts, session_id, namespace, parent, origin)
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
        return record_of(self)


_Scoped = tuple[str | None, str]
"""A ``(namespace, name)`` pair: how keys and sessions are claimed."""


@dataclass(slots=True, eq=False)
class MemoryLog:
    """All the data of one memory store; shared by every handle onto it."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    runs: dict[str, MemoryRun] = field(default_factory=dict)
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


_NAMED: dict[str, MemoryLog] = {}
_NAMED_LOCK = threading.Lock()


def named_log(name: str, *, create: bool = True) -> MemoryLog | None:
    """The process-wide log called ``name``; made on first use unless ``create`` is false
    (a read-only handle reads what exists and makes nothing)."""
    with _NAMED_LOCK:
        log = _NAMED.get(name)
        if log is None and create:
            log = _NAMED[name] = MemoryLog()
        return log


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def wake(waiters: Iterable[asyncio.Future[None]]) -> None:
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


# =========================================================================== indexes


def candidates(log: MemoryLog, query: RunQuery) -> list[MemoryRun]:
    """The runs of the narrowest index the query names, in ordinal order."""
    ordered: list[Collection[str]] = []
    unordered: list[Collection[str]] = []
    if query.key is not None:
        if query.all_namespaces:
            unordered.append([run_id for (_, key), run_id in log.keys.items() if key == query.key])
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
        return sorted((runs[run_id] for run_id in smallest_unordered), key=ordinal)
    assert smallest_ordered is not None
    return [runs[run_id] for run_id in smallest_ordered]


def forget(log: MemoryLog, run: MemoryRun) -> None:
    run_id = run.run_id
    del log.runs[run_id]
    drop(log.by_namespace, run.namespace, run_id)
    drop(log.by_name, run.name, run_id)
    if run.parent_run_id is not None:
        drop(log.by_parent, run.parent_run_id, run_id)
    if run.state.status is not None:
        log.by_status[run.state.status].discard(run_id)
    log.waking.discard(run_id)
    if run.session_id is not None:
        scoped = (run.namespace, run.session_id)
        drop(log.by_session, scoped, run_id)
        if log.sessions.get(scoped) == run_id:
            del log.sessions[scoped]
    if run.key is not None and log.keys.get((run.namespace, run.key)) == run_id:
        del log.keys[(run.namespace, run.key)]
    log.engine_state.pop(run_id, None)


def ordinal(run: MemoryRun) -> int:
    return run.ordinal


def _size(ids: Collection[str]) -> int:
    return len(ids)


def add(index: dict[Any, dict[str, None]], bucket: Any, run_id: str) -> None:
    # Not ``setdefault(bucket, {})``: that builds an empty dict on every call, bucket or not.
    runs = index.get(bucket)
    if runs is None:
        index[bucket] = {run_id: None}
    else:
        runs[run_id] = None


def drop(index: dict[Any, dict[str, None]], bucket: Any, run_id: str) -> None:
    runs = index.get(bucket)
    if runs is not None:
        runs.pop(run_id, None)
        if not runs:
            del index[bucket]
