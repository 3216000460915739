"""agentdeck-journal against the core's contract kits, installed the way a user installs it.

* ``TestJournalStore`` is the core's whole ``StoreContract``, durability tests included;
* ``TestJournalStoreMachine`` is the core's Hypothesis state machine over random run histories;
* the rest checks what only this store promises (crash recovery, one owner per journal) and the
  plugin's wiring: the entry point is discovered, and a deck parks and resumes runs on it.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from agentdeck import (
    Deck,
    RunStatus,
    RunSuspendedError,
    Settings,
    StoreError,
    TextDelta,
    WorkflowCtx,
    workflow,
)
from agentdeck.model.clock import Clock, ManualClock
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import BackendRequest, EventStore
from agentdeck.testing import StoreContract, make_store_state_machine, new_run
from agentdeck.testing.profiles import load_profile

from agentdeck_journal import JournalEventStore

load_profile()


def _store(path: Path, clock: Clock) -> JournalEventStore:
    return JournalEventStore.from_request(BackendRequest(url=f"journal://{path}", clock=clock))


# =========================================================================== the core's kits


class TestJournalStore(StoreContract):
    durable = True  # events survive close and reopen: the kit's durability test runs too
    shared = False  # one process owns a journal

    @pytest.fixture
    def journal(self, tmp_path: Path) -> Path:
        return tmp_path / "state" / "runs.jsonl"

    @pytest_asyncio.fixture
    async def store(self, clock: ManualClock, journal: Path) -> AsyncIterator[EventStore]:
        store = _store(journal, clock)
        await store.open()
        yield store
        await store.close()

    @pytest_asyncio.fixture
    async def reopen_store(
        self, clock: ManualClock, journal: Path
    ) -> Callable[[], Awaitable[EventStore]]:
        async def reopen() -> EventStore:  # what a restarted process does
            again = _store(journal, clock)
            await again.open()
            return again

        return reopen


@asynccontextmanager
async def _fresh_store(clock: ManualClock) -> AsyncIterator[EventStore]:
    with tempfile.TemporaryDirectory() as directory:
        store = _store(Path(directory) / "runs.jsonl", clock)
        await store.open()
        try:
            yield store
        finally:
            await store.close()


TestJournalStoreMachine = make_store_state_machine(_fresh_store, name="JournalStoreMachine")


# =========================================================================== this store's promises


async def test_a_torn_last_record_is_dropped_and_everything_acknowledged_is_kept(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.jsonl"
    store = _store(path, ManualClock())
    await store.open()
    opened = await store.open_run(new_run(session_id="s"))
    assert opened.event is not None
    run_id = opened.event.run_id
    await store.append(run_id, [TextDelta(message_id="m", text="kept")])
    await store.close()
    with path.open("ab") as crashed:  # a crash in the middle of writing the next record
        crashed.write(b'{"op":"events","run":"' + run_id.encode() + b'","ev')

    again = _store(path, ManualClock())
    await again.open()
    try:
        assert [event.seq for event in await again.read(run_id)] == [0, 1]
        [event] = await again.append(run_id, [TextDelta(message_id="m", text="after")])
        assert event.seq == 2
    finally:
        await again.close()
    lines = path.read_bytes().splitlines()
    assert all(isinstance(json.loads(line), dict) for line in lines)  # the torn bytes are gone


async def test_damage_before_the_last_record_is_refused_not_guessed(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    store = _store(path, ManualClock())
    await store.open()
    await store.open_run(new_run())
    await store.open_run(new_run())
    await store.close()
    first, second = path.read_bytes().splitlines()
    path.write_bytes(first[:20] + b"\n" + second + b"\n")

    damaged = _store(path, ManualClock())
    with pytest.raises(StoreError, match="line 1 of the journal is not a record"):
        await damaged.open()
    await damaged.close()


async def test_a_second_store_on_the_same_journal_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    owner = _store(path, ManualClock())
    await owner.open()
    try:
        intruder = _store(path, ManualClock())
        with pytest.raises(StoreError, match="in use by another store"):
            await intruder.open()
    finally:
        await owner.close()
    successor = _store(path, ManualClock())  # once the owner closed, the journal is free
    await successor.open()
    await successor.close()


# =========================================================================== the plugin's wiring


def test_the_installed_entry_point_offers_the_journal_scheme() -> None:
    host = PluginHost.discover(env={})
    [info] = [p for p in host.plugins() if p.name == "journal"]
    assert info.distribution == "agentdeck-journal"
    assert info.provides == {"event_stores": ["journal"]}
    store = host.event_store(BackendRequest("journal://somewhere/runs.jsonl"))
    assert isinstance(store, JournalEventStore)
    assert store.path == Path("somewhere/runs.jsonl")


@workflow
async def approve_expense(amount: int, ctx: WorkflowCtx[Any]) -> str:
    """Ask before paying an expense."""
    decision = await ctx.ask(f"Pay {amount} EUR?", options=["yes", "no"])
    return "paid" if decision == "yes" else "declined"


def test_a_deck_parks_a_run_on_the_journal_and_a_new_deck_resumes_it(tmp_path: Path) -> None:
    # AGENTDECK_EVENTS moves the event log alone: this plugin provides no control or lease
    # backend, so those stay on the in-memory default.
    settings = Settings(env={"AGENTDECK_EVENTS": f"journal://{tmp_path / 'runs.jsonl'}"})

    async def first_process() -> str:
        async with Deck(workflows=[approve_expense], settings=settings) as deck:
            run = await deck.runs.start("approve_expense", {"amount": 40})
            with pytest.raises(RunSuspendedError):
                await run
            return run.id

    async def second_process(run_id: str) -> tuple[object, RunStatus]:
        async with Deck(workflows=[approve_expense], settings=settings) as deck:
            run = await deck.runs.get(run_id)
            await run.answer("yes")
            return await run, await run.status()

    run_id = asyncio.run(first_process())
    assert asyncio.run(second_process(run_id)) == ("paid", RunStatus.COMPLETED)
