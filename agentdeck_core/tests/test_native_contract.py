"""The native ``@workflow`` engine against the engine contract kit, and the kit's one rule the
native engine needed: a play may park on several questions at once.

``TestNativeWorkflowEngineContract`` runs every contract test (the engine declares every
capability, so none may skip): completing, failing without leaking text, streaming through
``ctx.safepoint()``, pausing and cancelling there, parking on ``ctx.ask`` and continuing -- the
durable tests on a second engine instance that has only the log.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar

import pytest

from agentdeck import WorkflowCtx, workflow
from agentdeck.model.content import ContentBlock, DataBlock
from agentdeck.model.payloads import Payload, Report, RunInterrupted
from agentdeck.native import NativeWorkflowEngine
from agentdeck.ports import Engine, EngineCapabilities, Invocable, Invocation
from agentdeck.testing.engine_kit import (
    ContractRule,
    EngineContract,
    EngineScenarios,
    check_interrupted,
    drive,
    make_invocation,
)
from agentdeck.vocabulary import SafePoint

SECRET = "card 4242-4242-4242-4242 declined"


@workflow
async def completes(text: str) -> str:
    return f"done: {text}"


@workflow
async def fails(text: str, ctx: WorkflowCtx[Any]) -> None:
    await ctx.report("charging", text=text)
    raise RuntimeError(SECRET)


@workflow
async def streams(text: str, ctx: WorkflowCtx[Any]) -> str:
    await ctx.report("first half", text=text)
    await ctx.safepoint()
    await ctx.report("second half")
    await ctx.safepoint()
    return "ab"


@workflow
async def asks(text: str, ctx: WorkflowCtx[Any]) -> dict[str, Any]:
    answer = await ctx.ask({"question": "go?", "about": text})
    return {"answer": answer}


def _expected_output(name: str, output: list[ContentBlock]) -> bool:
    expected: dict[str, list[ContentBlock]] = {
        "completes": [DataBlock(data="done: hello")],
        "streams": [DataBlock(data="ab")],
        "asks": [DataBlock(data={"answer": "yes"})],
    }
    assert output == expected[name], f"{name}: {output!r}"
    return True


class TestNativeWorkflowEngineContract(EngineContract):
    @pytest.fixture
    def engine_factory(self) -> Callable[[], Engine]:
        return NativeWorkflowEngine

    @pytest.fixture
    def scenarios(self) -> EngineScenarios:
        return EngineScenarios(
            completes=completes,
            fails=fails,
            streams=streams,
            asks=asks,
            answer_value="yes",
            failure_text=SECRET,
            input=[DataBlock(data={"text": "hello"})],
            check_output=_expected_output,
        )


# =========================================================================== several questions
# The kit's drain accepts consecutive run.interrupted payloads (a run parking on several
# questions at once) and still refuses anything else after a suspending payload.


class _FakeEngine(Engine):
    name: ClassVar[str] = "fake"
    capabilities: ClassVar[EngineCapabilities] = EngineCapabilities(interrupts=True)
    tail: ClassVar[list[Payload]] = []

    def accepts(self, definition: object) -> bool:
        return definition == "fake"

    def compile(self, definition: object) -> Invocable:
        return Invocable(name="fake", kind="workflow", engine=self.name, definition=definition)

    async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
        yield RunInterrupted(interrupt_id="first", payload="one?")
        for payload in self.tail:
            yield payload


async def test_the_kit_records_every_question_a_play_parks_on() -> None:
    class TwoQuestions(_FakeEngine):
        tail: ClassVar[list[Payload]] = [RunInterrupted(interrupt_id="second", payload="two?")]

    engine = TwoQuestions()
    result = await drive(engine, make_invocation(engine, "fake"))
    assert check_interrupted(result) == "second"
    assert result.open_interrupts == ["first", "second"]
    assert result.kinds == ["run.started", "run.interrupted", "run.interrupted"]


async def test_the_kit_still_refuses_anything_else_after_a_question() -> None:
    class ReportsAfter(_FakeEngine):
        tail: ClassVar[list[Payload]] = [Report(message="late")]

    engine = ReportsAfter()
    result = await drive(engine, make_invocation(engine, "fake"))
    assert [violation.rule for violation in result.violations] == [ContractRule.AFTER_FINAL]
    assert result.kinds == ["run.started", "run.interrupted"], "nothing is recorded after it"


async def test_the_workflow_safe_point_is_the_one_declared() -> None:
    assert NativeWorkflowEngine.capabilities.safe_points == {SafePoint.WORKFLOW_SAFEPOINT}
    engine = NativeWorkflowEngine()
    invocation = make_invocation(engine, streams, [DataBlock(data="x")])
    result = await drive(engine, invocation)
    assert result.safe_points == (SafePoint.WORKFLOW_SAFEPOINT, SafePoint.WORKFLOW_SAFEPOINT)
