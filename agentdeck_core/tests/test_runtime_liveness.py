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

from agentdeck import (
    ManualClock,
    RunStarted,
    RunStatus,
    StoreError,
    TextBlock,
    WorkflowCtx,
    workflow,
)
from agentdeck.memory import MemoryControlPort, MemoryEventStore, MemoryLeasePort
from agentdeck.model.payloads import RunInterrupted
from agentdeck.ports import LeaseState, NewRun
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


class SharedMemoryLeases(MemoryLeasePort):
    """The memory port as a shared one: decks of this process that name it see one set of
    leases, so a run nobody leases here is nobody's."""

    shared = True


async def test_the_sweep_reads_every_page_of_lapsed_leases_and_forgets_the_ended_ones() -> None:
    world = World(
        AGENTDECK_RUNTIME_SWEEP_INTERVAL_SECONDS="5", AGENTDECK_RUNTIME_LEASE_TTL_SECONDS="30"
    )
    parked = await world.dead_workers_run("parked", leased=False)
    await world.store.append(parked, [RunInterrupted(interrupt_id="q", payload="ok?")])
    assert await world.leases.acquire(parked, "worker-that-died", ttl=10)  # lapses first
    dead = [await world.dead_workers_run(f"s{n}", leased=True, ttl=30) for n in range(250)]
    assert await world.leases.acquire("pruned-run", "worker-that-died", ttl=30)  # no run left
    async with world.deck:
        world.clock.advance(31)
        await settle()
        for _ in range(200):  # the sweep's pages are many awaits; the clock stays put
            if await world.leases.lapsed(limit=1000) == [parked]:
                break
            await asyncio.sleep(0)
        statuses = {(await world.store.get_run(run_id)).status for run_id in dead}  # type: ignore[union-attr]
        assert statuses == {RunStatus.FAILED}
        # The ended (and the deleted) runs' leases went with them; the parked run keeps its
        # (it may be taken again by whoever continues the run).
        assert await world.leases.lapsed(limit=1000) == [parked]
        record = await world.store.get_run(parked)
        assert record is not None and record.status is RunStatus.WAITING_ANSWER


async def test_a_running_run_nobody_leased_is_closed_one_ttl_after_its_last_event() -> None:
    world = World()
    leases = SharedMemoryLeases(clock=world.clock)
    deck = support.deck(
        [HELLO, ASKS],
        clock=world.clock,
        env={
            "AGENTDECK_RUNTIME_SWEEP_INTERVAL_SECONDS": "5",
            "AGENTDECK_RUNTIME_LEASE_TTL_SECONDS": "30",
            "AGENTDECK_RUNTIME_STALE_RUN_AFTER_SECONDS": "3600",
        },
        events=world.store,
        control=world.control,
        leases=leases,
    )
    async with deck:
        # Its worker died after `run.started` and before its lease was written.
        dead = await world.dead_workers_run("wa-1", leased=False)
        world.clock.advance(25)
        await settle()
        record = await world.store.get_run(dead)
        assert record is not None and record.status is RunStatus.RUNNING  # may still be alive
        from agentdeck import SessionBusyError

        with pytest.raises(SessionBusyError):
            await deck.run("hello", session_id="wa-1")
        world.clock.advance(10)  # one TTL after its last event, and a sweep interval
        await settle()
        record = await world.store.get_run(dead)
        assert record is not None and record.status is RunStatus.FAILED
        [last] = await world.store.read(dead, from_seq=record.last_seq)
        assert last.payload.error_code == "lease_expired"  # type: ignore[union-attr]
        assert await deck.run("hello", session_id="wa-1") == [TextBlock(text="done")]


async def test_an_open_steps_over_a_holder_nobody_leased_for_one_ttl() -> None:
    world = World()
    leases = SharedMemoryLeases(clock=world.clock)
    deck = support.deck(
        [HELLO],
        clock=world.clock,
        env={
            "AGENTDECK_RUNTIME_SWEEP_INTERVAL_SECONDS": "3000",  # no sweep in between
            "AGENTDECK_RUNTIME_LEASE_TTL_SECONDS": "30",
        },
        events=world.store,
        control=world.control,
        leases=leases,
    )
    async with deck:
        dead = await world.dead_workers_run("wa-1", leased=False)
        world.clock.advance(31)
        assert await deck.run("hello", session_id="wa-1") == [TextBlock(text="done")]
        record = await world.store.get_run(dead)
        assert record is not None and record.status is RunStatus.FAILED


async def test_a_private_lease_port_says_nothing_about_a_run_nobody_leased() -> None:
    world = World(
        AGENTDECK_RUNTIME_SWEEP_INTERVAL_SECONDS="5", AGENTDECK_RUNTIME_LEASE_TTL_SECONDS="30"
    )
    async with world.deck:
        dead = await world.dead_workers_run("wa-1", leased=False)
        world.clock.advance(100)
        await settle()
        record = await world.store.get_run(dead)
        assert record is not None and record.status is RunStatus.RUNNING  # the stale backstop


class LeasesThatFailOnce(SharedMemoryLeases):
    """A shared lease port whose first lease take fails, as a store hiccup would."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.failures = 1

    async def acquire(self, run_id: str, owner: str, ttl: float) -> bool:
        if self.failures:
            self.failures -= 1
            raise StoreError("the server hiccupped", backend="memory", retryable=True)
        return await super().acquire(run_id, owner, ttl)


async def test_a_lease_take_that_failed_is_taken_at_the_next_renewal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    gate = asyncio.Event()

    @workflow
    async def waits(ctx: WorkflowCtx) -> str:
        await gate.wait()
        return "done"

    world = World()
    leases = LeasesThatFailOnce(clock=world.clock)
    from agentdeck.native import plugin as native_plugin

    deck = support.deck(
        [waits],
        plugins=support.host(("native", native_plugin)),
        clock=world.clock,
        env={"AGENTDECK_RUNTIME_LEASE_TTL_SECONDS": "60"},
        events=world.store,
        control=world.control,
        leases=leases,
    )
    async with deck:
        run = await deck.runs.start("waits")
        await settle()
        assert await leases.state(run.id) is LeaseState.NONE  # the take failed
        assert any("taking its lease failed" in r.getMessage() for r in caplog.records)
        world.clock.advance(10)  # one renewal period (TTL / 6)
        await settle()
        assert await leases.state(run.id) is LeaseState.ALIVE  # taken by the renewer
        world.clock.advance(50)
        await settle()
        assert await leases.state(run.id) is LeaseState.ALIVE  # and renewed since
        gate.set()
        assert await run.result() == "done"
