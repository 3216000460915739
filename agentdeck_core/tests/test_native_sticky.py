"""Sticky continuation: a ``@workflow`` continued by the process that holds its suspended body
goes on where it stood -- no replay, its non-step code runs once.

Each test counts the body's *non-step* code (a list appended to between operations): a replay
would run it again from the top. Two decks on one memory store stand in for two processes (the
second has nothing of the first's memory); the cross-process version on SQLite lives in
``tests/test_e2e_sticky.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agentdeck import Deck, WorkflowCtx, workflow
from agentdeck.errors import RunSuspendedError
from agentdeck.memory import MemoryEventStore
from agentdeck.memory.control import MemoryControlPort
from agentdeck.memory.lease import MemoryLeasePort
from agentdeck.model.clock import ManualClock
from agentdeck.model.payloads import StepCompleted
from agentdeck.ports import Suspension
from agentdeck.runtime.held import HeldRuns
from agentdeck.settings import Settings
from agentdeck.vocabulary import RunStatus

START = datetime(2026, 5, 1, tzinfo=UTC)
ran: list[int] = []
"""The non-step code of the bodies below: one entry each time a line between operations runs."""
steps_ran: list[str] = []
unwound: list[str] = []
"""Bodies whose ``finally`` ran: a suspended body that is dropped is cancelled, not leaked."""
GATE: dict[str, asyncio.Event] = {}


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    ran.clear()
    steps_ran.clear()
    unwound.clear()
    GATE.clear()
    yield


def did(label: str) -> str:
    steps_ran.append(label)
    return label


async def gated(label: str) -> str:
    await GATE[label].wait()
    return did(label)


@workflow
async def ticker(ctx: WorkflowCtx[Any]) -> dict[str, Any]:
    for i in range(40):
        ran.append(i)
        await ctx.step(f"tick-{i}", did, f"tick-{i}")
        if i == 6:
            GATE["reached"].set()
            await GATE["six"].wait()
        await ctx.safepoint()
    return {"ticks": 40, "caller": ctx.data["caller"] if ctx.data else None}


@workflow
async def asker(ctx: WorkflowCtx[Any]) -> list[str]:
    answers = []
    for i in range(5):
        ran.append(i)
        await ctx.step(f"before-{i}", did, f"before-{i}")
        if i in (1, 3):
            answers.append(await ctx.ask({"tick": i}, options=["yes", "no"]))
    return answers


@workflow
async def two_questions(ctx: WorkflowCtx[Any]) -> list[str]:
    ran.append(0)
    first, second = await asyncio.gather(ctx.ask("first?"), ctx.ask("second?"))
    ran.append(1)
    return [first, second]


@workflow
async def sleeper(ctx: WorkflowCtx[Any]) -> str:
    ran.append(0)
    when = await ctx.step("when", lambda: (START + timedelta(hours=1)).isoformat())
    ran.append(1)
    await ctx.sleep_until(datetime.fromisoformat(when))
    ran.append(2)
    await ctx.step("after", did, "after")
    return "rested"


@workflow
async def held_open(ctx: WorkflowCtx[Any]) -> str:
    try:
        ran.append(0)
        return str(await ctx.ask("ok?"))
    finally:
        unwound.append("held_open")


@workflow
async def slow_step(ctx: WorkflowCtx[Any]) -> str:
    ran.append(0)
    await ctx.step("slow", gated, "slow")
    ran.append(1)
    await ctx.safepoint()
    ran.append(2)
    await ctx.step("after", did, "after")
    return "done"


@workflow
async def approve(item: str, ctx: WorkflowCtx[Any]) -> str:
    ran.append(100)
    return f"{item}:{await ctx.ask({'approve': item})}"


@workflow
async def parent(ctx: WorkflowCtx[Any]) -> str:
    ran.append(0)
    verdict = await ctx.invoke("approve", {"item": "order-7"})
    ran.append(1)
    return f"parent got {verdict}"


WORKFLOWS = [ticker, asker, two_questions, sleeper, held_open, slow_step, approve, parent]


def deck_on(
    store: MemoryEventStore,
    control: MemoryControlPort | None = None,
    env: dict[str, str] | None = None,
    **options: Any,
) -> Deck:
    return Deck(
        workflows=WORKFLOWS,
        observers=(),
        settings=Settings(env=env or {}),
        events=store,
        control=control or MemoryControlPort(),
        leases=MemoryLeasePort(),
        **options,
    )


async def suspended(run: Any) -> RunStatus:
    with pytest.raises(RunSuspendedError) as parked:
        await run
    return parked.value.status


def body_tasks(run_id: str) -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t.get_name().endswith(f" run {run_id}")]


async def step_indexes(store: MemoryEventStore, run_id: str) -> list[int]:
    events = await store.read(run_id)
    return [e.payload.index for e in events if isinstance(e.payload, StepCompleted)]


# =========================================================================== pause and resume


async def test_a_40_tick_workflow_paused_at_6_and_resumed_here_runs_its_code_40_times() -> None:
    GATE["six"], GATE["reached"] = asyncio.Event(), asyncio.Event()
    store = MemoryEventStore()
    async with deck_on(store) as deck:
        run = await deck.runs.start("ticker", context={"caller": "alice"})
        await GATE["reached"].wait()
        await run.pause("coffee")
        GATE["six"].set()
        assert await suspended(run) is RunStatus.PAUSED
        assert ran == list(range(7))
        # A handle recovered by id carries no context: the body still holds the one it had.
        again = await deck.runs.get(run.id)
        await again.resume()
        assert await again == {"ticks": 40, "caller": "alice"}
    assert ran == list(range(40))  # not [0..6, 0..39]: nothing was replayed
    assert steps_ran == [f"tick-{i}" for i in range(40)]
    assert await step_indexes(store, run.id) == list(range(40))


async def test_resuming_twice_at_once_continues_the_body_once() -> None:
    GATE["six"], GATE["reached"] = asyncio.Event(), asyncio.Event()
    async with deck_on(MemoryEventStore()) as deck:
        run = await deck.runs.start("ticker")
        await GATE["reached"].wait()
        await run.pause()
        GATE["six"].set()
        await suspended(run)
        await asyncio.gather(run.resume(), run.resume(), run.resume())
        assert (await run)["ticks"] == 40
    assert ran == list(range(40))


async def test_a_pause_asked_for_during_a_step_is_taken_after_it_and_resume_goes_on() -> None:
    GATE["slow"] = asyncio.Event()
    store = MemoryEventStore()
    async with deck_on(store) as deck:
        run = await deck.runs.start("slow_step")
        await asyncio.sleep(0)
        await run.pause("while the step runs")
        GATE["slow"].set()
        assert await suspended(run) is RunStatus.PAUSED
        assert ran == [0, 1]
        await run.resume()
        assert await run == "done"
    assert ran == [0, 1, 2]
    assert steps_ran == ["slow", "after"]
    assert await step_indexes(store, run.id) == [0, 1]


# =========================================================================== asks and sleeps


async def test_a_workflow_parked_on_questions_continues_where_it_asked() -> None:
    store = MemoryEventStore()
    async with deck_on(store) as deck:
        run = await deck.runs.start("asker")
        assert await suspended(run) is RunStatus.WAITING_ANSWER
        await run.answer("yes")
        assert await suspended(run) is RunStatus.WAITING_ANSWER
        await run.answer("no")
        assert await run == ["yes", "no"]
    assert ran == [0, 1, 2, 3, 4]
    assert steps_ran == [f"before-{i}" for i in range(5)]
    assert await step_indexes(store, run.id) == list(range(5))


async def test_questions_asked_together_are_answered_one_by_one_and_continue_once() -> None:
    async with deck_on(MemoryEventStore()) as deck:
        run = await deck.runs.start("two_questions")
        assert await suspended(run) is RunStatus.WAITING_ANSWER
        await run.answer("b", interrupt_id="ask-1")
        await run.answer("a", interrupt_id="ask-0")
        assert await run == ["a", "b"]
    assert ran == [0, 1]


async def test_a_sleeping_workflow_woken_by_the_sweep_goes_on_after_its_sleep() -> None:
    clock = ManualClock(START)
    store = MemoryEventStore(clock=clock)
    async with deck_on(store, clock=clock) as deck:
        run = await deck.runs.start("sleeper")
        assert await suspended(run) is RunStatus.PAUSED
        record = await store.get_run(run.id)
        assert record is not None
        clock.advance(3600 + 30)  # past the wake time, and one sweep interval
        kinds = [e.kind async for e in run.events(from_seq=record.last_seq + 1, follow=True)]
        assert kinds[0] == "run.resumed" and kinds[-1] == "run.completed"
        assert await run == "rested"
    assert ran == [0, 1, 2]


async def test_an_early_resume_ends_the_sleep_it_waited_on() -> None:
    clock = ManualClock(START)
    async with deck_on(MemoryEventStore(clock=clock), clock=clock) as deck:
        run = await deck.runs.start("sleeper")
        assert await suspended(run) is RunStatus.PAUSED
        await run.resume()
        assert await run == "rested"
    assert ran == [0, 1, 2]


async def test_a_parent_waiting_for_its_child_goes_on_when_the_child_is_answered() -> None:
    store = MemoryEventStore()
    async with deck_on(store) as deck:
        run = await deck.runs.start("parent")
        assert await suspended(run) is RunStatus.PAUSED
        [child] = [r for r in await deck.runs.list() if r.id != run.id]
        await child.answer("yes")
        assert await child == "order-7:yes"
        assert await run == "parent got order-7:yes"
    assert ran == [0, 100, 1]


# =========================================================================== release


async def test_cancelling_a_parked_run_cancels_its_suspended_body() -> None:
    async with deck_on(MemoryEventStore()) as deck:
        run = await deck.runs.start("held_open")
        assert await suspended(run) is RunStatus.WAITING_ANSWER
        assert body_tasks(run.id)  # kept, waiting for the answer
        await run.cancel("not needed")
        assert await run.status() is RunStatus.CANCELLED
        for _ in range(5):
            await asyncio.sleep(0)
        assert unwound == ["held_open"]
        assert body_tasks(run.id) == []


async def test_a_closed_deck_leaves_no_body_behind_and_the_run_replays_on_the_next() -> None:
    store = MemoryEventStore()
    async with deck_on(store) as first:
        run = await first.runs.start("held_open")
        assert await suspended(run) is RunStatus.WAITING_ANSWER
    assert unwound == ["held_open"]
    assert body_tasks(run.id) == []
    async with deck_on(store) as second:
        again = await second.runs.get(run.id)
        await again.answer("fine")
        assert await again == "fine"
    assert ran == [0, 0]  # the second deck had no body to go on with: it replayed


async def test_a_body_that_lost_its_run_to_another_deck_is_dropped_and_writes_nothing() -> None:
    store, control = MemoryEventStore(), MemoryControlPort()
    async with deck_on(store, control) as here, deck_on(store, control) as there:
        run = await here.runs.start("asker")
        assert await suspended(run) is RunStatus.WAITING_ANSWER
        assert ran == [0, 1]
        # Another deck (another process) answers the first question: it replays the body from
        # the log and parks it on the second.
        elsewhere = await there.runs.get(run.id)
        await elsewhere.answer("yes")
        assert await suspended(elsewhere) is RunStatus.WAITING_ANSWER
        assert ran == [0, 1, 0, 1, 2, 3]
        # Answered back here: the body this deck kept parked on the first question is not the
        # run's any more. It is dropped and the run replays, with every step recorded once.
        await run.answer("no")
        assert await run == ["yes", "no"]
    assert ran == [0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4]
    assert steps_ran == [f"before-{i}" for i in range(5)]
    assert await step_indexes(store, run.id) == list(range(5))


async def test_a_body_kept_for_a_run_another_deck_finished_is_released_by_the_sweep() -> None:
    store, control, clock = MemoryEventStore(), MemoryControlPort(), ManualClock(START)
    async with deck_on(store, control, clock=clock) as here, deck_on(store, control) as there:
        run = await here.runs.start("held_open")
        assert await suspended(run) is RunStatus.WAITING_ANSWER
        assert body_tasks(run.id)
        elsewhere = await there.runs.get(run.id)
        await elsewhere.answer("done elsewhere")
        assert await elsewhere == "done elsewhere"
        assert unwound == ["held_open"]  # the replay there ran to its end
        clock.advance(31)  # one sweep interval here
        for _ in range(200):
            if not body_tasks(run.id):
                break
            await asyncio.sleep(0.01)
        assert body_tasks(run.id) == []
        assert unwound == ["held_open", "held_open"]  # the body kept here was cancelled
        assert await step_indexes(store, run.id) == []


async def test_a_deck_told_to_keep_no_bodies_replays_every_continuation() -> None:
    async with deck_on(MemoryEventStore(), env={"AGENTDECK_RUNTIME_MAX_SUSPENDED": "0"}) as deck:
        run = await deck.runs.start("asker")
        assert await suspended(run) is RunStatus.WAITING_ANSWER
        assert body_tasks(run.id) == []
        await run.answer("yes")
        assert await suspended(run) is RunStatus.WAITING_ANSWER
        await run.answer("no")
        assert await run == ["yes", "no"]
    assert ran == [0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4]
    assert steps_ran == [f"before-{i}" for i in range(5)]


# =========================================================================== the runtime's table


class Kept(Suspension):
    def __init__(self) -> None:
        self.discarded = 0

    def discard(self) -> None:
        self.discarded += 1


def test_the_runtime_keeps_a_bounded_number_of_suspensions_and_releases_the_oldest() -> None:
    held = HeldRuns(max_suspended=2)
    first, second, third = Kept(), Kept(), Kept()
    held.keep("run-1", first)
    held.keep("run-2", second)
    held.keep("run-3", third)
    assert first.discarded == 1 and list(held.suspended) == ["run-2", "run-3"]
    assert held.take("run-2") is second and second.discarded == 0
    held.forget("run-3")  # the run ended
    assert third.discarded == 1 and held.suspended == {}


async def test_release_all_discards_every_suspension() -> None:
    held = HeldRuns()
    kept = [Kept() for _ in range(3)]
    for number, suspension in enumerate(kept):
        held.keep(f"run-{number}", suspension)
    await held.release_all()
    assert [k.discarded for k in kept] == [1, 1, 1] and held.suspended == {}
