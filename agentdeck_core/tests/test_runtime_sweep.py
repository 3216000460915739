"""The deck's sweep honours cancellation, even when a driver under it swallows one.

On Python 3.11, ``asyncio.wait_for`` (which connection pools wait with) can return its result
instead of raising when a cancellation arrives as the awaited thing completes: the task that
was told to cancel carries on. A sweep that then went back to sleep kept ``deck.aclose()`` (and
with it a CLI command) waiting for ever. The store here swallows the cancellation of every
listing, the way such a driver does, and the deck must still close.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentdeck import Deck, ManualClock
from agentdeck.memory import MemoryControlPort, MemoryEventStore, MemoryLeasePort
from agentdeck.ports import RunPage, RunQuery
from agentdeck.settings import Settings


class SwallowingStore(MemoryEventStore):
    """Every listing takes a moment and, if cancelled meanwhile, returns anyway."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.swallowed = 0

    async def list_runs(self, query: RunQuery) -> RunPage:
        try:
            await asyncio.sleep(0.001)
        except asyncio.CancelledError:
            self.swallowed += 1  # lost on the way, as in the driver
        return await super().list_runs(query)


class SharedLeases(MemoryLeasePort):
    shared = True  # so the sweep lists running runs (close_unleased) at every pass


async def test_a_sweep_whose_cancellation_was_swallowed_still_ends() -> None:
    swallowed = 0
    for turns in range(8):  # cancelled before it starts, and inside its listings
        clock = ManualClock()  # never advanced: a sweep that went back to sleep never wakes
        store = SwallowingStore(clock=clock)
        deck = Deck(
            settings=Settings(env={"AGENTDECK_RUNTIME_SWEEP_INTERVAL_SECONDS": "5"}),
            observers=(),
            events=store,
            control=MemoryControlPort(clock=clock),
            leases=SharedLeases(clock=clock),
            clock=clock,
        )
        await deck.__aenter__()
        for _ in range(turns):
            await asyncio.sleep(0)
        closing = asyncio.create_task(deck.aclose())
        done, _ = await asyncio.wait({closing}, timeout=10)  # a deadline, not a cancellation
        if closing not in done:
            closing.cancel()  # the close is stuck on the sweep: it must say so, not hang
            with pytest.raises(asyncio.CancelledError):
                await closing
            pytest.fail(f"the deck did not close (cancelled after {turns} loop turns)")
        await closing
        swallowed += store.swallowed
    assert swallowed >= 1  # the driver's fault did happen, and the deck closed regardless
