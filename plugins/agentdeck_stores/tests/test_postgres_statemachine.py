"""The core's Hypothesis state machine against the PostgreSQL store.

One schema per test (the core's ``postgres_schema`` fixture); each example starts from empty
tables (``TRUNCATE``), which is far cheaper than a schema per example.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import psycopg
import pytest

from agentdeck.model.clock import ManualClock
from agentdeck.ports import BackendRequest, EventStore
from agentdeck.testing import make_store_state_machine
from agentdeck.testing.fixtures import PostgresSchema
from agentdeck_stores.postgres import PostgresEventStore

_TABLES = (
    "agentdeck_runs, agentdeck_events, agentdeck_engine_state, agentdeck_control, agentdeck_leases"
)
_SCHEMA: list[PostgresSchema] = []


@pytest.fixture
def machine_schema(postgres_schema: PostgresSchema) -> Iterator[None]:
    _SCHEMA.append(postgres_schema)
    try:
        yield
    finally:
        _SCHEMA.remove(postgres_schema)


@asynccontextmanager
async def fresh_postgres_store(clock: ManualClock) -> AsyncIterator[EventStore]:
    (schema,) = _SCHEMA
    store = PostgresEventStore.from_request(BackendRequest(url=schema.url, clock=clock))
    await store.open()
    try:
        async with await psycopg.AsyncConnection.connect(schema.url, autocommit=True) as conn:
            await conn.execute(f"TRUNCATE {_TABLES} RESTART IDENTITY")
        yield store
    finally:
        await store.close()


TestPostgresStoreMachine = pytest.mark.usefixtures("machine_schema")(
    make_store_state_machine(fresh_postgres_store, name="PostgresStoreStateMachine")
)
