"""``StoreContract``: the behaviour every :class:`~agentdeck.ports.EventStore` must have.

Run it against your store by subclassing it and overriding the ``store`` fixture::

    import pytest_asyncio
    from agentdeck.ports import BackendRequest
    from agentdeck.testing import StoreContract

    class TestMyStore(StoreContract):
        durable = True   # events survive close + reopen (enables the durability tests)
        shared = True    # a second store on the same data sees the same runs

        @pytest_asyncio.fixture
        async def store(self, clock, my_isolated_url):
            store = MyStore.from_request(BackendRequest(url=my_isolated_url, clock=clock))
            await store.open()
            yield store
            await store.close()

        @pytest_asyncio.fixture
        async def reopen_store(self, clock, my_isolated_url):
            async def reopen():  # another store on the same data, as another process opens it
                other = MyStore.from_request(BackendRequest(url=my_isolated_url, clock=clock))
                await other.open()
                return other
            return reopen

Build the store with the kit's ``clock`` (a :class:`~agentdeck.model.clock.ManualClock`): the
contract says ``ts`` comes from the clock the factory was handed, and the time-based tests move it.
Each test must get an empty store (see :mod:`agentdeck.testing.fixtures` for per-test
PostgreSQL schemas, Redis prefixes and SQLite files). Capabilities are flags, never backend
names; a test that needs one your store lacks is skipped with the flag's name.

Kit tests may not be deleted or redefined silently (see :mod:`agentdeck.testing.guard`).

This module is the kit's documented import path; it holds no code of its own and re-exports the
public names of :mod:`agentdeck.testing.store`, whose modules hold one concern each (opening,
appending, reading, listing, engine state, capabilities).
"""

from __future__ import annotations

from agentdeck.testing.store.contract import StoreContract
from agentdeck.testing.store.helpers import ReopenStore, new_run

__all__ = ["ReopenStore", "StoreContract", "new_run"]
