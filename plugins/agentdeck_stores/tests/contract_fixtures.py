"""The fixtures the core's contract kits ask a backend's test class for, made in one place for
every port this package tests against them.

A contract module defines ``url``, the test's own isolated data (a fresh PostgreSQL schema, a
fresh Redis key prefix), and each kit's fixtures are then one line::

    store, reopen_store = port_fixtures(PostgresEventStore.from_request)

Importable by name: ``conftest.py`` puts this directory on ``sys.path`` (the suite runs in
importlib mode, where a test directory is not on it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol, TypeVar

import pytest
import pytest_asyncio

from agentdeck.model.clock import ManualClock
from agentdeck.ports import BackendRequest

__all__ = ["port_fixtures"]


class _Port(Protocol):
    async def open(self) -> None: ...

    async def close(self) -> None: ...


_P = TypeVar("_P", bound=_Port)


def port_fixtures(port: Callable[[BackendRequest], _P]) -> tuple[Any, Any]:
    """The two fixtures a kit asks its subclass for, on the test's ``url``: the port under test,
    opened and closed after the test, and the ``reopen`` that opens another one on the same
    data, as another process would (the kit closes what it reopens)."""

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
