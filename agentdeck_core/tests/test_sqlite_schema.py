"""SQLite schema 2: events keyed by their run's ordinal and seq, each row its time and payload;
a schema 1 file is migrated when it is first opened, and reads back what it held."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentdeck.errors import ConfigError, StoreError
from agentdeck.model.events import Event, parse_payload
from agentdeck.model.payloads import RunCompleted, RunStarted, TextDelta
from agentdeck.model.status import fold
from agentdeck.ports import BackendRequest, PruneQuery, RunQuery
from agentdeck.sqlite import writer as sqlite_writer
from agentdeck.sqlite.events import MAX_SEQ, event_id
from agentdeck.sqlite.schema import MIGRATIONS, SCHEMA_VERSION
from agentdeck.sqlite.store import SqliteControlPort, SqliteEventStore, SqliteLeasePort
from agentdeck.storage.sql import ns_key, to_micros
from agentdeck.testing import new_run
from agentdeck.vocabulary import RunStatus

_T0 = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def _run_events(
    run_id: str,
    payloads: list[object],
    *,
    session_id: str | None = None,
    namespace: str | None = None,
) -> list[Event]:
    return [
        Event.record(
            payload,  # type: ignore[arg-type]
            seq=seq,
            run_id=run_id,
            ts=_T0 + timedelta(milliseconds=seq),
            session_id=session_id,
            namespace=namespace,
            origin="triage",
        )
        for seq, payload in enumerate(payloads)
    ]


def _schema_1_file(path: Path, logs: list[list[Event]]) -> None:
    """A file as schema 1 wrote it: its tables, and each run's row and whole envelopes."""
    with sqlite3.connect(path, isolation_level=None) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
        for statement in MIGRATIONS[1]:
            assert isinstance(statement, str)
            connection.execute(statement)
        connection.execute("CREATE TABLE agentdeck_schema (version INTEGER NOT NULL)")
        connection.execute("INSERT INTO agentdeck_schema (version) VALUES (1)")
        for events in logs:
            first, last = events[0], events[-1]
            state = fold(events)
            assert isinstance(first.payload, RunStarted) and state.status is not None
            connection.execute(
                "INSERT INTO agentdeck_runs (run_id, ns, name, invocable_kind, session_id, "
                "status, created_at, updated_at, last_seq, holds_session) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    first.run_id,
                    ns_key(first.namespace),
                    first.payload.name,
                    first.payload.invocable_kind,
                    first.session_id,
                    state.status.value,
                    to_micros(first.ts),
                    to_micros(last.ts),
                    last.seq,
                    int(first.session_id is not None and state.status is RunStatus.RUNNING),
                ),
            )
            connection.executemany(
                "INSERT INTO agentdeck_events (run_id, seq, data) VALUES (?, ?, ?)",
                [(event.run_id, event.seq, event.to_json()) for event in events],
            )


def _started() -> RunStarted:
    return RunStarted(name="triage", invocable_kind="agent")


async def test_a_schema_1_file_is_migrated_and_reads_back_what_it_held(
    sqlite_path: Path,
) -> None:
    done = _run_events(
        "done",
        [_started(), TextDelta(message_id="m", text='hé "quoted" ☃'), RunCompleted()],
    )
    live = _run_events(
        "live",
        [_started(), TextDelta(message_id="m", text="so far")],
        session_id="s",
        namespace="tenant",
    )
    future = _run_events(
        "future", [_started(), parse_payload({"kind": "later.kind", "x": [1, 2.5, None]})]
    )
    _schema_1_file(sqlite_path, [done, live, future])

    store = SqliteEventStore.from_request(BackendRequest(url=f"sqlite:///{sqlite_path}"))
    await store.open()
    try:
        for events in (done, live, future):
            assert await store.read(events[0].run_id) == events
        assert await store.read("live", from_seq=1) == live[1:]
        assert [
            record.run_id for record in (await store.list_runs(RunQuery(all_namespaces=True))).runs
        ] == ["done", "live", "future"]
        # the migrated run goes on where it was, in the same range of keys
        (completed,) = await store.append("live", [RunCompleted()])
        assert completed.seq == 2 and completed.namespace == "tenant"
        assert await store.read("live") == [*live, completed]
        assert await store.prune(PruneQuery(all_namespaces=True)) == 2
        assert await store.read("done") == []
        assert await store.read("future") == future
    finally:
        await store.close()
    with sqlite3.connect(sqlite_path) as connection:
        assert connection.execute("SELECT version FROM agentdeck_schema").fetchall() == [
            (SCHEMA_VERSION,)
        ]
        columns = [row[1] for row in connection.execute("PRAGMA table_info(agentdeck_events)")]
        assert columns == ["id", "ts", "data"]
        (ordinal,) = connection.execute(
            "SELECT ordinal FROM agentdeck_runs WHERE run_id = 'future'"
        ).fetchone()
        assert connection.execute("SELECT id FROM agentdeck_events ORDER BY id").fetchall() == [
            (event_id(ordinal, 0),),
            (event_id(ordinal, 1),),
        ]


