"""Durable replay of native ``@workflow`` bodies: input binding, the journal, the code digest,
what a body returns, and how a failing or misbehaving body ends its run.

Continuations run on a *fresh* engine instance fed only the log (read back from JSON, as from a
store) and a copy of the state area -- what another process would have.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from agentdeck import WorkflowCtx, workflow
from agentdeck.authoring.workflows import WorkflowDefinition, code_digest
from agentdeck.errors import InvalidInputError, ReplayError
from agentdeck.model.content import ContentBlock, DataBlock, ImageBlock, TextBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import Report, RunFailed, StepCompleted
from agentdeck.native import NativeWorkflowEngine
from agentdeck.ports import Entry
from agentdeck.testing.engine_kit import (
    DriveResult,
    MemoryStateArea,
    check_completed,
    check_failed,
    check_interrupted,
    drive,
    make_invocation,
)
from agentdeck.vocabulary import ControlVerb, ErrorCode, RunStatus

SECRET = "token sk-live-123 rejected"


async def start(
    definition: WorkflowDefinition, value: Any = None, *, context: Any = None
) -> DriveResult:
    engine = NativeWorkflowEngine()
    blocks = [] if value is None else [DataBlock(data=value)]
    return await drive(engine, make_invocation(engine, definition, blocks, context=context))


async def continue_elsewhere(
    suspended: DriveResult,
    definition: WorkflowDefinition,
    *,
    answers: Mapping[str, Any] | None = None,
) -> DriveResult:
    """Continue ``suspended`` on a new engine, from the JSON log and a copy of the state area."""
    engine = NativeWorkflowEngine()
    history = [Event.from_json(event.to_json()) for event in suspended.events]
    area = suspended.state_area
    return await drive(
        engine,
        make_invocation(engine, definition),
        history=history,
        answers=answers,
        state=area.copy() if isinstance(area, MemoryStateArea) else area,
    )


def steps_of(result: DriveResult) -> list[StepCompleted]:
    return [event.payload for event in result.events if isinstance(event.payload, StepCompleted)]


# =========================================================================== input


@workflow
async def refund(order_id: str, amount: int = 0) -> dict[str, Any]:
    return {"order_id": order_id, "amount": amount}


async def test_input_binds_to_the_body_parameters_by_name() -> None:
    result = await start(refund, {"order_id": "A-1003", "amount": 5})
    assert check_completed(result) == [DataBlock(data={"order_id": "A-1003", "amount": 5})]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"amount": 5}, "missing 'order_id'"),
        ({"order_id": "A-1", "colour": "red"}, "unknown 'colour'"),
        ("A-1", "must be a mapping"),
    ],
)
async def test_input_that_does_not_bind_raises_before_the_body_runs(
    value: Any, problem: str
) -> None:
    ran: list[str] = []

    @workflow(name="refund")
    async def body(order_id: str, amount: int = 0) -> None:
        ran.append(order_id)

    result = await start(body, value)
    assert isinstance(result.raised, InvalidInputError)
    assert problem in str(result.raised)
    assert ran == [], "the body must not run on input that does not bind"
    assert result.kinds == ["run.started", "run.failed"]


def test_prepare_input_refuses_unbindable_input_before_a_run_exists() -> None:
    engine = NativeWorkflowEngine()
    invocable = engine.compile(refund)
    assert engine.prepare_input(invocable, {"order_id": "A-1"}) == [
        DataBlock(data={"order_id": "A-1"})
    ]
    with pytest.raises(InvalidInputError, match="missing 'order_id'"):
        engine.prepare_input(invocable, {"amount": 1})
    with pytest.raises(InvalidInputError, match="takes JSON data as input, not object"):
        engine.prepare_input(invocable, object())


@workflow
async def echo(value: Any) -> Any:
    return {"got": value}


async def test_a_text_block_reaches_a_one_parameter_body_as_its_text() -> None:
    engine = NativeWorkflowEngine()
    result = await drive(engine, make_invocation(engine, echo, "hello"))
    assert check_completed(result) == [DataBlock(data={"got": "hello"})]


async def test_input_of_several_blocks_is_refused_naming_them() -> None:
    engine = NativeWorkflowEngine()
    blocks: list[ContentBlock] = [
        TextBlock(text="look"),
        ImageBlock(media_type="image/png", data_b64="aGk="),
    ]
    result = await drive(engine, make_invocation(engine, echo, blocks))
    assert isinstance(result.raised, InvalidInputError)
    assert "2 block(s): text, image" in str(result.raised)


# =========================================================================== the journal


V = TypeVar("V")


class Counter:
    """Counts how often each step function really ran, and returns the value it is given."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def __call__(self, name: str, value: V) -> V:
        self.calls[name] = self.calls.get(name, 0) + 1
        return value


