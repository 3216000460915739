"""Scale by design: the lookups that must not scan are answered from indexes.

Each test fills a store through its own API (2,000 runs, a few of them waiting, many turns on
one session, keys), has the database gather statistics (``ANALYZE``), and asks the planner how
it would run the exact statements the store issues: listing by status, finding a session's
holder (what starting a turn reads -- never the session's older logs), finding a key, listing
a session, the timer sweep and reading a log.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agentdeck.model.clock import ManualClock
from agentdeck.model.payloads import RunCompleted, RunInterrupted, RunPaused
from agentdeck.ports import BackendRequest, EventStore, NewRun, RunQuery
from agentdeck.sqlite.events import READ_LOG
from agentdeck.sqlite.store import SqliteEventStore
from agentdeck.sqlite.writer import KEY_HOLDER, SESSION_HOLDER
from agentdeck.storage.sql import AppendJob, OpenJob, list_sql, ns_key, to_micros
from agentdeck.testing import new_run
from agentdeck.testing.fixtures import PostgresSchema
from agentdeck.vocabulary import RunStatus
from agentdeck_stores.postgres import PostgresEventStore, lock_rows_sql

RUNS = 2_000
WAITING = 10
TURNS = 200
"""Finished turns on the session that starting a new turn must not read."""


async def _populate(store: EventStore, clock: ManualClock) -> None:
    """2,000 runs in namespace ``crowd``, each on a session of its own (the live ones hold it):
    10 waiting, 1 timer, keys on every tenth run, and 200 finished turns on session ``busy``
    followed by one running turn."""

    async def one(n: int) -> None:
        key = f"order-{n}" if n % 10 == 0 else None
        outcome = await store.open_run(new_run(namespace="crowd", session_id=f"s{n}", key=key))
        assert outcome.event is not None
        run_id = outcome.event.run_id
        if n % (RUNS // WAITING) == 7:
            await store.append(run_id, [RunInterrupted(interrupt_id="q")])
        elif n == 3:
            await store.append(run_id, [RunPaused(wake_at=clock.now() + timedelta(hours=1))])
        elif n % 3:
            await store.append(run_id, [RunCompleted()])

    for start in range(0, RUNS, 250):
        await asyncio.gather(*(one(n) for n in range(start, min(RUNS, start + 250))))
    for _ in range(TURNS):
        outcome = await store.open_run(new_run(namespace="crowd", session_id="busy"))
        assert outcome.event is not None
        await store.append(outcome.event.run_id, [RunCompleted()])
    assert (await store.open_run(new_run(namespace="crowd", session_id="busy"))).opened


def _queries(
    clock: ManualClock, mark: str
) -> dict[str, tuple[str, list[Any], str, tuple[str, ...]]]:
    """Statement name -> (SQL, params, the index that must answer it, the columns it seeks)."""

    def listing(query: RunQuery) -> tuple[str, list[Any]]:
        moment: Any = to_micros if mark == "?" else (lambda value: value)
        return list_sql(query, None, mark=mark, moment=moment)

    waiting = listing(RunQuery(namespace="crowd", status=RunStatus.WAITING_ANSWER, limit=100))
    session = listing(RunQuery(namespace="crowd", session_id="busy", limit=100))
    sweep = listing(RunQuery(all_namespaces=True, wake_before=clock.now() + timedelta(days=1)))
    # What ``agentdeck runs list --status waiting_answer`` asks: the newest first, walking the
    # index backwards (no sort of every waiting run).
    newest_waiting = listing(
        RunQuery(namespace="crowd", status=RunStatus.WAITING_ANSWER, newest_first=True)
    )
    return {
        "list by status, newest first": (
            *newest_waiting,
            "agentdeck_runs_ns_status",
            ("ns", "status"),
        ),
        "list by status": (*waiting, "agentdeck_runs_ns_status", ("ns", "status")),
        "list a session": (*session, "agentdeck_runs_ns_session", ("ns", "session_id")),
        "timer sweep": (*sweep, "agentdeck_runs_wake", ("status", "wake_at")),
    }


# =========================================================================== SQLite


@pytest.fixture
async def sqlite_populated(sqlite_path: Path) -> AsyncIterator[tuple[sqlite3.Connection, Any]]:
    clock = ManualClock()
    store = SqliteEventStore.from_request(
        BackendRequest(url=f"sqlite:///{sqlite_path}?synchronous=normal", clock=clock)
    )
    await store.open()
    try:
        await _populate(store, clock)
    finally:
        await store.close()
    connection = sqlite3.connect(sqlite_path)
    connection.execute("ANALYZE")
    try:
        yield connection, clock
    finally:
        connection.close()


def _sqlite_plan(connection: sqlite3.Connection, query: str, params: Sequence[Any]) -> list[str]:
    return [row[3] for row in connection.execute(f"EXPLAIN QUERY PLAN {query}", params)]


def _assert_sqlite_indexed(
    plan: list[str], index: str, columns: tuple[str, ...], what: str
) -> None:
    """The plan searches ``index`` on ``columns`` (a seek, not a walk) and scans no table."""
    (step,) = [step for step in plan if f"INDEX {index} " in step]
    assert step.startswith("SEARCH agentdeck_runs"), (what, plan)
    assert all(f"{column}" in step.partition("(")[2] for column in columns), (what, plan)
    assert not any(step.startswith("SCAN ") for step in plan), (what, plan)


def test_sqlite_lookups_use_their_indexes(
    sqlite_populated: tuple[sqlite3.Connection, ManualClock],
) -> None:
    connection, clock = sqlite_populated
    for what, (query, params, index, columns) in _queries(clock, "?").items():
        _assert_sqlite_indexed(_sqlite_plan(connection, query, params), index, columns, what)
    holder = _sqlite_plan(connection, SESSION_HOLDER, (ns_key("crowd"), "busy"))
    seek = ("ns", "session_id")
    _assert_sqlite_indexed(holder, "agentdeck_runs_session_holder", seek, "session claim")
    key = _sqlite_plan(connection, KEY_HOLDER, (ns_key("crowd"), "order-10"))
    _assert_sqlite_indexed(key, "agentdeck_runs_key", ("ns", "run_key"), "key lookup")
    log = _sqlite_plan(connection, READ_LOG + " LIMIT ?", ("r", 0, 500))
    # the run's ordinal by its id, then one range of the events' keys: no scan, no sort
    assert any(step.startswith("SEARCH agentdeck_runs") for step in log), log
    assert any(
        step.startswith("SEARCH agentdeck_events USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)")
        for step in log
    ), log
    assert not any(step.startswith("SCAN ") or "TEMP B-TREE" in step for step in log), log


def test_sqlite_listing_waiting_runs_returns_only_them(
    sqlite_populated: tuple[sqlite3.Connection, ManualClock],
) -> None:
    connection, clock = sqlite_populated
    query, params, _, _ = _queries(clock, "?")["list by status"]
    rows = connection.execute(query, params).fetchall()
    assert len(rows) == WAITING


# =========================================================================== PostgreSQL


@pytest.fixture
async def postgres_populated(
    postgres_schema: PostgresSchema,
) -> AsyncIterator[tuple[psycopg.AsyncConnection[Any], ManualClock]]:
    clock = ManualClock()
    store = PostgresEventStore.from_request(BackendRequest(url=postgres_schema.url, clock=clock))
    await store.open()
    try:
        await _populate(store, clock)
    finally:
        await store.close()
    async with await psycopg.AsyncConnection.connect(
        postgres_schema.url, autocommit=True
    ) as connection:
        await connection.execute("ANALYZE agentdeck_runs")
        await connection.execute("ANALYZE agentdeck_events")
        yield connection, clock


async def _postgres_plan(
    connection: psycopg.AsyncConnection[Any], query: str, params: Sequence[Any]
) -> str:
    cursor = await connection.execute(f"EXPLAIN {query}", params)
    return "\n".join(row[0] for row in await cursor.fetchall())


def _assert_postgres_indexed(plan: str, index: str, columns: tuple[str, ...], what: str) -> None:
    """The plan scans ``index`` with a condition on ``columns`` (a seek, not a walk of the whole
    index) and scans no table sequentially."""
    lines = plan.splitlines()
    found = [
        n
        for n, line in enumerate(lines)
        if f" using {index} on " in line or f" on {index} " in line
    ]
    assert found, (what, plan)
    for n in found:
        condition = lines[n + 1] if n + 1 < len(lines) else ""
        assert "Index Cond:" in condition, (what, plan)
        assert all(
            f"{column} =" in condition or f"{column} <" in condition for column in columns
        ), (what, plan)
    assert "Seq Scan" not in plan, (what, plan)


async def test_postgres_lookups_use_their_indexes(
    postgres_populated: tuple[psycopg.AsyncConnection[Any], ManualClock],
) -> None:
    connection, clock = postgres_populated
    for what, (query, params, index, columns) in _queries(clock, "%s").items():
        plan = await _postgres_plan(connection, query, params)
        _assert_postgres_indexed(plan, index, columns, what)
    # What a batch that starts a turn on session "busy" with a key locks and reads: the
    # session's holder and the key's holder, each sought in its index, then the rows by id.
    opening: NewRun = new_run(namespace="crowd", session_id="busy", key="order-10")
    query, params = lock_rows_sql([OpenJob(opening, None, clock.now())])
    plan = await _postgres_plan(connection, query, params)
    _assert_postgres_indexed(plan, "agentdeck_runs_session_holder", ("ns", "session_id"), "claim")
    _assert_postgres_indexed(plan, "agentdeck_runs_key", ("ns", "run_key"), "key")
    _assert_postgres_indexed(plan, "agentdeck_runs_run_id_key", ("run_id",), "lock by id")
    appending = lock_rows_sql([AppendJob("run-x", [], None, None, clock.now())])
    plan = await _postgres_plan(connection, *appending)
    _assert_postgres_indexed(plan, "agentdeck_runs_run_id_key", ("run_id",), "append")
    log = await _postgres_plan(
        connection,
        "SELECT data::text FROM agentdeck_events WHERE run_id = %s AND seq >= %s ORDER BY seq",
        ("r", 0),
    )
    assert "agentdeck_events_pkey" in log and "Seq Scan" not in log, log
