"""PostgreSQL backends across connection trouble: typed errors, reconnects, resubscribing.

Connections are cut with ``pg_terminate_backend`` on the backends of one store only (each store
here runs under its own ``application_name``); the server itself is never restarted.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable

import psycopg
import pytest

from agentdeck.errors import ConfigError, StoreError
from agentdeck.model.clock import ManualClock
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunCompleted, TextDelta
from agentdeck.ports import BackendRequest, EventStore
from agentdeck.storage.sql import SCHEMA_VERSION
from agentdeck.testing import new_run
from agentdeck.testing.fixtures import PostgresSchema, postgres_url
from agentdeck.vocabulary import ControlVerb
from agentdeck_stores.postgres import PostgresControlPort, PostgresEventStore, PostgresLeasePort

WAIT = 10.0

StoreFactory = Callable[[], Awaitable[tuple[EventStore, str]]]


async def _terminate(application_name: str) -> int:
    """Cut every connection of one store (by its application name); how many there were."""
    async with await psycopg.AsyncConnection.connect(postgres_url(), autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = %s AND pid <> pg_backend_pid()",
            (application_name,),
        )
        return len(await cursor.fetchall())


@pytest.fixture
async def named_stores(
    postgres_schema: PostgresSchema,
) -> AsyncIterator[StoreFactory]:
    """Opens stores on the test's schema, each under its own application name."""
    opened: list[EventStore] = []

    async def make() -> tuple[EventStore, str]:
        name = f"adk_kill_{secrets.token_hex(4)}"
        store = PostgresEventStore.from_request(
            BackendRequest(url=f"{postgres_schema.url}&application_name={name}")
        )
        await store.open()
        opened.append(store)
        return store, name

    yield make
    for store in opened:
        await store.close()


async def test_an_unreachable_server_is_a_store_error_with_the_password_redacted() -> None:
    url = "postgresql://agentdeck:s3cret-pw@127.0.0.1:1/agentdeck"
    for port in (
        PostgresEventStore.from_request(BackendRequest(url=url)),
        PostgresControlPort.from_request(BackendRequest(url=url)),
        PostgresLeasePort.from_request(BackendRequest(url=url)),
    ):
        with pytest.raises(StoreError) as refused:
            await port.open()
        message = str(refused.value)
        assert refused.value.backend == "postgresql"
        assert "s3cret-pw" not in message
        assert "postgresql://agentdeck:***@127.0.0.1:1/agentdeck" in message
        assert "cannot connect" in message


async def test_an_unknown_database_is_a_store_error_naming_it() -> None:
    url = f"{postgres_url().rsplit('/', 1)[0]}/agentdeck_no_such_database"
    store = PostgresEventStore.from_request(BackendRequest(url=url))
    with pytest.raises(StoreError) as refused:
        await store.open()
    assert "agentdeck_no_such_database" in str(refused.value)


def test_a_malformed_url_is_refused_when_the_backend_is_built() -> None:
    with pytest.raises(ConfigError, match="schema"):
        PostgresEventStore.from_request(
            BackendRequest(url="postgresql://h/db?schema=no;drop table")
        )
    with pytest.raises(ConfigError, match="pool_max"):
        PostgresEventStore.from_request(BackendRequest(url="postgresql://h/db?pool_max=0"))


async def test_the_next_operation_after_the_connections_were_cut_succeeds(
    named_stores: StoreFactory,
) -> None:
    store, name = await named_stores()
    outcome = await store.open_run(new_run(session_id="s"))
    assert outcome.event is not None
    run_id = outcome.event.run_id
    await store.append(run_id, [TextDelta(message_id="m", text="before")])
    assert await _terminate(name) >= 1
    (after,) = await store.append(run_id, [TextDelta(message_id="m", text="after")])
    assert after.seq == 2
    assert await _terminate(name) >= 1
    assert [event.seq for event in await store.read(run_id)] == [0, 1, 2]
    assert await _terminate(name) >= 1
    record = await store.get_run(run_id)
    assert record is not None and record.last_seq == 2


async def test_a_follower_keeps_going_after_its_connections_were_cut(
    named_stores: StoreFactory,
) -> None:
    follower_store, follower_name = await named_stores()
    writer, _ = await named_stores()
    outcome = await writer.open_run(new_run())
    assert outcome.event is not None
    run_id = outcome.event.run_id
    received: list[Event] = []

    async def follow() -> None:
        async for event in follower_store.follow(run_id):
            received.append(event)

    follower = asyncio.create_task(follow())
    try:
        await _until(lambda: len(received) == 1)
        await writer.append(run_id, [TextDelta(message_id="m", text="one")])
        await _until(lambda: len(received) == 2)
        # Cut the follower's store off (its pool and its LISTEN connection), then write from
        # the other store: only a re-subscribed listener can wake the follower now.
        assert await _terminate(follower_name) >= 1
        await writer.append(run_id, [TextDelta(message_id="m", text="two")])
        await _until(lambda: len(received) == 3)
        assert await _terminate(follower_name) >= 1
        await writer.append(run_id, [RunCompleted()])
        await asyncio.wait_for(follower, WAIT)
    finally:
        follower.cancel()
    assert received == await writer.read(run_id)


async def test_control_and_leases_reconnect_too(postgres_schema: PostgresSchema) -> None:
    name = f"adk_kill_{secrets.token_hex(4)}"
    url = f"{postgres_schema.url}&application_name={name}"
    clock = ManualClock()
    control = PostgresControlPort.from_request(BackendRequest(url=url, clock=clock))
    leases = PostgresLeasePort.from_request(BackendRequest(url=url, clock=clock))
    await control.open()
    await leases.open()
    try:
        assert await control.request("r1", ControlVerb.PAUSE, "later")
        assert await leases.acquire("r1", "worker-a", 10)
        assert await _terminate(name) >= 2
        (signal,) = await control.pending("r1")
        assert signal.reason == "later"
        assert await leases.renew("r1", "worker-a", 10)
    finally:
        await control.close()
        await leases.close()


async def test_a_schema_written_by_a_newer_release_is_refused(
    postgres_schema: PostgresSchema,
) -> None:
    store = PostgresEventStore.from_request(BackendRequest(url=postgres_schema.url))
    await store.open()
    await store.close()
    async with await psycopg.AsyncConnection.connect(postgres_schema.url, autocommit=True) as c:
        await c.execute("UPDATE agentdeck_schema SET version = %s", (SCHEMA_VERSION + 1,))
    again = PostgresEventStore.from_request(BackendRequest(url=postgres_schema.url))
    with pytest.raises(StoreError, match="newer agentdeck-stores"):
        await again.open()


async def test_a_schema_named_in_the_url_is_created(postgres_schema: PostgresSchema) -> None:
    schema = f"{postgres_schema.schema}_own"
    url = f"{postgres_schema.server_url}?schema={schema}"
    store = PostgresEventStore.from_request(BackendRequest(url=url))
    await store.open()
    try:
        await store.open_run(new_run())
        async with await psycopg.AsyncConnection.connect(postgres_url(), autocommit=True) as c:
            cursor = await c.execute(
                "SELECT count(*) FROM pg_tables WHERE schemaname = %s AND tablename LIKE %s",
                (schema, "agentdeck_%"),
            )
            row = await cursor.fetchone()
            assert row is not None and row[0] == 6
    finally:
        await store.close()
        async with await psycopg.AsyncConnection.connect(postgres_url(), autocommit=True) as c:
            await c.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


async def _until(predicate: Callable[[], bool]) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while not predicate():
        if loop.time() > deadline:
            pytest.fail("timed out")
        await asyncio.sleep(0.005)