async def test_a_schema_1_file_with_a_run_past_the_limit_is_refused_unchanged(
    sqlite_path: Path,
) -> None:
    _schema_1_file(sqlite_path, [_run_events("long", [_started()])])
    with sqlite3.connect(sqlite_path) as connection:
        connection.execute(
            "INSERT INTO agentdeck_events (run_id, seq, data) VALUES ('long', ?, '{}')",
            (MAX_SEQ + 1,),
        )
    store = SqliteEventStore.from_request(BackendRequest(url=f"sqlite:///{sqlite_path}"))
    with pytest.raises(StoreError, match="more than schema 2 keeps per run"):
        await store.open()
    with sqlite3.connect(sqlite_path) as connection:
        assert connection.execute("SELECT version FROM agentdeck_schema").fetchall() == [(1,)]
        assert connection.execute("SELECT count(*) FROM agentdeck_events").fetchone() == (2,)


async def test_an_append_past_the_most_events_a_run_keeps_is_refused_alone(
    sqlite_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_writer, "MAX_SEQ", 3)
    store = SqliteEventStore.from_request(BackendRequest(url=f"sqlite:///{sqlite_path}"))
    await store.open()
    try:
        full, other = new_run(), new_run()
        for run in (full, other):
            assert (await store.open_run(run)).opened
        delta = TextDelta(message_id="m", text="x")
        assert [event.seq for event in await store.append(full.run_id, [delta] * 3)] == [1, 2, 3]
        with pytest.raises(StoreError, match="would pass 3 events"):
            await store.append(full.run_id, [RunCompleted()])
        assert [event.seq for event in await store.read(full.run_id)] == [0, 1, 2, 3]
        assert [event.seq for event in await store.append(other.run_id, [delta])] == [1]
    finally:
        await store.close()


async def test_events_keep_their_time_and_envelope(sqlite_path: Path) -> None:
    store = SqliteEventStore.from_request(BackendRequest(url=f"sqlite:///{sqlite_path}"))
    await store.open()
    try:
        parent = new_run()
        assert (await store.open_run(parent)).opened
        child = new_run(session_id="chat", namespace="tenant", parent_run_id=parent.run_id)
        opened = await store.open_run(child)
        assert opened.event is not None
        appended = await store.append(child.run_id, [TextDelta(message_id="m", text="hi")])
        read = await store.read(child.run_id)
        assert read == [opened.event, *appended]
        assert [
            (e.session_id, e.namespace, e.parent_run_id, e.origin, e.ts.tzinfo) for e in read
        ] == [("chat", "tenant", parent.run_id, opened.event.origin, UTC)] * 2
    finally:
        await store.close()


def _foreign_file(path: Path) -> None:
    """An application's own database: two tables of its own, a row in one."""
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        connection.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer INTEGER)")
        connection.execute("INSERT INTO customers (name) VALUES ('Ada')")
    connection.close()


def _tables(path: Path) -> list[str]:
    with sqlite3.connect(path) as connection:
        rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        names = sorted(name for (name,) in rows)
    connection.close()
    return names


@pytest.mark.parametrize("port", [SqliteEventStore, SqliteControlPort, SqliteLeasePort])
async def test_another_programs_database_is_refused_and_left_untouched(
    sqlite_path: Path, port: type[SqliteEventStore | SqliteControlPort | SqliteLeasePort]
) -> None:
    _foreign_file(sqlite_path)
    backend = port.from_request(BackendRequest(url=f"sqlite:///{sqlite_path}"))
    with pytest.raises(ConfigError, match="another program's SQLite database") as refused:
        await backend.open()
    assert str(sqlite_path) in str(refused.value)
    assert "customers, orders" in str(refused.value)
    assert _tables(sqlite_path) == ["customers", "orders"]


async def test_an_empty_file_is_initialised_and_ours_keeps_opening_with_a_table_added(
    sqlite_path: Path,
) -> None:
    sqlite_path.touch()
    store = SqliteEventStore.from_request(BackendRequest(url=f"sqlite:///{sqlite_path}"))
    await store.open()
    await store.close()
    assert "agentdeck_schema" in _tables(sqlite_path)
    with sqlite3.connect(sqlite_path) as connection:
        connection.execute("CREATE TABLE notes (body TEXT)")  # someone's addition to our file
    connection.close()
    again = SqliteEventStore.from_request(BackendRequest(url=f"sqlite:///{sqlite_path}"))
    await again.open()
    await again.close()
