"""Native workflows on a real ``Deck``: the runtime plays them with the core's own engine.

Two decks sharing one store stand in for two processes: a run parked by the first is answered
through the second, whose fresh engine has nothing but the log. (The cross-process version with
a durable store lives with the stores plugin.)
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agentdeck import Deck, WorkflowCtx, workflow
from agentdeck.errors import RunSuspendedError
from agentdeck.memory import MemoryEventStore
from agentdeck.memory.control import MemoryControlPort
from agentdeck.memory.lease import MemoryLeasePort
from agentdeck.model.clock import ManualClock
from agentdeck.settings import Settings
from agentdeck.vocabulary import RunStatus

START = datetime(2026, 5, 1, tzinfo=UTC)
CALLS: list[str] = []
GATE: dict[str, asyncio.Event] = {}


def record(name: str, value: int) -> int:
    CALLS.append(name)
    return value


@workflow
async def approval(order_id: str, ctx: WorkflowCtx[Any]) -> dict[str, Any]:
    total = await ctx.step("load_total", record, "load_total", 120)
    decision = await ctx.ask({"approve": total, "order": order_id}, options=["yes", "no"])
    return {"order": order_id, "total": total, "decision": decision}


@workflow
async def pausable(ctx: WorkflowCtx[Any]) -> str:
    await ctx.step("before", record, "before", 1)
    await GATE["reached"].wait()
    await ctx.safepoint()
    await ctx.step("after", record, "after", 2)
    return "finished"


@workflow
async def nap(ctx: WorkflowCtx[Any]) -> str:
    # The wake time is computed inside a step, as the journal's JSON: deterministic on replay.
    when = await ctx.step("when", lambda: (START + timedelta(hours=1)).isoformat())
    await ctx.sleep_until(datetime.fromisoformat(when))
    return "rested"


def _deck(store: MemoryEventStore, **options: Any) -> Deck:
    return Deck(
        workflows=[approval, pausable, nap],
        observers=(),
        settings=Settings(),
        events=store,
        control=options.pop("control", MemoryControlPort()),
        leases=MemoryLeasePort(),
        **options,
    )


async def test_a_run_parked_on_one_deck_is_answered_on_another_without_rerunning_steps() -> None:
    CALLS.clear()
    store = MemoryEventStore()
    async with _deck(store) as first:
        run = await first.runs.start("approval", {"order_id": "A-1003"})
        with pytest.raises(RunSuspendedError) as parked:
            await run
        assert parked.value.status is RunStatus.WAITING_ANSWER
        pending = await run.pending()
        assert pending is not None and pending["interrupt_id"] == "ask-0"

    async with _deck(store) as second:
        again = await second.runs.get(run.id)
        await again.answer("yes")
        result = await again
    assert result == {"order": "A-1003", "total": 120, "decision": "yes"}
    assert CALLS == ["load_total"]


async def test_pause_is_taken_at_the_bodys_safepoint_and_resume_continues_past_it() -> None:
    CALLS.clear()
    GATE["reached"] = asyncio.Event()
    async with _deck(MemoryEventStore()) as deck:
        run = await deck.runs.start("pausable")
        await run.pause("operator stepped away")
        GATE["reached"].set()
        with pytest.raises(RunSuspendedError) as paused:
            await run
        assert paused.value.status is RunStatus.PAUSED
        kinds = [event.kind async for event in run.events()]
        assert kinds[-3:] == ["control.requested", "control.observed", "run.paused"]
        await run.resume()
        assert await run == "finished"
    assert CALLS == ["before", "after"]


async def test_the_decks_sweep_wakes_a_sleeping_workflow() -> None:
    clock = ManualClock(START)
    store = MemoryEventStore(clock=clock)
    async with _deck(store, clock=clock) as deck:
        run = await deck.runs.start("nap")
        with pytest.raises(RunSuspendedError) as sleeping:
            await run
        assert sleeping.value.status is RunStatus.PAUSED
        record = await store.get_run(run.id)
        assert record is not None and record.wake_at == datetime(2026, 5, 1, 1, tzinfo=UTC)

        clock.advance(3600 + 30)  # past the wake time, and one sweep interval
        after = [
            event.kind async for event in run.events(from_seq=record.last_seq + 1, follow=True)
        ]
        assert after == ["run.resumed", "run.completed"]
        assert await run == "rested"
