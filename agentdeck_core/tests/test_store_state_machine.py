"""The store state machine against the memory store (examples come from the Hypothesis profile)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from agentdeck.memory import MemoryEventStore
from agentdeck.model.clock import ManualClock
from agentdeck.ports import BackendRequest, EventStore
from agentdeck.testing import make_store_state_machine


@asynccontextmanager
async def memory_store(clock: ManualClock) -> AsyncIterator[EventStore]:
    store = MemoryEventStore.from_request(BackendRequest(url="memory://", clock=clock))
    await store.open()
    try:
        yield store
    finally:
        await store.close()


TestMemoryStoreStateMachine = make_store_state_machine(memory_store, name="MemoryStoreMachine")
