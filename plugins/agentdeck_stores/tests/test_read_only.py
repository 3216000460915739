"""``BackendRequest(read_only=True)`` on PostgreSQL and Redis (and the core's memory backends):
a reader creates nothing, writes nothing, and reads a store that does not exist yet as empty.

Each case runs on the real servers in a private schema or key prefix; "nothing changed" is
checked by dumping what the server holds there before and after.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
import redis.asyncio as aioredis
from psycopg import sql

from agentdeck.errors import StoreError
from agentdeck.memory.control import MemoryControlPort
from agentdeck.memory.lease import MemoryLeasePort
from agentdeck.memory.store import MemoryEventStore
from agentdeck.model.payloads import RunCompleted, RunStarted
from agentdeck.ports import (
    BackendRequest,
    ControlPort,
    EventStore,
    LeasePort,
    LeaseState,
    NewRun,
    PruneQuery,
    RunQuery,
)
from agentdeck.testing.fixtures import PostgresSchema, RedisPrefix, postgres_url
from agentdeck.vocabulary import ControlVerb
from agentdeck_stores.postgres import PostgresControlPort, PostgresEventStore, PostgresLeasePort
from agentdeck_stores.redisstore import RedisControlPort, RedisEventStore, RedisLeasePort

RUN_ID = "run-read-only"


@dataclass(frozen=True)
class Backend:
    """One backend family at one URL, and a dump of everything it holds there."""

    family: str
    url: str
    store: Callable[[BackendRequest], EventStore]
    control: Callable[[BackendRequest], ControlPort]
    lease: Callable[[BackendRequest], LeasePort]
    dump: Callable[[], Awaitable[Any]]


async def _pg_dump(schema: str) -> Any:
    async with await psycopg.AsyncConnection.connect(postgres_url(), autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY tablename", (schema,)
        )
        tables = [row[0] for row in await cursor.fetchall()]
        dump: dict[str, Any] = {"schema exists": await _schema_exists(conn, schema)}
        for table in tables:
            rows = await conn.execute(
                sql.SQL("SELECT * FROM {}.{}").format(sql.Identifier(schema), sql.Identifier(table))
            )
            dump[table] = sorted(map(repr, await rows.fetchall()))
        return dump


async def _schema_exists(conn: psycopg.AsyncConnection[Any], schema: str) -> bool:
    cursor = await conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
    return await cursor.fetchone() is not None


async def _redis_dump(url: str, prefix: str) -> Any:
    client = aioredis.Redis.from_url(url)
    try:
        dump = {}
        async for key in client.scan_iter(match=f"{prefix}*", count=500):
            dump[key] = await client.dump(key)
        return dict(sorted(dump.items()))
    finally:
        await client.aclose()


@pytest.fixture(params=["postgresql", "redis", "memory"])
def backend(
    request: pytest.FixtureRequest, postgres_schema: PostgresSchema, redis_prefix: RedisPrefix
) -> Backend:
    if request.param == "postgresql":
        # The fixture's schema exists but is empty; the URL names its own, not yet created.
        schema = f"{postgres_schema.schema}_ro"
        url = f"{postgres_schema.server_url}?schema={schema}"
        request.addfinalizer(lambda: _drop_schema(schema))
        return Backend(
            "postgresql",
            url,
            PostgresEventStore.from_request,
            PostgresControlPort.from_request,
            PostgresLeasePort.from_request,
            lambda: _pg_dump(schema),
        )
    if request.param == "redis":
        url = f"{redis_prefix.url}?prefix={redis_prefix.prefix}"
        return Backend(
            "redis",
            url,
            RedisEventStore.from_request,
            RedisControlPort.from_request,
            RedisLeasePort.from_request,
            lambda: _redis_dump(redis_prefix.url, redis_prefix.prefix),
        )
    name = f"read-only-{request.node.name}"
    url = f"memory://{name}"

    async def memory_dump() -> Any:
        from agentdeck.memory import log

        shared = log.named_log(name, create=False)
        return None if shared is None else sorted(shared.runs)

    return Backend(
        "memory",
        url,
        MemoryEventStore.from_request,
        MemoryControlPort.from_request,
        MemoryLeasePort.from_request,
        memory_dump,
    )


def _drop_schema(schema: str) -> None:
    with psycopg.connect(postgres_url(), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@dataclass
class Opened:
    store: EventStore
    control: ControlPort
    lease: LeasePort


@asynccontextmanager
async def _open(backend: Backend, *, read_only: bool) -> AsyncIterator[Opened]:
    store = backend.store(BackendRequest(backend.url, read_only=read_only))
    control = backend.control(BackendRequest(backend.url, read_only=read_only))
    lease = backend.lease(BackendRequest(backend.url, read_only=read_only))
    await store.open()
    await control.open()
    await lease.open()
    try:
        yield Opened(store, control, lease)
    finally:
        await lease.close()
        await control.close()
        await store.close()


async def _reads(opened: Opened) -> list[Any]:
    """Every read a reader makes, in a comparable form."""
    page = await opened.store.list_runs(RunQuery(all_namespaces=True))
    record = await opened.store.get_run(RUN_ID)
    return [
        [r.run_id for r in page.runs],
        None if record is None else record.status.value,
        [e.kind for e in await opened.store.read(RUN_ID)],
        await opened.store.find_key(None, "k"),
        await opened.store.get_state(RUN_ID, "s"),
        [s.verb.value for s in await opened.control.pending(RUN_ID)],
        await opened.lease.state(RUN_ID),
        await opened.lease.lapsed(),
    ]


async def test_a_store_that_does_not_exist_reads_as_empty_and_is_not_created(
    backend: Backend,
) -> None:
    before = await backend.dump()
    async with _open(backend, read_only=True) as opened:
        assert await _reads(opened) == [[], None, [], None, None, [], LeaseState.NONE, []]
        if backend.family == "postgresql":  # no tables, so nothing to wait on: it ends
            assert [event async for event in opened.store.follow(RUN_ID)] == []
    assert await backend.dump() == before


async def test_a_reader_reads_what_a_writer_wrote_and_changes_nothing(backend: Backend) -> None:
    async with _open(backend, read_only=False) as writer:
        started = RunStarted(name="job", invocable_kind="workflow")
        assert (await writer.store.open_run(NewRun(run_id=RUN_ID, started=started))).opened
        await writer.store.append(RUN_ID, [RunCompleted()])
        await writer.store.put_state(RUN_ID, "s", b"state")
        await writer.control.request(RUN_ID, ControlVerb.PAUSE, "why")
        assert await writer.lease.acquire(RUN_ID, "worker", 30)
        written = await _reads(writer)
    before = await backend.dump()

    async with _open(backend, read_only=True) as reader:
        assert await _reads(reader) == written
        assert written[0] == [RUN_ID] and written[1] == "completed"
    assert await backend.dump() == before


WRITES: list[tuple[str, Callable[[Opened], Awaitable[object]]]] = [
    (
        "open_run",
        lambda o: o.store.open_run(
            NewRun(run_id="other", started=RunStarted(name="job", invocable_kind="workflow"))
        ),
    ),
    ("append", lambda o: o.store.append(RUN_ID, [RunCompleted()])),
    ("prune", lambda o: o.store.prune(PruneQuery(all_namespaces=True))),
    ("put_state", lambda o: o.store.put_state(RUN_ID, "s", b"x")),
    ("delete_state", lambda o: o.store.delete_state(RUN_ID, "s")),
    ("request", lambda o: o.control.request(RUN_ID, ControlVerb.CANCEL)),
    ("take", lambda o: o.control.take(RUN_ID, ControlVerb.PAUSE)),
    ("forget", lambda o: o.control.forget([RUN_ID])),
    ("acquire", lambda o: o.lease.acquire(RUN_ID, "reader", 30)),
    ("renew", lambda o: o.lease.renew(RUN_ID, "worker", 30)),
    ("release", lambda o: o.lease.release(RUN_ID, "worker")),
]


@pytest.mark.parametrize(("name", "write"), WRITES, ids=[name for name, _ in WRITES])
async def test_every_write_of_a_reader_is_refused_naming_read_only(
    backend: Backend, name: str, write: Callable[[Opened], Awaitable[object]]
) -> None:
    async with _open(backend, read_only=False) as writer:
        started = RunStarted(name="job", invocable_kind="workflow")
        assert (await writer.store.open_run(NewRun(run_id=RUN_ID, started=started))).opened
        await writer.control.request(RUN_ID, ControlVerb.PAUSE)
        assert await writer.lease.acquire(RUN_ID, "worker", 30)
    before = await backend.dump()

    async with _open(backend, read_only=True) as reader:
        with pytest.raises(StoreError, match="read-only"):
            await write(reader)
    assert await backend.dump() == before


async def test_postgres_refuses_a_write_on_the_server_too(postgres_schema: PostgresSchema) -> None:
    """Below the port's own refusal, a reader's pooled sessions are read-only on the server."""
    url = postgres_schema.url
    writer = PostgresEventStore(url)
    await writer.open()  # creates the tables
    await writer.close()
    reader = PostgresEventStore(url, read_only=True)
    await reader.open()
    try:

        async def insert(connection: psycopg.AsyncConnection[Any]) -> None:
            await connection.execute("INSERT INTO agentdeck_schema (version) VALUES (0)")

        with pytest.raises(StoreError, match="read-only transaction"):
            await reader._db.run(insert)
    finally:
        await reader.close()
