"""The core's contract kits against the SQLite backends, on a fresh file per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest
import pytest_asyncio

from agentdeck.model.clock import ManualClock
from agentdeck.ports import BackendRequest
from agentdeck.sqlite.store import SqliteControlPort, SqliteEventStore, SqliteLeasePort
from agentdeck.testing import ControlContract, LeaseContract, StoreContract


class _Port(Protocol):
    async def open(self) -> None: ...

    async def close(self) -> None: ...


_P = TypeVar("_P", bound=_Port)


def port_fixtures(port: Callable[[BackendRequest], _P]) -> tuple[Any, Any]:
    """The two fixtures a kit asks its subclass for, on the test's own file (``url``): the port
    under test, opened and closed after the test, and the ``reopen`` that opens another one on
    the same file, as another process would (the kit closes what it reopens).

    Assign them to the names the kit asks for, e.g.
    ``store, reopen_store = port_fixtures(SqliteEventStore.from_request)``.
    """

    @pytest_asyncio.fixture
    async def opened(self: object, clock: ManualClock, url: str) -> AsyncIterator[_P]:
        under_test = port(BackendRequest(url=url, clock=clock))
        await under_test.open()
        yield under_test
        await under_test.close()

    @pytest.fixture
    def reopen(self: object, clock: ManualClock, url: str) -> Callable[[], Awaitable[_P]]:
        async def reopen() -> _P:
            other = port(BackendRequest(url=url, clock=clock))
            await other.open()
            return other

        return reopen

    return opened, reopen


@pytest.fixture
def url(sqlite_path: Path) -> str:
    """Every port of a test on the test's own file."""
    return f"sqlite:///{sqlite_path}"


class TestSqliteStore(StoreContract):
    durable = True
    shared = True

    store, reopen_store = port_fixtures(SqliteEventStore.from_request)


class TestSqliteControl(ControlContract):
    shared = True

    control, reopen = port_fixtures(SqliteControlPort.from_request)


class TestSqliteLeases(LeaseContract):
    shared = True

    leases, reopen = port_fixtures(SqliteLeasePort.from_request)