COUNTER = Counter()


@workflow
async def approval(order_id: str, ctx: WorkflowCtx[Any]) -> dict[str, Any]:
    total = await ctx.step("load_total", COUNTER, "load_total", 120)

    async def charge(amount: int) -> dict[str, Any]:
        COUNTER("charge", None)
        return {"charged": amount}

    receipt = await ctx.step("charge", charge, total)
    decision = await ctx.ask({"approve_refund_of": total, "order": order_id})
    notice = await ctx.step("notify", COUNTER, "notify", f"told {decision}")
    return {"total": total, "receipt": receipt, "decision": decision, "notice": notice}


async def test_steps_before_an_ask_do_not_run_again_when_answered_elsewhere() -> None:
    COUNTER.calls.clear()
    parked = await start(approval, {"order_id": "A-1"})
    assert check_interrupted(parked) == "ask-0"
    assert COUNTER.calls == {"load_total": 1, "charge": 1}
    assert [(s.index, s.name, s.result) for s in steps_of(parked)] == [
        (0, "load_total", 120),
        (1, "charge", {"charged": 120}),
    ]

    answered = await continue_elsewhere(parked, approval, answers={"ask-0": "yes"})
    assert check_completed(answered) == [
        DataBlock(
            data={
                "total": 120,
                "receipt": {"charged": 120},
                "decision": "yes",
                "notice": "told yes",
            }
        )
    ]
    assert COUNTER.calls == {"load_total": 1, "charge": 1, "notify": 1}
    new_steps = [e.payload for e in answered.new_events if isinstance(e.payload, StepCompleted)]
    assert [(s.index, s.name) for s in new_steps] == [(2, "notify")], "only the new step is logged"


@workflow
async def json_results(ctx: WorkflowCtx[Any]) -> dict[str, Any]:
    value = await ctx.step("value", lambda: {"ids": [1, 2], "ok": True, "ratio": 0.5, "n": None})
    first = type(value["ids"]).__name__
    await ctx.ask("continue?")
    return {"value": value, "first": first, "replayed": type(value["ids"]).__name__}


async def test_a_json_step_result_is_the_same_value_on_the_first_run_and_on_replay() -> None:
    parked = await start(json_results)
    answered = await continue_elsewhere(parked, json_results, answers={"ask-0": True})
    value = {"ids": [1, 2], "ok": True, "ratio": 0.5, "n": None}
    assert check_completed(answered) == [
        DataBlock(data={"value": value, "first": "list", "replayed": "list"})
    ]
    assert steps_of(answered)[0].result == value


class Price(BaseModel):
    amount: int


NOT_AS_IS: dict[str, Any] = {
    "tuple": (1, 2),
    "datetime": datetime(2026, 1, 1, tzinfo=UTC),
    "Price": Price(amount=3),
    "dict": {1: "integer key"},
    "set": {1},
    "Opaque": None,  # filled below: the class is defined further down
}


@workflow
async def not_as_is(kind: str, ctx: WorkflowCtx[Any]) -> None:
    value = NOT_AS_IS[kind] if kind != "Opaque" else Opaque(handle=1)
    await ctx.step("produce", lambda: value)
    COUNTER("after_produce", None)


@pytest.mark.parametrize("kind", sorted(NOT_AS_IS))
async def test_a_step_result_that_is_not_json_as_it_stands_fails_the_run_clearly(
    kind: str,
) -> None:
    COUNTER.calls.clear()
    result = await start(not_as_is, kind)
    failed = check_failed(result)
    assert failed.error_code == ErrorCode.ENGINE_ERROR
    assert failed.where == "not_as_is/produce"
    assert f"step 'produce' (#0) returned a {kind}, which is not JSON data" in failed.message
    assert ".model_dump(mode='json') for a pydantic model" in failed.message
    assert "after_produce" not in COUNTER.calls, "the body does not continue past it"
    assert steps_of(result) == []


