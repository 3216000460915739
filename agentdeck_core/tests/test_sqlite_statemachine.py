"""The core's Hypothesis state machine against the SQLite store: a fresh file per example."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from agentdeck.model.clock import ManualClock
from agentdeck.ports import BackendRequest, EventStore
from agentdeck.sqlite.store import SqliteEventStore
from agentdeck.testing import make_store_state_machine


@asynccontextmanager
async def fresh_sqlite_store(clock: ManualClock) -> AsyncIterator[EventStore]:
    directory = Path(tempfile.mkdtemp(prefix="agentdeck-sqlite-machine-"))
    store = SqliteEventStore.from_request(
        BackendRequest(url=f"sqlite:///{directory / 'state.db'}?synchronous=normal", clock=clock)
    )
    await store.open()
    try:
        yield store
    finally:
        await store.close()
        shutil.rmtree(directory, ignore_errors=True)


TestSqliteStoreMachine = make_store_state_machine(
    fresh_sqlite_store, name="SqliteStoreStateMachine"
)
