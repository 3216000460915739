"""The core's contract kits against the PostgreSQL backends, on a fresh schema per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest_asyncio

from agentdeck.model.clock import ManualClock
from agentdeck.ports import BackendRequest, ControlPort, EventStore, LeasePort
from agentdeck.testing import ControlContract, LeaseContract, StoreContract
from agentdeck.testing.fixtures import PostgresSchema
from agentdeck_stores.postgres import PostgresControlPort, PostgresEventStore, PostgresLeasePort


class TestPostgresStore(StoreContract):
    durable = True
    shared = True

    @pytest_asyncio.fixture
    async def store(
        self, clock: ManualClock, postgres_schema: PostgresSchema
    ) -> AsyncIterator[EventStore]:
        store = PostgresEventStore.from_request(
            BackendRequest(url=postgres_schema.url, clock=clock)
        )
        await store.open()
        yield store
        await store.close()

    @pytest_asyncio.fixture
    async def reopen_store(
        self, clock: ManualClock, postgres_schema: PostgresSchema
    ) -> Callable[[], Awaitable[EventStore]]:
        async def reopen() -> EventStore:
            other = PostgresEventStore.from_request(
                BackendRequest(url=postgres_schema.url, clock=clock)
            )
            await other.open()
            return other

        return reopen


class TestPostgresControl(ControlContract):
    shared = True

    @pytest_asyncio.fixture
    async def control(
        self, clock: ManualClock, postgres_schema: PostgresSchema
    ) -> AsyncIterator[ControlPort]:
        port = PostgresControlPort.from_request(
            BackendRequest(url=postgres_schema.url, clock=clock)
        )
        await port.open()
        yield port
        await port.close()

    @pytest_asyncio.fixture
    async def reopen(
        self, clock: ManualClock, postgres_schema: PostgresSchema
    ) -> Callable[[], Awaitable[ControlPort]]:
        async def reopen() -> ControlPort:
            other = PostgresControlPort.from_request(
                BackendRequest(url=postgres_schema.url, clock=clock)
            )
            await other.open()
            return other

        return reopen


class TestPostgresLeases(LeaseContract):
    shared = True

    @pytest_asyncio.fixture
    async def leases(
        self, clock: ManualClock, postgres_schema: PostgresSchema
    ) -> AsyncIterator[LeasePort]:
        port = PostgresLeasePort.from_request(BackendRequest(url=postgres_schema.url, clock=clock))
        await port.open()
        yield port
        await port.close()

    @pytest_asyncio.fixture
    async def reopen(
        self, clock: ManualClock, postgres_schema: PostgresSchema
    ) -> Callable[[], Awaitable[LeasePort]]:
        async def reopen() -> LeasePort:
            other = PostgresLeasePort.from_request(
                BackendRequest(url=postgres_schema.url, clock=clock)
            )
            await other.open()
            return other

        return reopen
