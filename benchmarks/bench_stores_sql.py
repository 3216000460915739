"""SQLite and PostgreSQL store rows: each store against its raw driver, in one process.

SQLite rows use files in a temporary directory (``synchronous=NORMAL``, the store's default, on
both sides); PostgreSQL rows use a schema of their own on the local server
(``AGENTDECK_TEST_POSTGRES_URL``, else ``postgresql://postgres@127.0.0.1:5432/test``), dropped
when the process exits. Baselines write the same event JSON (serialized once, up front) with
the raw driver and the same number of commits, so a ratio is what the store adds: folding,
envelopes, conditional checks, the runs index, thread hops (SQLite) and pooling (PostgreSQL).

The issue's absolute budgets are rows of their own: appends per second with 100 runs appending
at once (``per_s``, the raw driver's rate beside it) and microseconds per event reading a
10,000-event run back (``us_op``, beside the raw driver fetching the same rows and
``json.loads``-ing each).

Under ``--smoke`` the populations are scaled down (1,000 runs instead of 10,000, 100 earlier
turns instead of 1,000, a 1,000-event run to read back) so that every row still runs, quickly;
the budgets hold for full runs.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import itertools
import json
import os
import secrets
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import psycopg

from agentdeck.model.clock import SystemClock
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunCompleted, RunInterrupted, TextDelta
from agentdeck.ports import BackendRequest, EventStore, RunQuery
from agentdeck.sqlite.events import READ_LOG
from agentdeck.sqlite.store import SqliteEventStore
from agentdeck.testing import new_run
from agentdeck.vocabulary import RunStatus
from agentdeck_stores.postgres import PostgresEventStore
from benchmarks import Pair, bench

_T = TypeVar("_T")

SMOKE = "--smoke" in sys.argv
CROWD = 1_000 if SMOKE else 10_000
TURNS = 100 if SMOKE else 1_000
READ_BACK = 1_000 if SMOKE else 10_000
SERVER = (
    os.environ.get("AGENTDECK_TEST_POSTGRES_URL") or "postgresql://postgres@127.0.0.1:5432/test"
)
_TOKEN = secrets.token_hex(4)
_names = itertools.count()
_PAYLOAD = TextDelta(message_id="m1", text="a token or two of model output")
_DIRECTORY = Path(tempfile.mkdtemp(prefix="agentdeck-bench-sqlite-"))
_SCHEMAS: list[str] = []


def _cleanup() -> None:
    shutil.rmtree(_DIRECTORY, ignore_errors=True)
    if not _SCHEMAS:
        return
    with contextlib.suppress(psycopg.Error), psycopg.connect(SERVER, autocommit=True) as conn:
        for schema in _SCHEMAS:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


atexit.register(_cleanup)


class _Loop:
    """One event loop per row; each timed call runs one coroutine to completion on it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.tasks: list[asyncio.Task[None]] = []
        self.closers: list[Callable[[], Awaitable[object]]] = []
        _LOOPS.append(self)

    def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        if self.tasks:
            self.run(asyncio.gather(*self.tasks, return_exceptions=True))
        for closer in self.closers:
            with contextlib.suppress(Exception):
                self.run(closer())
        self.loop.close()

    def run(self, awaitable: Awaitable[_T]) -> _T:
        async def wrapped() -> _T:
            return await awaitable

        return self.loop.run_until_complete(wrapped())

    def store(self, backend: str) -> EventStore:
        name = f"adk_bench_{_TOKEN}_{next(_names)}"
        store: EventStore
        if backend == "sqlite":
            store = SqliteEventStore.from_request(
                BackendRequest(url=f"sqlite:///{_DIRECTORY / name}.db")
            )
        else:
            _SCHEMAS.append(name)
            store = PostgresEventStore.from_request(BackendRequest(url=f"{SERVER}?schema={name}"))
        self.run(store.open())
        self.closers.append(store.close)
        return store


_LOOPS: list[_Loop] = []


def _close_loops() -> None:
    for loop in _LOOPS:
        loop.close()


atexit.register(_close_loops)  # runs before _cleanup (registered earlier)


