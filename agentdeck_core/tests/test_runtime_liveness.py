"""Sessions held by dead workers: stale-run release, lapsed leases, the sweep — all on an
injected clock, never on sleeps."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from agentdeck import ManualClock, RunStarted, RunStatus, TextBlock
from agentdeck.memory import MemoryControlPort, MemoryEventStore, MemoryLeasePort
from agentdeck.ports import NewRun
from agentdeck.runtime.config import NonDurableStoreWarning
from agentdeck.testing import Ask, Complete, Script


def _support() -> Any:
    path = Path(__file__).with_name("deck_support.py")
    spec = importlib.util.spec_from_file_location("deck_support", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("deck_support", module)
    spec.loader.exec_module(module)
    return module


support = _support()

HELLO = Script("hello", [Complete("done")])
ASKS = Script("asks", [Ask("q"), Complete("done")])


class World:
    """A deck plus the backends it shares with a simulated 'other worker'."""

    def __init__(self, **env: str) -> None:
        self.clock = ManualClock()
        self.store = MemoryEventStore(clock=self.clock)
        self.control = MemoryControlPort(clock=self.clock)
        self.leases = MemoryLeasePort(clock=self.clock)
        self.deck = support.deck(
            [HELLO, ASKS],
            clock=self.clock,
            env=env,
            events=self.store,
            control=self.control,
            leases=self.leases,
        )

    async def dead_workers_run(self, session_id: str, *, leased: bool, ttl: float = 90) -> str:
        """A run another worker opened and then died while playing (it never wrote again)."""
        run_id = f"dead-{session_id}"
        outcome = await self.store.open_run(
            NewRun(
                run_id=run_id,
                started=RunStarted(name="hello", invocable_kind="workflow"),
                session_id=session_id,
            )
        )
        assert outcome.opened
        if leased:
            assert await self.leases.acquire(run_id, "worker-that-died", ttl=ttl)
        return run_id


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_a_stale_running_holder_is_stepped_over_and_closed_in_its_own_name() -> None:
    world = World(AGENTDECK_RUNTIME_STALE_RUN_AFTER_SECONDS="600")
    async with world.deck as deck:
        dead = await world.dead_workers_run("wa-1", leased=False)
        from agentdeck import SessionBusyError

        with pytest.raises(SessionBusyError):
            await deck.run("hello", session_id="wa-1")
        world.clock.advance(601)
        assert await deck.run("hello", session_id="wa-1") == [TextBlock(text="done")]
        record = await world.store.get_run(dead)
        assert record is not None and record.status is RunStatus.FAILED
        [last] = await world.store.read(dead, from_seq=record.last_seq)
        assert last.payload.error_code == "cancelled_hard"  # type: ignore[union-attr]
        assert "taken over by run" in last.payload.message  # type: ignore[union-attr]


async def test_a_lapsed_lease_frees_the_session_within_one_ttl() -> None:
    world = World(
        AGENTDECK_RUNTIME_STALE_RUN_AFTER_SECONDS="3600",
        AGENTDECK_RUNTIME_LEASE_TTL_SECONDS="90",
    )
    async with world.deck as deck:
        dead = await world.dead_workers_run("wa-1", leased=True)
        from agentdeck import SessionBusyError

        world.clock.advance(60)  # still within the TTL: the holder may be alive
        with pytest.raises(SessionBusyError):
            await deck.run("hello", session_id="wa-1")
        world.clock.advance(31)  # one TTL after its last renewal
        await deck.run("hello", session_id="wa-1")
        record = await world.store.get_run(dead)
        assert record is not None and record.status is RunStatus.FAILED
        [last] = await world.store.read(dead, from_seq=record.last_seq)
        assert last.payload.error_code == "lease_expired"  # type: ignore[union-attr]


async def test_a_suspended_holder_keeps_its_session_whatever_the_clock_says() -> None:
    world = World(AGENTDECK_RUNTIME_STALE_RUN_AFTER_SECONDS="10")
    async with world.deck as deck:
        parked = await deck.run("asks", session_id="wa-1")
        world.clock.advance(10_000)
        from agentdeck import SessionBusyError

        with pytest.raises(SessionBusyError) as busy:
            await deck.run("hello", session_id="wa-1")
        assert "answer" in str(busy.value)
        assert (await deck.runs.get(parked.run_id)).id == parked.run_id


async def test_the_sweep_closes_runs_whose_lease_lapsed() -> None:
    world = World(
        AGENTDECK_RUNTIME_SWEEP_INTERVAL_SECONDS="5", AGENTDECK_RUNTIME_LEASE_TTL_SECONDS="30"
    )
    async with world.deck:
        dead = await world.dead_workers_run("s", leased=True, ttl=30)
        world.clock.advance(5)
        await settle()
        record = await world.store.get_run(dead)
        assert record is not None and record.status is RunStatus.RUNNING  # lease still alive
        world.clock.advance(30)
        await settle()
        record = await world.store.get_run(dead)
        assert record is not None and record.status is RunStatus.FAILED


async def test_a_run_parked_on_a_non_durable_store_says_so_once() -> None:
    world = World()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with world.deck as deck:
            await deck.run("asks")
            await deck.run("asks")
    loud = [w for w in caught if issubclass(w.category, NonDurableStoreWarning)]
    assert len(loud) == 1
    assert "AGENTDECK_STATE" in str(loud[0].message)
