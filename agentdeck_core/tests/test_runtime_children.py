"""Child runs as the runtime sees them: waking a parent -- decided from the typed wait its
``run.paused`` records, never its reason -- and what a parent is told about its child.

Each test writes the runs' logs by hand, then asks the runtime's child-run module what to do.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentdeck import Deck, RunStatus, RunSuspendedError, TextBlock, workflow
from agentdeck.model.payloads import (
    AnswerRecorded,
    RunCompleted,
    RunInterrupted,
    RunPaused,
    RunStarted,
)
from agentdeck.ports import NewRun
from agentdeck.runtime.ids import new_run_id
from agentdeck.runtime.runtime import Runtime
from agentdeck.settings import Settings
from agentdeck.vocabulary import WaitKind


@workflow
async def parent() -> str:
    return "parent went on"


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    async with Deck(workflows=[parent], settings=Settings(), observers=()) as deck:
        yield deck.service.runtime


async def _opened(runtime: Runtime, name: str = "parent") -> str:
    invocable = runtime.invocables[name]
    run_id = new_run_id()
    started = RunStarted(
        name=name, invocable_kind=invocable.kind, input=[], code_digest=invocable.code_digest
    )
    await runtime.store.open_run(NewRun(run_id=run_id, started=started))
    return run_id


async def _parked(runtime: Runtime, pause: RunPaused) -> str:
    run_id = await _opened(runtime)
    await runtime.store.append(run_id, [pause])
    return run_id


async def _status(runtime: Runtime, run_id: str) -> RunStatus:
    await runtime.wait_played(run_id)
    return (await runtime.record(run_id)).status


async def _kinds_after_waking(runtime: Runtime, run_id: str) -> list[str]:
    await runtime.wait_played(run_id)
    return [event.kind for event in await runtime.store.read(run_id)]


async def test_a_parent_waiting_on_the_child_that_ended_is_resumed(runtime: Runtime) -> None:
    waiting = RunPaused(reason="anything", waiting_on=WaitKind.CHILD_RUNS, waiting_for=["c-1"])
    run_id = await _parked(runtime, waiting)
    await runtime.children.child_ended(run_id, "c-1")
    assert await _kinds_after_waking(runtime, run_id) == [
        "run.started",
        "run.paused",
        "run.resumed",
        "run.completed",
    ]
    resumed = (await runtime.store.read(run_id))[2].payload
    assert getattr(resumed, "reason", None) == "child run c-1 ended"


async def test_a_pause_whose_reason_names_the_child_but_waits_on_nothing_stays_paused(
    runtime: Runtime,
) -> None:
    run_id = await _parked(runtime, RunPaused(reason="waiting for child run c-1"))
    await runtime.children.child_ended(run_id, "c-1")
    assert await _status(runtime, run_id) is RunStatus.PAUSED


async def test_a_parent_waiting_on_other_children_stays_paused(runtime: Runtime) -> None:
    waiting = RunPaused(waiting_on=WaitKind.CHILD_RUNS, waiting_for=["c-2", "c-3"])
    run_id = await _parked(runtime, waiting)
    await runtime.children.child_ended(run_id, "c-1")
    assert await _status(runtime, run_id) is RunStatus.PAUSED


async def test_a_timer_pause_is_not_woken_by_a_child(runtime: Runtime) -> None:
    run_id = await _parked(runtime, RunPaused(waiting_on=WaitKind.TIMER, waiting_for=["c-1"]))
    await runtime.children.child_ended(run_id, "c-1")
    assert await _status(runtime, run_id) is RunStatus.PAUSED


async def test_a_parent_that_paused_after_its_child_ended_is_resumed(runtime: Runtime) -> None:
    child = await _opened(runtime)
    await runtime.store.append(child, [RunCompleted()])
    waiting = RunPaused(waiting_on=WaitKind.CHILD_RUNS, waiting_for=["c-0", child])
    run_id = await _parked(runtime, waiting)
    await runtime.children.parent_paused(run_id, waiting)
    assert (await _kinds_after_waking(runtime, run_id))[-2:] == ["run.resumed", "run.completed"]


async def test_a_parent_asking_for_a_child_answered_but_not_played_is_told_it_is_parked(
    runtime: Runtime,
) -> None:
    # An answer recorded where the child could not be played (the CLI without a project):
    # the child waits for a sweep, and the parent parks again instead of holding its play.
    child = await _opened(runtime)
    asked = RunInterrupted(interrupt_id="q", payload="ok?")
    await runtime.store.append(child, [asked, AnswerRecorded(interrupt_id="q", value=True)])
    with pytest.raises(RunSuspendedError) as parked:
        await runtime.children.outcome(child, kind="workflow")
    assert parked.value.status is RunStatus.WAITING_ANSWER


async def test_a_parent_asking_for_a_finished_child_gets_its_result_as_json(
    runtime: Runtime,
) -> None:
    child = await _opened(runtime)
    await runtime.store.append(child, [RunCompleted(output=[TextBlock(text="done")])])
    assert await runtime.children.outcome(child, kind="workflow") == [
        {"type": "text", "text": "done"}
    ]
    assert await runtime.children.outcome(child, kind="agent") == "done"