def _open_runs(loop: _Loop, store: EventStore, count: int, **identity: Any) -> list[str]:
    async def opens() -> list[str]:
        ids: list[str] = []
        for start in range(0, count, 500):
            outcomes = await asyncio.gather(
                *(store.open_run(new_run(**identity)) for _ in range(min(500, count - start)))
            )
            ids.extend(outcome.event.run_id for outcome in outcomes if outcome.event)
        return ids

    return loop.run(opens())


def _event_json(seq: int, run_id: str = "run-raw") -> str:
    return Event.record(_PAYLOAD, seq=seq, run_id=run_id, ts=SystemClock().now()).to_json()


# =========================================================================== raw baselines


class _RawSqlite:
    """The raw driver doing what a batch of appends does: insert events, update runs, commit."""

    def __init__(self, runs: int) -> None:
        path = _DIRECTORY / f"raw_{_TOKEN}_{next(_names)}.db"
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")  # the store's default level
        self.conn.execute(
            "CREATE TABLE events (run_id TEXT, seq INTEGER, data TEXT, "
            "PRIMARY KEY (run_id, seq)) WITHOUT ROWID"
        )
        self.conn.execute("CREATE TABLE runs (run_id TEXT PRIMARY KEY, last_seq INTEGER)")
        self.runs = [f"raw-{n}" for n in range(runs)]
        self.conn.executemany("INSERT INTO runs VALUES (?, 0)", [(r,) for r in self.runs])
        self.data = _event_json(1)
        self.seqs = itertools.count(1)

    def append_all(self) -> None:
        seq = next(self.seqs)
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.executemany(
            "INSERT INTO events VALUES (?, ?, ?)", [(r, seq, self.data) for r in self.runs]
        )
        self.conn.executemany(
            "UPDATE runs SET last_seq = ? WHERE run_id = ?", [(seq, r) for r in self.runs]
        )
        self.conn.execute("COMMIT")


class _RawPostgres:
    """The same round trips with raw psycopg: one transaction of two ``executemany``."""

    def __init__(self, loop: _Loop, runs: int) -> None:
        schema = f"adk_bench_{_TOKEN}_raw{next(_names)}"
        _SCHEMAS.append(schema)
        self.conn: psycopg.AsyncConnection[Any] = loop.run(
            psycopg.AsyncConnection.connect(
                f"{SERVER}?options=-csearch_path%3D{schema}", autocommit=True
            )
        )
        loop.closers.append(self.conn.close)
        self.runs = [f"raw-{n}" for n in range(runs)]
        self.data = _event_json(1)
        self.seqs = itertools.count(1)

        async def setup() -> None:
            await self.conn.execute(f'CREATE SCHEMA "{schema}"')
            await self.conn.execute(
                "CREATE TABLE events (run_id text, seq int, data jsonb, PRIMARY KEY (run_id, seq))"
            )
            await self.conn.execute("CREATE TABLE runs (run_id text PRIMARY KEY, last_seq int)")
            async with self.conn.cursor() as cursor:
                await cursor.executemany(
                    "INSERT INTO runs VALUES (%s, 0)", [(r,) for r in self.runs]
                )

        loop.run(setup())

    async def append_all(self) -> None:
        seq = next(self.seqs)
        async with self.conn.transaction(), self.conn.cursor() as cursor:
            await cursor.executemany(
                "INSERT INTO events VALUES (%s, %s, %s::jsonb)",
                [(r, seq, self.data) for r in self.runs],
            )
            await cursor.executemany(
                "UPDATE runs SET last_seq = %s WHERE run_id = %s", [(seq, r) for r in self.runs]
            )


# =========================================================================== row builders


def _concurrent_appends(backend: str) -> Pair:
    loop = _Loop()
    store = loop.store(backend)
    runs = _open_runs(loop, store, 100)

    async def subject() -> None:
        await asyncio.gather(*(store.append(run_id, [_PAYLOAD]) for run_id in runs))

    if backend == "sqlite":
        raw_sqlite = _RawSqlite(100)
        return Pair(
            subject=lambda: loop.run(subject()), baseline=raw_sqlite.append_all, ops_per_call=100
        )
    raw_postgres = _RawPostgres(loop, 100)
    return Pair(
        subject=lambda: loop.run(subject()),
        baseline=lambda: loop.run(raw_postgres.append_all()),
        ops_per_call=100,
    )


