"""``ctx.ask`` in native workflows: several open questions, typed answers, options, JSON Schema,
and answers refused on replay.

Every continuation runs on a fresh engine from the JSON log, as another process would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest
from pydantic import BaseModel, Field, field_validator

from agentdeck import WorkflowCtx, workflow
from agentdeck.authoring.workflows import WorkflowDefinition
from agentdeck.model.content import DataBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import AnswerRefused, AnswerShape, RunInterrupted
from agentdeck.native import NativeWorkflowEngine
from agentdeck.testing.engine_kit import (
    DriveResult,
    check_completed,
    check_failed,
    check_interrupted,
    drive,
    make_invocation,
)
from agentdeck.vocabulary import RunStatus


async def start(definition: WorkflowDefinition) -> DriveResult:
    engine = NativeWorkflowEngine()
    return await drive(engine, make_invocation(engine, definition))


async def answer(
    suspended: DriveResult, definition: WorkflowDefinition, answers: Mapping[str, Any]
) -> DriveResult:
    engine = NativeWorkflowEngine()
    history = [Event.from_json(event.to_json()) for event in suspended.events]
    return await drive(
        engine, make_invocation(engine, definition), history=history, answers=answers
    )


def interrupts(result: DriveResult) -> list[RunInterrupted]:
    return [e.payload for e in result.new_events if isinstance(e.payload, RunInterrupted)]


# =========================================================================== several questions


@workflow
async def two_questions(ctx: WorkflowCtx[Any]) -> dict[str, Any]:
    budget, deadline = await asyncio.gather(
        ctx.ask("What is the budget?"), ctx.ask("When is it due?")
    )
    return {"budget": budget, "deadline": deadline}


async def test_asks_started_together_park_as_several_open_questions() -> None:
    parked = await start(two_questions)
    parked.assert_clean()
    assert parked.status is RunStatus.WAITING_ANSWER
    assert parked.open_interrupts == ["ask-0", "ask-1"]
    assert [i.payload for i in interrupts(parked)] == ["What is the budget?", "When is it due?"]

    answered = await answer(parked, two_questions, {"ask-0": 500, "ask-1": "Friday"})
    assert check_completed(answered) == [DataBlock(data={"budget": 500, "deadline": "Friday"})]


async def test_a_question_left_unanswered_is_asked_again_when_the_run_continues() -> None:
    parked = await start(two_questions)
    partly = await answer(parked, two_questions, {"ask-1": "Friday"})
    assert check_interrupted(partly) == "ask-0"
    assert partly.open_interrupts == ["ask-0"]
    done = await answer(partly, two_questions, {"ask-0": 800})
    assert check_completed(done) == [DataBlock(data={"budget": 800, "deadline": "Friday"})]


@workflow
async def staggered(ctx: WorkflowCtx[Any]) -> list[Any]:
    async def after_a_few_turns() -> Any:
        for _ in range(3):
            await asyncio.sleep(0)  # e.g. a branch awaiting a quick in-memory lookup first
        return await ctx.ask("second?")

    return list(await asyncio.gather(ctx.ask("first?"), after_a_few_turns()))


async def test_a_question_reached_a_few_loop_turns_later_parks_with_the_first() -> None:
    parked = await start(staggered)
    parked.assert_clean()
    assert parked.open_interrupts == ["ask-0", "ask-1"]


@workflow
async def one_after_another(ctx: WorkflowCtx[Any]) -> list[Any]:
    first = await ctx.ask("first?")
    second = await ctx.ask({"follow_up_on": first})
    return [first, second]


async def test_sequential_asks_get_their_own_ids_and_park_one_at_a_time() -> None:
    parked = await start(one_after_another)
    assert parked.open_interrupts == ["ask-0"]
    second = await answer(parked, one_after_another, {"ask-0": "a"})
    assert second.open_interrupts == ["ask-1"]
    assert interrupts(second)[0].payload == {"follow_up_on": "a"}
    done = await answer(second, one_after_another, {"ask-1": "b"})
    assert check_completed(done) == [DataBlock(data=["a", "b"])]


@workflow
async def ask_while_working(ctx: WorkflowCtx[Any]) -> list[Any]:
    async def prepare() -> str:
        for _ in range(20):
            await asyncio.sleep(0)  # longer than the engine's settling turns
        return "prepared"

    return list(await asyncio.gather(ctx.ask("go?"), ctx.step("prepare", prepare)))


async def test_a_step_running_beside_an_ask_is_journaled_before_the_run_parks() -> None:
    parked = await start(ask_while_working)
    assert check_interrupted(parked) == "ask-0"
    assert parked.kinds == ["run.started", "step.completed", "run.interrupted"]


# =========================================================================== typed answers


class Refund(BaseModel):
    amount: int = Field(ge=1)
    reason: str

    @field_validator("reason")
    @classmethod
    def _no_shouting(cls, reason: str) -> str:
        if reason.isupper():
            raise ValueError("reason must not be all capitals")
        return reason


@workflow
async def typed(ctx: WorkflowCtx[Any]) -> dict[str, Any]:
    refund = await ctx.ask("How much, and why?", schema=Refund)
    return {"type": type(refund).__name__, "amount": refund.amount, "reason": refund.reason}


async def test_a_typed_ask_records_the_models_schema_and_hands_the_body_a_model() -> None:
    parked = await start(typed)
    [asked] = interrupts(parked)
    assert asked.expected == AnswerShape(json_schema=Refund.model_json_schema())
    done = await answer(parked, typed, {"ask-0": {"amount": 30, "reason": "damaged"}})
    assert check_completed(done) == [
        DataBlock(data={"type": "Refund", "amount": 30, "reason": "damaged"})
    ]


@pytest.mark.parametrize(
    ("bad", "expected_in_reason"),
    [
        ({"amount": 0, "reason": "damaged"}, "expected Refund: amount:"),
        ({"amount": 5, "reason": "BROKEN IT IS"}, "reason must not be all capitals"),
    ],
)
async def test_an_answer_that_does_not_fit_the_model_is_refused_and_asked_again(
    bad: dict[str, Any], expected_in_reason: str
) -> None:
    parked = await start(typed)
    refused = await answer(parked, typed, {"ask-0": bad})
    assert check_interrupted(refused) == "ask-0", "the same question is open again"
    [refusal] = [e.payload for e in refused.new_events if isinstance(e.payload, AnswerRefused)]
    assert refusal.interrupt_id == "ask-0"
    assert expected_in_reason in refusal.reason
    assert str(bad["reason"]) not in refusal.reason, "a refusal never echoes the answer"
    assert refused.kinds[-2:] == ["answer.refused", "run.interrupted"]

    done = await answer(refused, typed, {"ask-0": {"amount": 5, "reason": "late"}})
    assert check_completed(done) == [
        DataBlock(data={"type": "Refund", "amount": 5, "reason": "late"})
    ]
    assert [e.kind for e in done.new_events].count("answer.refused") == 0, "refused only once"


@workflow
async def typed_scalar(ctx: WorkflowCtx[Any]) -> list[Any]:
    count = await ctx.ask("How many?", schema=int)
    return [type(count).__name__, count]


async def test_any_type_pydantic_knows_can_type_an_answer() -> None:
    parked = await start(typed_scalar)
    assert interrupts(parked)[0].expected == AnswerShape(json_schema={"type": "integer"})
    done = await answer(parked, typed_scalar, {"ask-0": 3})
    assert check_completed(done) == [DataBlock(data=["int", 3])]


# =========================================================================== options and schemas


@workflow
async def choose(ctx: WorkflowCtx[Any]) -> str:
    decision: str = await ctx.ask("Approve the refund?", options=["approve", "reject"])
    return decision


async def test_options_are_recorded_and_only_they_are_accepted() -> None:
    parked = await start(choose)
    assert interrupts(parked)[0].expected == AnswerShape(options=["approve", "reject"])
    refused = await answer(parked, choose, {"ask-0": "maybe"})
    [refusal] = [e.payload for e in refused.new_events if isinstance(e.payload, AnswerRefused)]
    assert refusal.reason == "expected one of the options 'approve', 'reject'"
    done = await answer(refused, choose, {"ask-0": "reject"})
    assert check_completed(done) == [DataBlock(data="reject")]


@workflow
async def by_schema(ctx: WorkflowCtx[Any]) -> Any:
    return await ctx.ask("Seats?", schema={"type": "integer", "minimum": 1})


async def test_a_json_schema_mapping_is_recorded_and_enforced() -> None:
    parked = await start(by_schema)
    assert interrupts(parked)[0].expected == AnswerShape(
        json_schema={"type": "integer", "minimum": 1}
    )
    refused = await answer(parked, by_schema, {"ask-0": 0})
    [refusal] = [e.payload for e in refused.new_events if isinstance(e.payload, AnswerRefused)]
    assert refusal.reason == (
        "does not fit the declared JSON Schema: at the top level it fails 'minimum' (1)"
    )
    done = await answer(refused, by_schema, {"ask-0": 4})
    assert check_completed(done) == [DataBlock(data=4)]


class Handle:
    pass


@workflow
async def options_as_text(ctx: WorkflowCtx[Any]) -> Any:
    return await ctx.ask("ok?", options="yes")  # a str is a Sequence[str]: a classic slip


@workflow
async def invalid_schema(ctx: WorkflowCtx[Any]) -> Any:
    return await ctx.ask("ok?", schema={"type": 5})


@workflow
async def undescribable_type(ctx: WorkflowCtx[Any]) -> Any:
    return await ctx.ask("ok?", schema=Handle)


@workflow
async def opaque_options(ctx: WorkflowCtx[Any]) -> Any:
    return await ctx.ask("which?", options=[Handle()])  # type: ignore[list-item]


@workflow
async def opaque_question(ctx: WorkflowCtx[Any]) -> Any:
    return await ctx.ask(Handle())


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (options_as_text, "ask(options=...) takes a list of the accepted answers, not a str"),
        (invalid_schema, "ask(schema=...) is not a valid JSON Schema (at type: fails"),
        (undescribable_type, "ask(schema=Handle) is not a type pydantic can describe"),
        (opaque_question, "question ask-0 is a Handle, which is not JSON data"),
        (opaque_options, "they must be JSON data (options: a list of strings"),
    ],
)
async def test_an_unusable_ask_fails_the_run_saying_what_is_accepted(
    body: WorkflowDefinition, message: str
) -> None:
    failed = check_failed(await start(body))
    assert message in failed.message
    assert failed.where == f"{body.name}/ask-0"