@workflow
async def gathered(ctx: WorkflowCtx[Any]) -> list[Any]:
    finish_order: list[str] = []

    async def slow() -> str:
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        finish_order.append("slow")
        return COUNTER("slow", "s")

    async def fast() -> str:
        finish_order.append("fast")
        return COUNTER("fast", "f")

    results = await asyncio.gather(ctx.step("slow", slow), ctx.step("fast", fast))
    await ctx.ask("done?")
    return [*results, finish_order]


async def test_concurrent_steps_are_journaled_by_the_order_they_were_called() -> None:
    COUNTER.calls.clear()
    parked = await start(gathered)
    check_interrupted(parked)
    assert [(s.index, s.name) for s in steps_of(parked)] == [(1, "fast"), (0, "slow")], (
        "completion order is the log order; the index is the call order"
    )
    answered = await continue_elsewhere(parked, gathered, answers={"ask-0": "ok"})
    assert check_completed(answered) == [DataBlock(data=["s", "f", []])]
    assert COUNTER.calls == {"slow": 1, "fast": 1}


@workflow
async def chatty(ctx: WorkflowCtx[Any]) -> str:
    await ctx.report("tick")
    await ctx.report("tick")
    await ctx.emit("app.progress", {"percent": 50})
    answer = await ctx.ask("more?")
    await ctx.report("tick")
    await ctx.emit("app.progress", {"percent": 100})
    return str(answer)


async def test_reports_and_custom_events_are_not_written_again_on_replay() -> None:
    parked = await start(chatty)
    answered = await continue_elsewhere(parked, chatty, answers={"ask-0": "no"})
    check_completed(answered)
    kinds = [event.kind for event in answered.events]
    assert kinds.count("report") == 3, kinds
    assert kinds.count("custom") == 2, kinds
    new_kinds = [event.kind for event in answered.new_events]
    assert new_kinds == [
        "answer.recorded",
        "run.resumed",
        "report",
        "custom",
        "run.completed",
    ]


@workflow
async def paused_twice(ctx: WorkflowCtx[Any]) -> int:
    first = await ctx.step("first", COUNTER, "first", 1)
    await ctx.safepoint()
    second = await ctx.step("second", COUNTER, "second", 2)
    await ctx.safepoint()
    return first + second


async def test_a_pause_at_a_safepoint_continues_past_it_without_rerunning_steps() -> None:
    COUNTER.calls.clear()
    engine = NativeWorkflowEngine()
    paused = await drive(
        engine, make_invocation(engine, paused_twice), directives={1: ControlVerb.PAUSE}
    )
    assert paused.status is RunStatus.PAUSED
    assert paused.kinds[-3:] == ["control.requested", "control.observed", "run.paused"]
    resumed = await continue_elsewhere(paused, paused_twice)
    assert resumed.invocation.entry is Entry.AFTER_PAUSE
    assert check_completed(resumed) == [DataBlock(data=3)]
    assert COUNTER.calls == {"first": 1, "second": 1}


@workflow
async def busy_when_paused(ctx: WorkflowCtx[Any]) -> str:
    async def reporter() -> None:
        for tick in range(3):
            await ctx.report(f"tick {tick}")

    await asyncio.gather(reporter(), ctx.safepoint())
    return "done"


async def test_a_directive_outranks_what_other_branches_had_posted() -> None:
    engine = NativeWorkflowEngine()
    paused = await drive(
        engine, make_invocation(engine, busy_when_paused), directives={1: ControlVerb.PAUSE}
    )
    paused.assert_clean()
    assert paused.kinds == [
        "run.started",
        "control.requested",
        "control.observed",
        "run.paused",
    ], "the report posted before the pause was taken is dropped, not recorded after it"
    resumed = await continue_elsewhere(paused, busy_when_paused)
    assert check_completed(resumed) == [DataBlock(data="done")]
    assert [e.payload.message for e in resumed.events if isinstance(e.payload, Report)] == [
        "tick 0",
        "tick 1",
        "tick 2",
    ]


