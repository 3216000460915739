"""A closing deck pauses the runs it is playing; the next deck to open continues them, while a
pause an operator asked for stays until someone resumes it."""

from __future__ import annotations

import asyncio
from typing import Any

from agentdeck import Deck, RunStatus, Settings, WorkflowCtx, workflow
from agentdeck.memory import MemoryControlPort, MemoryEventStore, MemoryLeasePort

SAFETY = 10.0
GATES: dict[str, asyncio.Event] = {}


@workflow
async def busy(ctx: WorkflowCtx[Any]) -> str:
    """Works until its gate opens, then reaches a safe point."""
    await ctx.report("working")
    await GATES["busy"].wait()
    await ctx.safepoint()
    return "finished"


class SharedState:
    """One store, control and lease backend two decks share, as two workers would."""

    def __init__(self) -> None:
        self.store = MemoryEventStore()
        self.control = MemoryControlPort()
        self.leases = MemoryLeasePort()

    def deck(self) -> Deck:
        return Deck(
            workflows=[busy],
            settings=Settings(env={}),
            events=self.store,
            control=self.control,
            leases=self.leases,
            observers=(),
        )

    async def status(self, run_id: str) -> RunStatus:
        record = await self.store.get_run(run_id)
        assert record is not None
        return record.status

    async def wait_for(self, run_id: str, status: RunStatus) -> None:
        async with asyncio.timeout(SAFETY):
            while await self.status(run_id) is not status:
                await asyncio.sleep(0.01)


async def _reported(state: SharedState, run_id: str) -> None:
    async with asyncio.timeout(SAFETY):
        while not any(e.kind == "report" for e in await state.store.read(run_id)):
            await asyncio.sleep(0.01)


async def test_a_run_its_closing_deck_paused_is_continued_by_the_next_deck_that_opens() -> None:
    GATES["busy"] = asyncio.Event()
    state = SharedState()
    first = state.deck()
    await first.open()
    run = await first.runs.start("busy")
    await _reported(state, run.id)

    closing = asyncio.create_task(first.aclose())
    await asyncio.sleep(0.05)  # the close asks for the pause while the body still works
    GATES["busy"].set()
    await asyncio.wait_for(closing, SAFETY)
    assert await state.status(run.id) is RunStatus.PAUSED

    async with state.deck() as second:
        await state.wait_for(run.id, RunStatus.COMPLETED)
        assert await (await second.runs.get(run.id)) == "finished"
    kinds = [e.kind for e in await state.store.read(run.id)]
    assert kinds.count("run.paused") == 1 and kinds.count("run.resumed") == 1
    resumed = next(e for e in await state.store.read(run.id) if e.kind == "run.resumed")
    assert resumed.payload.reason == "continued after its deck closed"  # type: ignore[union-attr]


async def test_a_pause_an_operator_asked_for_survives_a_new_deck_opening() -> None:
    GATES["busy"] = asyncio.Event()
    state = SharedState()
    async with state.deck() as first:
        run = await first.runs.start("busy")
        await _reported(state, run.id)
        await run.pause(reason="operator")
        GATES["busy"].set()
        await state.wait_for(run.id, RunStatus.PAUSED)

    async with state.deck() as second:
        for _ in range(20):
            await asyncio.sleep(0.01)
        assert await state.status(run.id) is RunStatus.PAUSED
        await (await second.runs.get(run.id)).resume()
        await state.wait_for(run.id, RunStatus.COMPLETED)
