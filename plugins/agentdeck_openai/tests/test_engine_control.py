"""Run control and failures: pause and cancel at safe points, model endpoint errors.

Safe points are numbered as the kit's driver counts them (from 1); a directive answers one of
them, as the runtime does when a pause or cancel is pending.
"""

from __future__ import annotations

import engine_support as support  # loaded by conftest.py

from agentdeck import Agent
from agentdeck.authoring.tools import tool
from agentdeck.model.content import TextBlock
from agentdeck.model.payloads import RunFailed, TextDelta, ToolCallCompleted
from agentdeck.ports import Entry
from agentdeck.testing.engine_kit import (
    DriveResult,
    MemoryStateArea,
    check_completed,
    check_control,
    drive,
    make_invocation,
)
from agentdeck.vocabulary import ControlVerb, ErrorCode, SafePoint
from agentdeck_openai.approvals import STATE_NAME
from agentdeck_openai.testing import (
    LoopbackModelServer,
    rate_limited,
    reply,
    server_error,
    tool_call,
)

RAN: list[int] = []


@tool
def count(n: int) -> str:
    """Count something (records each call)."""
    RAN.append(n)
    return f"counted {n}"


def area_of(result: DriveResult) -> MemoryStateArea:
    area = result.state_area
    assert isinstance(area, MemoryStateArea)
    return area


COUNTER = Agent(name="Counter", instructions="Count.", tools=[count])
TALKER = Agent(name="Talker", instructions="Talk.")
LONG_TEXT = " ".join(f"w{i}" for i in range(200))


async def test_cancel_during_a_slow_long_stream_stops_it_there(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(reply(LONG_TEXT, delay=0.01))
    async with support.opened(support.make_engine(model_server)) as engine:
        result = await drive(
            engine, make_invocation(engine, TALKER, "talk"), directives={3: ControlVerb.CANCEL}
        )

    check_control(result, ControlVerb.CANCEL)
    deltas = support.payloads(result, TextDelta)
    assert len(deltas) == 3  # one delta per safe point, then the stop
    assert result.safe_points == (SafePoint.STREAM_ITEM,) * 3
    assert STATE_NAME not in area_of(result).snapshot()


async def test_a_pause_mid_stream_continues_without_repeating_a_tool(
    model_server: LoopbackModelServer,
) -> None:
    RAN.clear()
    model_server.script.add(
        tool_call("count", {"n": 1}, call_id="k1"),
        reply("counted once", delay=0.01, times=2),
    )
    invocation_text = "count"
    async with support.opened(support.make_engine(model_server)) as engine:
        invocation = make_invocation(engine, COUNTER, invocation_text)
        # safe points: usage, tool started, tool dispatch, tool completed, usage... pause at the
        # first text delta of the second model call.
        paused = await drive(engine, invocation, directives={6: ControlVerb.PAUSE})
    check_control(paused, ControlVerb.PAUSE)
    assert support.payloads(paused, ToolCallCompleted)  # the tool ran before the pause
    assert STATE_NAME in area_of(paused).snapshot()

    async with support.opened(support.make_engine(model_server)) as fresh:
        resumed = await drive(
            fresh,
            make_invocation(fresh, COUNTER),
            history=paused.events,
            entry=Entry.AFTER_PAUSE,
            state=area_of(paused).copy(),
        )

    assert check_completed(resumed) == [TextBlock(text="counted once")]
    assert RAN == [1]
    last = model_server.model_requests[-1]
    assert last.tool_outputs == {"k1": "counted 1"}
    assert last.user_texts == ["count"]  # the input is not sent twice


async def test_a_pause_at_tool_dispatch_never_runs_the_tool_and_asks_again(
    model_server: LoopbackModelServer,
) -> None:
    RAN.clear()
    model_server.script.add(tool_call("count", {"n": 2}, times=2), reply("done"))
    async with support.opened(support.make_engine(model_server)) as engine:
        paused = await drive(
            engine, make_invocation(engine, COUNTER, "go"), directives={3: ControlVerb.PAUSE}
        )
        check_control(paused, ControlVerb.PAUSE)
        assert paused.safe_points[-1] == SafePoint.TOOL_DISPATCH
        assert RAN == []

        resumed = await drive(
            engine,
            make_invocation(engine, COUNTER),
            history=paused.events,
            entry=Entry.AFTER_PAUSE,
            state=paused.state_area,
        )

    assert check_completed(resumed) == [TextBlock(text="done")]
    assert RAN == [2]
    assert len(model_server.model_requests) == 3  # the turn that asked for the tool is re-asked


async def test_a_cancel_at_tool_dispatch_never_runs_the_tool(
    model_server: LoopbackModelServer,
) -> None:
    RAN.clear()
    model_server.script.add(tool_call("count", {"n": 3}))
    async with support.opened(support.make_engine(model_server)) as engine:
        result = await drive(
            engine, make_invocation(engine, COUNTER, "go"), directives={3: ControlVerb.CANCEL}
        )

    check_control(result, ControlVerb.CANCEL)
    assert result.safe_points[-1] == SafePoint.TOOL_DISPATCH
    assert RAN == []


# --------------------------------------------------------------------------- model errors


async def test_a_429_then_success_completes_the_run(model_server: LoopbackModelServer) -> None:
    model_server.script.add(rate_limited(), reply("finally"))
    async with support.opened(support.make_engine(model_server)) as engine:
        result = await drive(engine, make_invocation(engine, TALKER, "hi"))

    assert check_completed(result) == [TextBlock(text="finally")]
    assert len(model_server.model_requests) == 2


async def test_a_model_endpoint_error_fails_the_run_without_its_text(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(server_error("upstream exploded near key sk-live-123"))
    async with support.opened(support.make_engine(model_server)) as engine:
        result = await drive(engine, make_invocation(engine, TALKER, "hi"))

    result.assert_clean()
    failed = result.last.payload
    assert isinstance(failed, RunFailed)
    assert failed.error_code == ErrorCode.ENGINE_ERROR
    assert failed.message == "the model endpoint answered HTTP 500 (InternalServerError)"
    assert failed.retryable is True
    assert "sk-live-123" not in support.everything_logged(result)


async def test_running_out_of_turns_is_budget_exceeded(model_server: LoopbackModelServer) -> None:
    RAN.clear()
    model_server.script.add(tool_call("count", {"n": 1}, times=None))
    async with support.opened(
        support.make_engine(model_server, AGENTDECK_RUNNER_MAX_TURNS="2")
    ) as engine:
        result = await drive(engine, make_invocation(engine, COUNTER, "loop"))

    failed = result.last.payload
    assert isinstance(failed, RunFailed)
    assert failed.error_code == ErrorCode.BUDGET_EXCEEDED
    assert "2 model turns" in failed.message
    assert RAN == [1, 1]