def _append_latency_flat(backend: str) -> Pair:
    loop = _Loop()
    store = loop.store(backend)
    (late,) = _open_runs(loop, store, 1)

    async def grow() -> None:
        for _ in range(9):
            await store.append(late, [_PAYLOAD] * 1_000)

    loop.run(grow())
    early: list[str] = []
    appended = [0]

    def append_early() -> None:
        if not early or appended[0] >= 1_000:  # stay within a run's first 1,000 events
            early[:] = _open_runs(loop, store, 1)
            appended[0] = 0
        appended[0] += 1
        loop.run(store.append(early[0], [_PAYLOAD]))

    return Pair(subject=lambda: loop.run(store.append(late, [_PAYLOAD])), baseline=append_early)


def _crowd(loop: _Loop, backend: str, total: int, waiting: int) -> EventStore:
    store = loop.store(backend)
    runs = _open_runs(loop, store, total)

    async def park() -> None:
        await asyncio.gather(
            *(
                store.append(run_id, [RunInterrupted(interrupt_id="q")])
                for run_id in runs[:: total // waiting]
            )
        )

    loop.run(park())
    return store


def _list_waiting(backend: str) -> Pair:
    loop = _Loop()
    crowded, sparse = _crowd(loop, backend, CROWD, 10), _crowd(loop, backend, 100, 10)
    query = RunQuery(status=RunStatus.WAITING_ANSWER, limit=100)

    def listing(store: EventStore) -> Callable[[], object]:
        def run() -> object:
            page = loop.run(store.list_runs(query))
            assert len(page.runs) == 10, len(page.runs)
            return page

        return run

    return Pair(subject=listing(crowded), baseline=listing(sparse))


def _start_turn(backend: str) -> Pair:
    loop = _Loop()
    store = loop.store(backend)

    async def turns(session: str, count: int) -> None:
        for _ in range(count):
            outcome = await store.open_run(new_run(session_id=session))
            assert outcome.event is not None
            await store.append(outcome.event.run_id, [_PAYLOAD, RunCompleted()])

    loop.run(turns("long", TURNS))
    fresh = itertools.count()

    def turn(session: Callable[[], str]) -> Callable[[], None]:
        return lambda: loop.run(turns(session(), 1))

    return Pair(subject=turn(lambda: "long"), baseline=turn(lambda: f"fresh-{next(fresh)}"))


def _read_run(backend: str) -> Pair:
    """Read a ``READ_BACK``-event run back as Events vs the raw rows, each ``json.loads``-ed."""
    loop = _Loop()
    store = loop.store(backend)
    (run_id,) = _open_runs(loop, store, 1)
    for start in range(1, READ_BACK, 1_000):  # one seq 0 (run.started) and READ_BACK - 1 more
        loop.run(store.append(run_id, [_PAYLOAD] * min(1_000, READ_BACK - start)))

    def subject() -> object:
        events = loop.run(store.read(run_id))
        assert len(events) == READ_BACK, len(events)
        return events

    if isinstance(store, SqliteEventStore):
        conn = sqlite3.connect(store.path)

        def raw_sqlite() -> object:
            # The store's own statement (a row per event: its seq, time and payload, beside
            # its run's fields), each payload json.loads-ed.
            rows = conn.execute(READ_LOG, (run_id, 0)).fetchall()
            return [json.loads(row[2]) for row in rows]

        return Pair(subject=subject, baseline=raw_sqlite, ops_per_call=READ_BACK)
    select = (
        "SELECT data{cast} FROM agentdeck_events WHERE run_id = {mark} AND seq >= 0 ORDER BY seq"
    )
    raw: psycopg.AsyncConnection[Any] = loop.run(
        psycopg.AsyncConnection.connect(f"{SERVER}?options=-csearch_path%3D{_SCHEMAS[-1]}")
    )
    loop.closers.append(raw.close)
    pg_query = select.format(cast="::text", mark="%s")

    async def raw_postgres() -> object:
        cursor = await raw.execute(pg_query, (run_id,))
        return [json.loads(data) for (data,) in await cursor.fetchall()]

    return Pair(subject=subject, baseline=lambda: loop.run(raw_postgres()), ops_per_call=READ_BACK)


def _follow_latency(backend: str) -> Pair:
    loop = _Loop()
    store = loop.store(backend)
    (run_id,) = _open_runs(loop, store, 1)
    seen: asyncio.Queue[Event] = asyncio.Queue()

    async def follow() -> None:
        async for event in store.follow(run_id, from_seq=1):
            seen.put_nowait(event)

    loop.tasks.append(loop.loop.create_task(follow()))

    async def followed() -> None:
        (event,) = await store.append(run_id, [_PAYLOAD])
        while (await seen.get()).seq < event.seq:  # skip what the baseline's appends queued
            pass

    return Pair(
        subject=lambda: loop.run(followed()),
        baseline=lambda: loop.run(store.append(run_id, [_PAYLOAD])),
    )


# =========================================================================== the rows


@bench(
    "sqlite store: appends/s, 100 runs appending at once (vs raw sqlite3 executemany)",
    budget=5_000,
    unit="per_s",
)
def sqlite_concurrent_appends() -> Pair:
    """100 runs append one event each (group-committed) vs raw executemany of the same rows."""
    return _concurrent_appends("sqlite")


@bench(
    "postgres store: appends/s, 100 runs appending at once (vs raw psycopg executemany)",
    budget=5_000,
    unit="per_s",
)
def postgres_concurrent_appends() -> Pair:
    """100 runs append one event each (group-committed) vs raw executemany of the same rows."""
    return _concurrent_appends("postgresql")


@bench("sqlite store: append latency at 9,000+ events vs at under 1,000", budget=1.5)
def sqlite_append_latency_flat() -> Pair:
    """An append to a run 9,000+ events long vs one to a run under 1,000 (flat as it grows)."""
    return _append_latency_flat("sqlite")


@bench("postgres store: append latency at 9,000+ events vs at under 1,000", budget=1.5)
def postgres_append_latency_flat() -> Pair:
    """An append to a run 9,000+ events long vs one to a run under 1,000 (flat as it grows)."""
    return _append_latency_flat("postgresql")


@bench("sqlite store: list(status=WAITING_ANSWER), 10 among 10,000 vs among 100", budget=1.5)
def sqlite_list_waiting() -> Pair:
    """Listing the 10 waiting runs among 10,000 vs among 100: answered by the status index."""
    return _list_waiting("sqlite")


@bench("postgres store: list(status=WAITING_ANSWER), 10 among 10,000 vs among 100", budget=1.5)
def postgres_list_waiting() -> Pair:
    """Listing the 10 waiting runs among 10,000 vs among 100: answered by the status index."""
    return _list_waiting("postgresql")


@bench("sqlite store: a turn on a session with 1,000 earlier turns vs a fresh one", budget=1.5)
def sqlite_start_turn() -> Pair:
    """Open, append, complete on a session with 1,000 finished turns vs on a new session."""
    return _start_turn("sqlite")


@bench("postgres store: a turn on a session with 1,000 earlier turns vs a fresh one", budget=1.5)
def postgres_start_turn() -> Pair:
    """Open, append, complete on a session with 1,000 finished turns vs on a new session."""
    return _start_turn("postgresql")


@bench(
    "sqlite store: read a 10,000-event run back, per event (vs raw fetch + json.loads)",
    budget=10.0,
    unit="us_op",
)
def sqlite_read_run() -> Pair:
    """A 10,000-event run read back as Events vs raw fetchall + json.loads of each row."""
    return _read_run("sqlite")


@bench(
    "postgres store: read a 10,000-event run back, per event (vs raw fetch + json.loads)",
    budget=10.0,
    unit="us_op",
)
def postgres_read_run() -> Pair:
    """A 10,000-event run read back as Events vs raw fetchall + json.loads of each row."""
    return _read_run("postgresql")


@bench("sqlite store: follow latency beyond the append (in process)", budget=1_000.0, unit="us")
def sqlite_follow_latency() -> Pair:
    """Append and wait until a follower has the event, minus the append alone."""
    return _follow_latency("sqlite")


@bench("postgres store: follow latency beyond the append (in process)", budget=2_000.0, unit="us")
def postgres_follow_latency() -> Pair:
    """Append and wait until a follower has the event, minus the append alone."""
    return _follow_latency("postgresql")
