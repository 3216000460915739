"""``ctx.sleep_until`` and ``ctx.invoke`` in native workflows: timers park as paused runs with a
wake time, and child runs are journaled so a replay does not start them again.

Time is a ``ManualClock``; the child-run port is a recording fake handed to the invocation, as
the runtime's would be.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agentdeck import WorkflowCtx, workflow
from agentdeck.authoring.workflows import WorkflowDefinition
from agentdeck.errors import RunSuspendedError
from agentdeck.model.clock import ManualClock
from agentdeck.model.content import DataBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunPaused, StepCompleted
from agentdeck.native import NativeWorkflowEngine
from agentdeck.ports import Entry, Invocation
from agentdeck.testing.engine_kit import (
    DriveResult,
    check_completed,
    check_failed,
    drive,
    make_invocation,
)
from agentdeck.vocabulary import RunStatus, WaitKind

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
CLOCK = ManualClock(T0)
"""The clock bodies below read to compute wake times; each test resets it."""


@pytest.fixture(autouse=True)
def _reset_clock() -> None:
    global CLOCK
    CLOCK = ManualClock(T0)


def invocation_for(definition: WorkflowDefinition, **fields: Any) -> Invocation:
    engine = NativeWorkflowEngine()
    return replace(make_invocation(engine, definition), clock=CLOCK, **fields)


async def start(definition: WorkflowDefinition, **fields: Any) -> DriveResult:
    return await drive(NativeWorkflowEngine(), invocation_for(definition, **fields))


async def resume(
    suspended: DriveResult, definition: WorkflowDefinition, **fields: Any
) -> DriveResult:
    """Continue on a fresh engine from the JSON log (after a pause or an answer)."""
    history = [Event.from_json(event.to_json()) for event in suspended.events]
    answers = fields.pop("answers", None)
    return await drive(
        NativeWorkflowEngine(),
        invocation_for(definition, **fields),
        history=history,
        answers=answers,
    )


def journal(result: DriveResult) -> list[tuple[int, str, Any]]:
    return [
        (e.payload.index, e.payload.name, e.payload.result)
        for e in result.events
        if isinstance(e.payload, StepCompleted)
    ]


# =========================================================================== sleep_until

CALLS: list[str] = []


@workflow
async def reminder(ctx: WorkflowCtx[Any]) -> str:
    await ctx.step("draft", CALLS.append, "draft")
    # Computed from a clock on every execution: the journal, not this line, decides the wake.
    await ctx.sleep_until(CLOCK.now() + timedelta(hours=1))
    await ctx.step("send", CALLS.append, "send")
    return "sent"


async def test_sleep_until_a_future_time_parks_the_run_with_that_wake_time() -> None:
    CALLS.clear()
    parked = await start(reminder)
    parked.assert_clean()
    assert parked.status is RunStatus.PAUSED
    assert parked.last.payload == RunPaused(
        reason="sleep", wake_at=T0 + timedelta(hours=1), waiting_on=WaitKind.TIMER
    )
    assert parked.run_state.wake_at == T0 + timedelta(hours=1)
    assert journal(parked)[1] == (1, "sleep_until", {"wake_at": "2026-03-01T10:00:00Z"})
    assert CALLS == ["draft"]


async def test_after_the_wake_time_the_run_continues_past_the_sleep_without_rerunning() -> None:
    CALLS.clear()
    parked = await start(reminder)
    CLOCK.advance(2 * 3600)  # later than the journaled wake, earlier than a recomputed one
    woken = await resume(parked, reminder)
    assert woken.invocation.entry is Entry.AFTER_PAUSE
    assert check_completed(woken) == [DataBlock(data="sent")]
    assert CALLS == ["draft", "send"]
    assert [index for index, _, _ in journal(woken)] == [0, 1, 2]


async def test_a_sleep_resumed_early_by_an_operator_does_not_park_again() -> None:
    CALLS.clear()
    parked = await start(reminder)
    woken = await resume(parked, reminder)  # the clock has not moved
    assert check_completed(woken) == [DataBlock(data="sent")]


@workflow
async def overdue(ctx: WorkflowCtx[Any]) -> str:
    await ctx.sleep_until(T0 - timedelta(minutes=5))
    return "at once"


async def test_sleep_until_a_past_time_returns_at_once_and_still_journals_it() -> None:
    result = await start(overdue)
    assert check_completed(result) == [DataBlock(data="at once")]
    assert journal(result) == [(0, "sleep_until", {"wake_at": "2026-03-01T08:55:00Z"})]


@workflow
async def two_timers(ctx: WorkflowCtx[Any]) -> str:
    await asyncio.gather(
        ctx.sleep_until(T0 + timedelta(hours=2)), ctx.sleep_until(T0 + timedelta(hours=1))
    )
    return "both passed"


async def test_timers_parked_together_wake_at_the_earliest_then_park_for_the_rest() -> None:
    parked = await start(two_timers)
    assert parked.last.payload == RunPaused(
        reason="sleep", wake_at=T0 + timedelta(hours=1), waiting_on=WaitKind.TIMER
    )
    CLOCK.advance(3600)
    again = await resume(parked, two_timers)
    assert again.last.payload == RunPaused(
        reason="sleep", wake_at=T0 + timedelta(hours=2), waiting_on=WaitKind.TIMER
    )
    assert len(journal(again)) == 2, "neither sleep is journaled twice"
    CLOCK.advance(3600)
    done = await resume(again, two_timers)
    assert check_completed(done) == [DataBlock(data="both passed")]


@workflow
async def naive(ctx: WorkflowCtx[Any]) -> None:
    await ctx.sleep_until(datetime(2026, 3, 1, 12, 0))


async def test_a_naive_wake_time_fails_the_run_asking_for_a_timezone() -> None:
    failed = check_failed(await start(naive))
    assert "needs a timezone-aware datetime, not a naive datetime" in failed.message


# =========================================================================== child runs


class Children:
    """A stand-in for the runtime's child-run port: records each start, returns a result."""

    def __init__(self, *, suspend: bool = False, fail: bool = False) -> None:
        self.started: list[tuple[str, Any, str | None]] = []
        self.suspend = suspend
        self.fail = fail

    async def __call__(self, name: str, input: Any, *, key: str | None = None) -> Any:
        self.started.append((name, input, key))
        await asyncio.sleep(0)
        if self.suspend:
            raise RunSuspendedError(
                run_id=f"child-{len(self.started)}", status=RunStatus.WAITING_ANSWER
            )
        if self.fail:
            raise LookupError("no such customer")
        return {"child": name, "echo": input}


