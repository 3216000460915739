"""The core's contract kits against the SQLite backends, on a fresh file per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest_asyncio

from agentdeck.model.clock import ManualClock
from agentdeck.ports import BackendRequest, ControlPort, EventStore, LeasePort
from agentdeck.sqlite.store import SqliteControlPort, SqliteEventStore, SqliteLeasePort
from agentdeck.testing import ControlContract, LeaseContract, StoreContract


def _url(path: Path) -> str:
    return f"sqlite:///{path}"


class TestSqliteStore(StoreContract):
    durable = True
    shared = True

    @pytest_asyncio.fixture
    async def store(self, clock: ManualClock, sqlite_path: Path) -> AsyncIterator[EventStore]:
        store = SqliteEventStore.from_request(BackendRequest(url=_url(sqlite_path), clock=clock))
        await store.open()
        yield store
        await store.close()

    @pytest_asyncio.fixture
    async def reopen_store(
        self, clock: ManualClock, sqlite_path: Path
    ) -> Callable[[], Awaitable[EventStore]]:
        async def reopen() -> EventStore:
            other = SqliteEventStore.from_request(
                BackendRequest(url=_url(sqlite_path), clock=clock)
            )
            await other.open()
            return other

        return reopen


class TestSqliteControl(ControlContract):
    shared = True

    @pytest_asyncio.fixture
    async def control(self, clock: ManualClock, sqlite_path: Path) -> AsyncIterator[ControlPort]:
        port = SqliteControlPort.from_request(BackendRequest(url=_url(sqlite_path), clock=clock))
        await port.open()
        yield port
        await port.close()

    @pytest_asyncio.fixture
    async def reopen(
        self, clock: ManualClock, sqlite_path: Path
    ) -> Callable[[], Awaitable[ControlPort]]:
        async def reopen() -> ControlPort:
            other = SqliteControlPort.from_request(
                BackendRequest(url=_url(sqlite_path), clock=clock)
            )
            await other.open()
            return other

        return reopen


class TestSqliteLeases(LeaseContract):
    shared = True

    @pytest_asyncio.fixture
    async def leases(self, clock: ManualClock, sqlite_path: Path) -> AsyncIterator[LeasePort]:
        port = SqliteLeasePort.from_request(BackendRequest(url=_url(sqlite_path), clock=clock))
        await port.open()
        yield port
        await port.close()

    @pytest_asyncio.fixture
    async def reopen(
        self, clock: ManualClock, sqlite_path: Path
    ) -> Callable[[], Awaitable[LeasePort]]:
        async def reopen() -> LeasePort:
            other = SqliteLeasePort.from_request(BackendRequest(url=_url(sqlite_path), clock=clock))
            await other.open()
            return other

        return reopen
