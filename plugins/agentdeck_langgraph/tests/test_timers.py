"""``sleep_until`` parks a run as ``run.paused(reason="sleep", wake_at=...)``; whatever resumes
paused runs (the deck's sweep reading the log's index, or an operator) wakes it, in a fresh
engine on the same checkpointer included."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest_asyncio
from lg_graphs import NAP_UNTIL, START_STATE, Counter, chain, plan, sleeper

from agentdeck.model.clock import ManualClock
from agentdeck.model.payloads import NodeUpdated, RunPaused
from agentdeck.testing.engine_kit import check_completed, check_failed, drive, make_invocation
from agentdeck.vocabulary import RunStatus, WaitKind
from agentdeck_langgraph import LangGraphEngine, Workflow, sleep_until


@pytest_asyncio.fixture
async def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'checkpoints.db'}"


def _nodes(result: Any) -> list[str]:
    return [e.payload.node for e in result.new_events if isinstance(e.payload, NodeUpdated)]


async def _opened(url: str) -> LangGraphEngine:
    engine = LangGraphEngine(checkpointer=url)
    await engine.open()
    return engine


async def test_sleep_until_parks_the_run_with_its_wake_time_for_the_sweep(sqlite_url: str) -> None:
    clock = ManualClock()  # 2026-01-01T00:00Z; the nap ends at 01:00
    engine = await _opened(sqlite_url)
    try:
        invocation = make_invocation(engine, Workflow("nightly", sleeper()), START_STATE)
        invocation.clock = clock
        parked = await drive(engine, invocation)
    finally:
        await engine.close()

    parked.assert_clean()
    assert parked.last.payload == RunPaused(
        reason="sleep", wake_at=NAP_UNTIL, waiting_on=WaitKind.TIMER
    )
    # What the sweep lists by: the folded status and wake time, indexed by every store.
    assert parked.status is RunStatus.PAUSED and parked.run_state.wake_at == NAP_UNTIL
    assert _nodes(parked) == ["plan"]


async def test_a_sleeping_run_wakes_after_a_restart_once_its_time_has_passed(
    sqlite_url: str,
) -> None:
    clock = ManualClock()
    workflow = Workflow("nightly", sleeper())
    engine = await _opened(sqlite_url)
    try:
        invocation = make_invocation(engine, workflow, START_STATE)
        invocation.clock = clock
        parked = await drive(engine, invocation)
    finally:
        await engine.close()

    clock.advance(2 * 3600)  # the process is gone; later, the sweep finds the run due
    assert parked.run_state.wake_at is not None and parked.run_state.wake_at <= clock.now()
    restarted = await _opened(sqlite_url)
    try:
        again = make_invocation(restarted, workflow, START_STATE)
        again.clock = clock
        woken = await drive(restarted, again, history=parked.events)
    finally:
        await restarted.close()

    [output] = check_completed(woken)
    assert output.data["log"] == ["plan", "nap", "review"]  # type: ignore[union-attr]
    assert woken.kinds[len(parked.events) :] == [
        "run.resumed",
        "node.updated",
        "node.updated",
        "run.completed",
    ]


async def test_a_wake_time_already_past_records_no_pause(sqlite_url: str) -> None:
    clock = ManualClock(start=NAP_UNTIL + timedelta(minutes=5))
    engine = await _opened(sqlite_url)
    try:
        invocation = make_invocation(engine, Workflow("nightly", sleeper()), START_STATE)
        invocation.clock = clock
        result = await drive(engine, invocation)
    finally:
        await engine.close()
    [output] = check_completed(result)
    assert "run.paused" not in result.kinds
    assert output.data["log"] == ["plan", "nap", "review"]  # type: ignore[union-attr]


async def test_resuming_a_sleeping_run_early_wakes_it(sqlite_url: str) -> None:
    """An operator's ``resume()`` on a sleeping run is an early wake-up, not a no-op."""
    clock = ManualClock()
    engine = await _opened(sqlite_url)
    try:
        invocation = make_invocation(engine, Workflow("nightly", sleeper()), START_STATE)
        invocation.clock = clock
        parked = await drive(engine, invocation)
        woken = await drive(engine, invocation, history=parked.events)
    finally:
        await engine.close()
    assert clock.now() < NAP_UNTIL
    [output] = check_completed(woken)
    assert output.data["log"] == ["plan", "nap", "review"]  # type: ignore[union-attr]


async def test_a_naive_wake_time_fails_the_node_that_asked_for_it(sqlite_url: str) -> None:
    async def naive(state: Counter) -> dict[str, Any]:
        sleep_until(datetime(2030, 1, 1))
        return {}

    engine = await _opened(sqlite_url)
    try:
        result = await drive(
            engine, make_invocation(engine, Workflow("n", chain(naive)), START_STATE)
        )
    finally:
        await engine.close()
    failed = check_failed(result)
    assert (failed.message, failed.where) == ("ValueError", "naive")


async def test_two_sleeps_in_one_node_each_park_and_wake_in_turn(sqlite_url: str) -> None:
    first, second = NAP_UNTIL, NAP_UNTIL + timedelta(hours=1)

    async def twice(state: Counter) -> dict[str, Any]:
        sleep_until(first)
        sleep_until(second)
        return {"log": ["twice"]}

    clock = ManualClock()
    workflow = Workflow("twice", chain(plan, twice))
    engine = await _opened(sqlite_url)
    try:
        invocation = make_invocation(engine, workflow, START_STATE)
        invocation.clock = clock
        parked = await drive(engine, invocation)
        assert parked.last.payload == RunPaused(
            reason="sleep", wake_at=first, waiting_on=WaitKind.TIMER
        )
        clock.set(first)
        again = await drive(engine, invocation, history=parked.events)
        assert again.last.payload == RunPaused(
            reason="sleep", wake_at=second, waiting_on=WaitKind.TIMER
        )
        clock.set(second)
        done = await drive(engine, invocation, history=again.events)
    finally:
        await engine.close()
    [output] = check_completed(done)
    assert output.data["log"] == ["plan", "twice"]  # type: ignore[union-attr]


async def test_a_due_timer_beside_a_finished_sibling_does_not_record_the_sibling_twice(
    sqlite_url: str,
) -> None:
    from lg_graphs import fan_out, nap, steady

    clock = ManualClock(start=NAP_UNTIL + timedelta(seconds=1))
    engine = await _opened(sqlite_url)
    try:
        invocation = make_invocation(engine, Workflow("wide", fan_out(steady, nap)), START_STATE)
        invocation.clock = clock
        result = await drive(engine, invocation)
    finally:
        await engine.close()
    [output] = check_completed(result)
    assert sorted(_nodes(result)) == ["join", "nap", "plan", "steady"]
    assert sorted(output.data["log"]) == ["join", "nap", "plan", "steady"]  # type: ignore[union-attr]
