"""The streamed play's per-item path: the safe-point gate, text deltas, and what a play skips.

These pin the behaviour the cheaper hot path must keep: safe points reached together take turns
and never reach the runtime concurrently, a directive is asked for once, a text delta is the
validated model, ``play()`` fails at its first step (not when called), and a fresh run that
saved nothing leaves the state area alone while a continued one still clears it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from agents.models.fake_id import FAKE_RESPONSES_ID
from agents.stream_events import RawResponsesStreamEvent
from openai.types.responses import ResponseTextDeltaEvent

from agentdeck import Agent
from agentdeck.errors import ConfigError
from agentdeck.model.content import TextBlock
from agentdeck.model.payloads import RunCancelled, TextDelta
from agentdeck.ports import ControlDirective, EngineRequest, Entry, Invocable, Invocation
from agentdeck.settings import Settings
from agentdeck.testing.engine_kit import MemoryStateArea
from agentdeck.vocabulary import ControlVerb, SafePoint
from agentdeck_openai.engine import OpenAIEngine
from agentdeck_openai.scope import RunScope
from agentdeck_openai.testing import Script, reply
from agentdeck_openai.testing.model import ScriptedModel, ScriptedModelProvider
from agentdeck_openai.translate import Translator

_GREETER = Agent(name="Greeter", instructions="Greet.")
_CANCEL = ControlDirective(verb=ControlVerb.CANCEL, payloads=(RunCancelled(reason="stop"),))


def _invocable() -> Invocable:
    return Invocable(name="a", kind="agent", engine="openai", definition=None, compiled=None)


class _Runtime:
    """A checkpoint that parks each call until released, recording overlap and order."""

    def __init__(self) -> None:
        self.calls: list[SafePoint] = []
        self.inside = 0
        self.overlapped = False
        self.release: asyncio.Event = asyncio.Event()
        self.answer: ControlDirective | None = None

    async def checkpoint(self, point: SafePoint) -> ControlDirective | None:
        self.calls.append(point)
        self.inside += 1
        self.overlapped = self.overlapped or self.inside > 1
        try:
            await self.release.wait()
        finally:
            self.inside -= 1
        return self.answer


def _scope(runtime: _Runtime) -> RunScope:
    return RunScope(
        Invocation(run_id="r1", invocable=_invocable(), input=[], checkpoint=runtime.checkpoint)
    )


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


# ============================================================================ the gate


async def test_safe_points_reached_together_take_turns_in_order() -> None:
    runtime = _Runtime()
    scope = _scope(runtime)
    points = [SafePoint.STREAM_ITEM, SafePoint.TOOL_DISPATCH, SafePoint.STREAM_ITEM]
    tasks = [asyncio.create_task(scope.safepoint(point)) for point in points]
    await _settle()
    assert runtime.calls == [SafePoint.STREAM_ITEM]  # the others wait for the first
    runtime.release.set()
    assert await asyncio.gather(*tasks) == [None, None, None]
    assert runtime.calls == points and not runtime.overlapped
    assert await scope.safepoint(SafePoint.STREAM_ITEM) is None  # and the gate is free again
    assert len(runtime.calls) == 4


async def test_a_directive_answers_the_waiting_safe_points_without_asking_again() -> None:
    runtime = _Runtime()
    runtime.answer = _CANCEL
    scope = _scope(runtime)
    halted: list[bool] = []
    scope.attach(lambda: halted.append(True))
    tasks = [asyncio.create_task(scope.safepoint(SafePoint.STREAM_ITEM)) for _ in range(3)]
    await _settle()
    runtime.release.set()
    assert await asyncio.gather(*tasks) == [_CANCEL, _CANCEL, _CANCEL]
    assert len(runtime.calls) == 1 and halted == [True]
    assert scope.stopping and await scope.safepoint(SafePoint.TOOL_DISPATCH) is _CANCEL


async def test_a_waiter_cancelled_in_the_queue_holds_up_nobody() -> None:
    runtime = _Runtime()
    scope = _scope(runtime)
    first = asyncio.create_task(scope.safepoint(SafePoint.STREAM_ITEM))
    second = asyncio.create_task(scope.safepoint(SafePoint.TOOL_DISPATCH))
    third = asyncio.create_task(scope.safepoint(SafePoint.STREAM_ITEM))
    await _settle()
    second.cancel()
    await _settle()
    runtime.release.set()
    assert await first is None and await third is None
    assert second.cancelled()
    assert runtime.calls == [SafePoint.STREAM_ITEM, SafePoint.STREAM_ITEM]
    assert await scope.safepoint(SafePoint.STREAM_ITEM) is None


async def test_a_waiter_cancelled_once_handed_the_gate_passes_it_on() -> None:
    scope = _scope(_Runtime())
    gate = asyncio.Event()
    tasks: list[asyncio.Task[ControlDirective | None]] = []
    calls: list[SafePoint] = []

    async def held(point: SafePoint) -> ControlDirective | None:
        calls.append(point)
        if len(calls) == 1:
            await gate.wait()
            # Runs before the second waiter takes the gate this call hands it on return.
            asyncio.get_running_loop().call_soon(tasks[1].cancel)
        return None

    scope.invocation.checkpoint = held
    points = [SafePoint.STREAM_ITEM, SafePoint.TOOL_DISPATCH, SafePoint.STREAM_ITEM]
    tasks.extend(asyncio.create_task(scope.safepoint(point)) for point in points)
    await _settle()
    gate.set()
    assert await tasks[0] is None
    assert await asyncio.wait_for(tasks[2], 1) is None  # the gate was passed on
    assert tasks[1].cancelled()
    assert calls == [SafePoint.STREAM_ITEM, SafePoint.STREAM_ITEM]  # the cancelled one never asked
    assert await asyncio.wait_for(scope.safepoint(SafePoint.STREAM_ITEM), 1) is None


async def test_without_a_checkpoint_every_safe_point_passes() -> None:
    scope = RunScope(Invocation(run_id="r1", invocable=_invocable(), input=[]))
    assert await scope.safepoint(SafePoint.STREAM_ITEM) is None


# ============================================================================ text deltas


def _delta(text: str, item_id: str) -> RawResponsesStreamEvent:
    return RawResponsesStreamEvent(
        data=ResponseTextDeltaEvent(
            type="response.output_text.delta",
            delta=text,
            item_id=item_id,
            output_index=0,
            content_index=0,
            sequence_number=1,
            logprobs=[],
        )
    )


def test_a_text_delta_is_the_model_validation_builds() -> None:
    translator = Translator(_scope(_Runtime()))
    [payload] = translator.translate(_delta("Hel", "msg_1"))
    expected = TextDelta(message_id="msg_1", text="Hel")
    assert type(payload) is TextDelta and payload == expected
    assert payload.model_fields_set == expected.model_fields_set
    assert payload.model_dump_json() == expected.model_dump_json()
    assert translator.translate(_delta("", "msg_1")) == ()


def test_text_deltas_under_the_placeholder_id_get_one_made_up_id_per_model_call() -> None:
    translator = Translator(_scope(_Runtime()))
    [a] = translator.translate(_delta("a", FAKE_RESPONSES_ID))
    [b] = translator.translate(_delta("b", FAKE_RESPONSES_ID))
    assert isinstance(a, TextDelta) and isinstance(b, TextDelta)
    assert a.message_id == b.message_id == "msg-r1-0-1"


# ============================================================================ the engine's play


class _CountingArea(MemoryStateArea):
    def __init__(self) -> None:
        super().__init__()
        self.deletes = 0

    async def delete(self, name: str) -> None:
        self.deletes += 1
        await super().delete(name)


@pytest.fixture
def engine() -> Iterator[OpenAIEngine]:
    provider = ScriptedModelProvider(ScriptedModel(Script([reply("Hi there.", times=None)])))
    settings = Settings(env={"OPENAI_MODEL": "scripted", "OPENAI_API_KEY": "sk-unused"})
    yield OpenAIEngine(EngineRequest(settings=settings), model_provider=provider)


def _invocation(engine: OpenAIEngine, **fields: Any) -> Invocation:
    invocable = engine.compile(_GREETER)
    return Invocation(run_id="r1", invocable=invocable, input=[TextBlock(text="hello")], **fields)


async def test_play_fails_at_its_first_step_not_when_called(engine: OpenAIEngine) -> None:
    plays = engine.play(_invocation(engine))  # not opened: refused, but only once iterated
    with pytest.raises(ConfigError, match="only while it is open"):
        await anext(plays)


async def test_a_fresh_play_that_saved_nothing_leaves_the_state_area_alone(
    engine: OpenAIEngine,
) -> None:
    await engine.open()
    try:
        area = _CountingArea()
        kinds = [p.kind async for p in engine.play(_invocation(engine, state=area))]
        assert kinds[-1] == "run.completed" and "text.delta" in kinds
        assert area.deletes == 0
        continued = _invocation(engine, state=area, entry=Entry.AFTER_PAUSE)
        kinds = [p.kind async for p in engine.play(continued)]
        assert kinds[-1] == "run.completed" and area.deletes == 1
    finally:
        await engine.close()


async def test_each_play_gets_its_own_run_config(engine: OpenAIEngine) -> None:
    provider = engine._model_provider()
    one = engine._run_config(provider, _invocation(engine))
    two = engine._run_config(provider, Invocation(run_id="r2", invocable=_invocable(), input=[]))
    assert one is not two and one.model_provider is two.model_provider is provider
    assert one.trace_metadata == {"agentdeck_run_id": "r1"}
    assert two.trace_metadata == {"agentdeck_run_id": "r2"}
    assert one.tool_not_found_behavior == "return_error_to_model"