@workflow
async def delegate(ctx: WorkflowCtx[Any]) -> dict[str, Any]:
    quote = await ctx.invoke("pricing", {"sku": "X-1"})
    approved = await ctx.ask({"approve": quote})
    return {"quote": quote, "approved": approved}


async def test_a_child_runs_result_is_journaled_and_the_child_not_started_again() -> None:
    children = Children()
    parked = await start(delegate, invoke_child=children)
    run_id = parked.invocation.run_id
    assert children.started == [("pricing", {"sku": "X-1"}, f"{run_id}:op-0")]
    assert journal(parked) == [(0, "invoke:pricing", {"child": "pricing", "echo": {"sku": "X-1"}})]

    later = Children()
    done = await resume(parked, delegate, invoke_child=later, answers={"ask-0": True})
    assert check_completed(done) == [
        DataBlock(data={"quote": {"child": "pricing", "echo": {"sku": "X-1"}}, "approved": True})
    ]
    assert later.started == [], "the replay returns the journaled result"


@workflow
async def fan_out(ctx: WorkflowCtx[Any]) -> list[Any]:
    return list(await asyncio.gather(ctx.invoke("a", 1), ctx.invoke("b", 2)))


async def test_concurrent_children_each_get_their_own_key() -> None:
    children = Children()
    result = await start(fan_out, invoke_child=children)
    run_id = result.invocation.run_id
    assert sorted(children.started) == [("a", 1, f"{run_id}:op-0"), ("b", 2, f"{run_id}:op-1")]
    assert check_completed(result) == [
        DataBlock(data=[{"child": "a", "echo": 1}, {"child": "b", "echo": 2}])
    ]


@workflow
async def tolerant(ctx: WorkflowCtx[Any]) -> str:
    try:
        await ctx.invoke("crm", {"customer": 7})
    except LookupError:
        return "handled"
    return "unreachable"


async def test_a_failing_child_raises_in_the_body_and_journals_nothing() -> None:
    result = await start(tolerant, invoke_child=Children(fail=True))
    assert check_completed(result) == [DataBlock(data="handled")]
    assert journal(result) == []


async def test_a_suspended_child_pauses_the_parent_until_it_is_resumed() -> None:
    parked = await start(delegate, invoke_child=Children(suspend=True))
    assert parked.status is RunStatus.PAUSED
    assert parked.last.payload == RunPaused(
        reason="waiting for child run child-1",
        waiting_on=WaitKind.CHILD_RUNS,
        waiting_for=["child-1"],
    )
    assert journal(parked) == []
    done = await resume(parked, delegate, invoke_child=Children())
    assert done.open_interrupts == ["ask-0"], "the child's result arrived; the body went on"


async def test_invoke_without_a_child_run_port_fails_the_run_clearly() -> None:
    failed = check_failed(await start(delegate))
    assert failed.where == "delegate/invoke:pricing"
    assert "cannot start a child run here" in failed.message
