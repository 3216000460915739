"""Waking a parent run: decided from the typed wait its ``run.paused`` records, never its reason.

Each test parks a run in the store by hand with the pause under test, then tells the runtime a
child ended (or that the parent just paused), and reads what the parent's log says happened.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentdeck import Deck, RunStatus, workflow
from agentdeck.model.events import RunCompleted, RunPaused, RunStarted
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