# =========================================================================== replay refusals


def _versions() -> tuple[WorkflowDefinition, WorkflowDefinition]:
    @workflow(name="shipping")
    async def v1(ctx: WorkflowCtx[Any]) -> str:
        await ctx.step("label", COUNTER, "v1", "L-1")
        return str(await ctx.ask("ship?"))

    @workflow(name="shipping")
    async def v2(ctx: WorkflowCtx[Any]) -> str:
        await ctx.step("label", COUNTER, "v2", "L-2")
        await ctx.step("insure", COUNTER, "v2", "I-2")
        return str(await ctx.ask("ship?"))

    return v1, v2


async def test_a_run_whose_code_changed_is_refused_before_the_body_runs() -> None:
    COUNTER.calls.clear()
    v1, v2 = _versions()
    assert code_digest(v1) != code_digest(v2)
    parked = await start(v1)
    assert parked.events[0].payload.code_digest == code_digest(v1)  # type: ignore[union-attr]

    refused = await continue_elsewhere(parked, v2, answers={"ask-0": "yes"})
    assert isinstance(refused.raised, ReplayError)
    assert refused.raised.reason == "code_changed"
    assert "another version of workflow 'shipping'" in str(refused.raised)
    assert COUNTER.calls == {"v1": 1}, "the changed body never ran"
    assert refused.status is RunStatus.FAILED


async def test_a_continuation_without_its_log_is_refused() -> None:
    engine = NativeWorkflowEngine()
    invocation = make_invocation(engine, chatty)
    invocation.entry = Entry.ANSWERED
    with pytest.raises(ReplayError) as refused:
        await anext(engine.play(invocation))
    assert refused.value.reason == "state_missing"


FLAGS = {"step_name": "reserve", "question": "ship it?"}


@workflow
async def wobbly(ctx: WorkflowCtx[Any]) -> str:
    await ctx.step(FLAGS["step_name"], lambda: "ok")
    return str(await ctx.ask(FLAGS["question"]))


@pytest.mark.parametrize(
    ("flag", "changed", "detail"),
    [
        ("step_name", "release", "operation #0 is 'release' now but was journaled as 'reserve'"),
        ("question", "really ship it?", "ask-0 asks a different question"),
    ],
)
async def test_a_replay_that_reaches_other_operations_is_refused_as_nondeterministic(
    flag: str, changed: str, detail: str
) -> None:
    FLAGS.update(step_name="reserve", question="ship it?")
    parked = await start(wobbly)
    FLAGS[flag] = changed
    try:
        refused = await continue_elsewhere(parked, wobbly, answers={"ask-0": "yes"})
    finally:
        FLAGS.update(step_name="reserve", question="ship it?")
    assert isinstance(refused.raised, ReplayError)
    assert refused.raised.reason == "nondeterministic"
    assert detail in str(refused.raised)


# =========================================================================== output


class Opaque:
    """Not JSON data in any form (unlike a dataclass or a model, which become dicts)."""

    def __init__(self, handle: int) -> None:
        self.handle = handle


RETURNS: dict[str, Any] = {
    "none": None,
    "one_block": TextBlock(text="hi"),
    "blocks": [TextBlock(text="caption"), DataBlock(data={"k": 1})],
    "mapping": {"a": [1, 2]},
    "empty_list": [],
    "number": 3.5,
}


@workflow
async def returns(which: str) -> Any:
    return RETURNS[which]


@pytest.mark.parametrize(
    ("which", "output"),
    [
        ("none", []),
        ("one_block", [TextBlock(text="hi")]),
        ("blocks", [TextBlock(text="caption"), DataBlock(data={"k": 1})]),
        ("mapping", [DataBlock(data={"a": [1, 2]})]),
        ("empty_list", [DataBlock(data=[])]),
        ("number", [DataBlock(data=3.5)]),
    ],
)
async def test_what_a_body_returns_becomes_the_output(
    which: str, output: list[ContentBlock]
) -> None:
    assert check_completed(await start(returns, which)) == output


@workflow
async def returns_opaque() -> Any:
    return Opaque(handle=7)


