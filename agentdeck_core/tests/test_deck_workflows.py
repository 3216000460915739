"""Native ``@workflow`` runs on a real Deck: nested runs, several open questions, typed answers,
input errors, and a thousand concurrent workflow runs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from agentdeck import (
    AnswerRefusedError,
    Deck,
    InvalidInputError,
    RunFailedError,
    RunStatus,
    RunSuspendedError,
    WorkflowCtx,
    workflow,
)
from agentdeck.settings import Settings


@workflow
async def add(a: int, b: int) -> int:
    return a + b


@workflow
async def approve(item: str, ctx: WorkflowCtx) -> str:
    return str(await ctx.ask(f"approve {item}?", options=["yes", "no"]))


@workflow
async def parent(ctx: WorkflowCtx) -> dict[str, Any]:
    total = await ctx.invoke("add", {"a": 2, "b": 3})
    verdict = await ctx.invoke("approve", {"item": "refund"})
    return {"total": total, "verdict": verdict}


@workflow
async def two_questions(ctx: WorkflowCtx) -> list[Any]:
    return list(await asyncio.gather(ctx.ask("first?"), ctx.ask("second?")))


class Refund(BaseModel):
    amount: int
    reason: str


@workflow
async def typed(ctx: WorkflowCtx) -> dict[str, Any]:
    refund = await ctx.ask("how much?", schema=Refund)
    return refund.model_dump()  # type: ignore[no-any-return]


@workflow
async def fails(ctx: WorkflowCtx) -> None:
    raise PermissionError("token sk-secret-123 rejected")


@workflow
async def looping(ctx: WorkflowCtx) -> str:
    while True:
        await ctx.safepoint()
        await asyncio.sleep(0)


@workflow
async def refund(order_id: int, amount: float, refund: Refund | None = None) -> dict[str, Any]:
    return {"order_id": order_id, "amount": amount, "refund": refund}


@workflow
async def untyped(order_id, note: Any = None) -> list[Any]:  # type: ignore[no-untyped-def]
    return [order_id, note]


CATALOG = [add, approve, parent, two_questions, typed, fails, looping, refund, untyped]


@pytest.fixture
async def deck() -> Any:
    async with Deck(workflows=CATALOG, settings=Settings(), observers=()) as opened:
        yield opened


async def test_a_child_run_is_nested_readable_on_its_own_and_wakes_its_parent(deck: Deck) -> None:
    run = await deck.runs.start("parent")
    with pytest.raises(RunSuspendedError) as parked:
        await run
    assert parked.value.status is RunStatus.PAUSED  # waiting for the child, which waits on us
    children = await deck.runs.list(status=RunStatus.WAITING_ANSWER)
    [child] = children
    child_log = [event async for event in child.events()]
    assert all(event.parent_run_id == run.id for event in child_log)
    assert child_log[0].payload.name == "approve"  # type: ignore[union-attr]
    await child.answer("yes")
    assert await child == "yes"
    for _ in range(100):  # the parent is resumed when its child ends
        if await run.status() is RunStatus.COMPLETED:
            break
        await asyncio.sleep(0.01)
    assert await run == {"total": 5, "verdict": "yes"}


async def test_cancelling_a_parent_cancels_its_waiting_child(deck: Deck) -> None:
    run = await deck.runs.start("parent")
    with pytest.raises(RunSuspendedError):
        await run
    [child] = await deck.runs.list(status=RunStatus.WAITING_ANSWER)
    await run.cancel("no longer needed")
    assert await run.status() is RunStatus.CANCELLED
    assert await child.status() is RunStatus.CANCELLED


async def test_two_questions_asked_together_are_open_at_once(deck: Deck) -> None:
    run = await deck.runs.start("two_questions")
    with pytest.raises(RunSuspendedError):
        await run
    pending = await run.pending_all()
    assert [p.payload for p in pending] == ["first?", "second?"]
    with pytest.raises(InvalidInputError, match="interrupt_id"):
        await run.answer("one")
    await run.answer("two", interrupt_id=pending[1].interrupt_id)
    assert await run.status() is RunStatus.WAITING_ANSWER  # one still open
    await run.answer("one", interrupt_id=pending[0].interrupt_id)
    assert await run == ["one", "two"]


async def test_a_typed_answer_is_validated_and_refused_when_it_does_not_fit(deck: Deck) -> None:
    run = await deck.runs.start("typed")
    with pytest.raises(RunSuspendedError):
        await run
    with pytest.raises(AnswerRefusedError) as refused:
        await run.answer({"amount": "lots"})
    assert "lots" not in refused.value.reason
    assert await run.status() is RunStatus.WAITING_ANSWER
    await run.answer({"amount": 5, "reason": "late"})
    assert await run == {"amount": 5, "reason": "late"}


async def test_wrong_input_shape_is_refused_before_anything_is_recorded(deck: Deck) -> None:
    with pytest.raises(InvalidInputError) as refused:
        await deck.run("add", {"a": 1})
    assert "b" in str(refused.value)
    with pytest.raises(InvalidInputError):
        await deck.run("add", {"a": 1, "b": 2, "c": 3})
    assert await deck.runs.list() == []
    assert await deck.run("add", {"a": 1, "b": 2}) == 3


async def test_input_of_the_wrong_type_is_refused_naming_the_parameter_and_its_type(
    deck: Deck,
) -> None:
    with pytest.raises(InvalidInputError) as refused:
        await deck.runs.start("refund", {"order_id": 5, "amount": "lots"})
    assert refused.value.field == "amount"
    assert refused.value.name == "refund"
    assert "'amount' must be float" in str(refused.value)
    with pytest.raises(InvalidInputError) as nested:
        await deck.run("refund", {"order_id": 5, "amount": 1, "refund": {"amount": "x"}})
    assert nested.value.field == "refund"
    assert "refund.amount" in str(nested.value)
    assert await deck.runs.list() == []  # nothing was recorded


async def test_input_that_stands_for_the_annotated_type_reaches_the_body_converted(
    deck: Deck,
) -> None:
    result = await deck.run(
        "refund", {"order_id": "7", "amount": 2, "refund": {"amount": 3, "reason": "late"}}
    )
    assert result == {"order_id": 7, "amount": 2.0, "refund": {"amount": 3, "reason": "late"}}


async def test_an_unannotated_or_any_parameter_takes_its_input_as_given(deck: Deck) -> None:
    assert await deck.run("untyped", {"order_id": "A-1", "note": [1]}) == ["A-1", [1]]


async def test_a_raising_body_fails_the_run_without_leaking_its_message(deck: Deck) -> None:
    with pytest.raises(RunFailedError) as failed:
        await deck.run("fails")
    assert failed.value.error_code == "engine_error"
    run = await deck.runs.get(failed.value.run_id)
    assert all("sk-secret" not in event.to_json() for event in [e async for e in run.events()])


async def test_pause_and_cancel_reach_a_workflow_at_its_safepoint(deck: Deck) -> None:
    run = await deck.runs.start("looping")
    await run.pause()
    with pytest.raises(RunSuspendedError):
        await run
    await run.resume()
    await run.cancel()
    with pytest.raises(RunFailedError):
        await run
    kinds = [event.kind async for event in run.events()]
    assert kinds[-3:] == ["control.requested", "control.observed", "run.cancelled"]


async def test_a_thousand_concurrent_workflow_runs_complete_with_gapless_seq(deck: Deck) -> None:
    runs = await asyncio.gather(*(deck.runs.start("add", {"a": i, "b": 1}) for i in range(1000)))
    results = await asyncio.gather(*(run.result() for run in runs))
    assert results == [i + 1 for i in range(1000)]
    for run in runs:
        seqs = [event.seq async for event in run.events()]
        assert seqs == list(range(len(seqs)))


async def test_closing_a_deck_right_after_a_run_parks_leaves_no_pause_behind() -> None:
    from agentdeck.memory import MemoryControlPort, MemoryEventStore, MemoryLeasePort

    store, control, leases = MemoryEventStore(), MemoryControlPort(), MemoryLeasePort()

    def a_deck() -> Deck:
        return Deck(
            workflows=CATALOG,
            settings=Settings(),
            observers=(),
            events=store,
            control=control,
            leases=leases,
        )

    async with a_deck() as first:
        run = await first.runs.start("approve", {"item": "refund"})
        with pytest.raises(RunSuspendedError):
            await run
    async with a_deck() as second:
        again = await second.runs.get(run.id)
        assert await control.pending(run.id) == ()
        await again.answer("yes")
        assert await again == "yes"