@workflow
async def returns_nan() -> Any:
    return {"ratio": float("nan")}


@pytest.mark.parametrize(("body", "kind"), [(returns_opaque, "Opaque"), (returns_nan, "dict")])
async def test_a_return_value_that_is_not_json_fails_the_run_naming_its_type(
    body: WorkflowDefinition, kind: str
) -> None:
    failed = check_failed(await start(body))
    assert failed.error_code == ErrorCode.ENGINE_ERROR
    assert f"returned a {kind}, which is neither content blocks nor JSON data" in failed.message


# =========================================================================== failures


@workflow
async def leaky(ctx: WorkflowCtx[Any]) -> None:
    await ctx.report("about to fail")
    raise PermissionError(SECRET)


async def test_a_raising_body_fails_the_run_with_its_exception_type_only() -> None:
    result = await start(leaky)
    failed = check_failed(result, failure_text=SECRET)
    assert failed == RunFailed(
        error_code=ErrorCode.ENGINE_ERROR, message="PermissionError", where="leaky"
    )
    assert result.raised is None, "the engine records the failure itself"
    assert all(SECRET not in event.to_json() for event in result.events)


@workflow
async def failing_step(ctx: WorkflowCtx[Any]) -> None:
    def charge() -> None:
        raise ConnectionError(SECRET)

    await ctx.step("prepare", lambda: "ready")
    await ctx.step("charge", charge)


async def test_an_exception_out_of_a_step_names_the_step_and_is_not_journaled() -> None:
    result = await start(failing_step)
    failed = check_failed(result, failure_text=SECRET)
    assert (failed.message, failed.where) == ("ConnectionError", "failing_step/charge")
    assert [s.name for s in steps_of(result)] == ["prepare"]


@workflow
async def recovers(ctx: WorkflowCtx[Any]) -> str:
    def flaky() -> str:
        raise TimeoutError(SECRET)

    try:
        await ctx.step("flaky", flaky)
    except TimeoutError:
        return "recovered"
    return "unreachable"


async def test_a_body_may_catch_what_a_step_raised() -> None:
    result = await start(recovers)
    assert check_completed(result) == [DataBlock(data="recovered")]
    assert steps_of(result) == []


@workflow
async def nested(ctx: WorkflowCtx[Any]) -> None:
    async def outer() -> str:
        return str(await ctx.step("inner", lambda: 1))

    await ctx.step("outer", outer)


async def test_journaled_operations_inside_a_step_fail_the_run() -> None:
    failed = check_failed(await start(nested))
    assert failed.where == "nested/outer"
    assert "ctx.step() was called inside step 'outer'" in failed.message


@workflow
async def bad_report(ctx: WorkflowCtx[Any]) -> None:
    await ctx.report("connected", client=Opaque(handle=1))


@workflow
async def bad_emit(ctx: WorkflowCtx[Any]) -> None:
    await ctx.emit("progress", 1)


@workflow
async def unnamed_step(ctx: WorkflowCtx[Any]) -> None:
    await ctx.step("", lambda: 1)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (bad_report, "fields client=Opaque"),
        (bad_emit, "namespaced name like 'app.thing'"),
        (unnamed_step, "ctx.step() needs a non-empty string name, not ''"),
    ],
)
async def test_a_context_misused_fails_the_run_saying_what_is_accepted(
    body: WorkflowDefinition, message: str
) -> None:
    failed = check_failed(await start(body))
    assert message in failed.message


# =========================================================================== context


@dataclass
class Shop:
    api_key: str
    visits: int = 0


@workflow
async def visits(ctx: WorkflowCtx[Shop]) -> int:
    ctx.data.visits += 1
    await ctx.report("visited", run=ctx.run_id)
    return ctx.data.visits


async def test_ctx_data_is_the_live_context_by_reference_and_never_logged() -> None:
    shop = Shop(api_key=SECRET)
    result = await start(visits, context=shop)
    assert check_completed(result) == [DataBlock(data=1)]
    assert shop.visits == 1
    report = next(e.payload for e in result.events if isinstance(e.payload, Report))
    assert report.fields == {"run": result.invocation.run_id}
    assert all(SECRET not in event.to_json() for event in result.events)
