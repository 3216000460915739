"""Agents on a real Deck, over the loopback model server: the spec's examples, as written."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from agentdeck import (
    Agent,
    Deck,
    InterruptResult,
    RunFailed,
    RunFailedError,
    RunStatus,
    TextBlock,
    ToolCallCompleted,
    TurnResult,
    tool,
)
from agentdeck.settings import Settings
from agentdeck_openai.testing import LoopbackModelServer, reply, tool_call

# The spec's bundle, verbatim (its one long line is why this is a constant).
GREETER = (
    "from agentdeck import Agent\n\n"
    'greeter = Agent(name="Greeter", instructions="You are a friendly scheduling assistant. '
    'Keep replies to one short sentence.")\n'
)


def project(tmp_path: Path) -> Path:
    bundle = tmp_path / ".agentdeck" / "agents" / "greeter"
    bundle.mkdir(parents=True)
    (bundle / "agent.py").write_text(textwrap.dedent(GREETER))
    return tmp_path / ".agentdeck"


async def test_the_deck_reference_example_prints_output_usage_and_run_id(
    tmp_path: Path, model_server: LoopbackModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    model_server.script.add(reply("Hello! How can I help?", deltas=4))
    path = project(tmp_path)

    async def main() -> None:
        async with Deck.from_project(path, settings=Settings(env=model_server.env())) as deck:
            result = await deck.run("Greeter", "hello")
            print(result.output)
            print(result.usage)
            print(result.run_id)

    await main()
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Hello! How can I help?"
    assert "input_tokens=10" in out[1] and "output_tokens=5" in out[1] and "usd=None" in out[1]
    assert len(out[2]) == 32


async def test_the_sessions_example_prints_exactly_what_the_spec_says(
    tmp_path: Path, model_server: LoopbackModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    model_server.script.add(reply("Nice to meet you, Sagi!"), reply("Your name is Sagi."))
    path = project(tmp_path)

    async def main() -> None:
        async with Deck.from_project(path, settings=Settings(env=model_server.env())) as deck:
            await deck.run("Greeter", "my name is Sagi", session_id="wa-1")
            first_turn = await deck.session_for("wa-1").get_items()
            print("items after turn 1:", len(first_turn))

            await deck.run("Greeter", "what is my name?", session_id="wa-1")
            second_turn = await deck.session_for("wa-1").get_items()
            print("items after turn 2:", len(second_turn))
            first_item = second_turn[0]
            print("turn 1 is still there:", first_item["role"], first_item["content"])

    await main()
    assert capsys.readouterr().out.splitlines() == [
        "items after turn 1: 2",
        "items after turn 2: 4",
        "turn 1 is still there: user my name is Sagi",
    ]
    # The second model call was sent the first turn: that is what the session is for.
    assert "my name is Sagi" in str(model_server.model_requests[1].body)


@tool
def cancel_order(order_id: str) -> str:
    """Cancel an order."""
    return f"cancelled {order_id}"


def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id} is in transit"


def explode(order_id: str) -> str:
    """Always fails."""
    raise RuntimeError("database password is hunter2")


def deck_with(server: LoopbackModelServer, *agents: Agent) -> Deck:
    return Deck(agents=list(agents), settings=Settings(env=server.env()), observers=())


async def test_stream_yields_a_text_delta_per_token_and_a_turn_result_from_the_log(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(reply(["It ", "is ", "in ", "transit."]))
    bot = Agent(name="bot", instructions="Help.", tools=[lookup])
    async with deck_with(model_server, bot) as deck:
        events = [event async for event in deck.stream("bot", "where is A-1?")]
        deltas = [e.payload.text for e in events if e.kind == "text.delta"]  # type: ignore[union-attr]
        assert deltas == ["It ", "is ", "in ", "transit."]
        assert events[-1].kind == "run.completed"
        assert [e.seq for e in events] == list(range(len(events)))
        run = await deck.runs.get(events[0].run_id)
        result = await run
        assert isinstance(result, TurnResult)
        assert result.output == "It is in transit." and result.blocks[-1] == TextBlock(
            text="It is in transit."
        )


async def test_a_tool_call_round_trip_and_a_raising_tool_reaches_the_model_as_an_error(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(
        tool_call("lookup", {"order_id": "A-1"}),
        reply("It is in transit."),
        tool_call("explode", {"order_id": "A-2"}, call_id="x1"),
        reply("Something went wrong on our side."),
    )
    bot = Agent(name="bot", instructions="Help.", tools=[lookup, explode])
    async with deck_with(model_server, bot) as deck:
        result = await deck.run("bot", "where is A-1?")
        assert result.output == "It is in transit."
        broken = await deck.run("bot", "break it")
        assert broken.output == "Something went wrong on our side."
        run = await deck.runs.get(broken.run_id)
        log = [event async for event in run.events()]
        [completed] = [e.payload for e in log if isinstance(e.payload, ToolCallCompleted)]
        assert completed.error == "RuntimeError: database password is hunter2"
        sent = model_server.model_requests[-1].tool_outputs["x1"]
        assert sent == "An error occurred while running the tool. Please try again."


async def test_with_tool_errors_fail_a_raising_tool_fails_the_run_naming_only_its_type(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(tool_call("explode", {"order_id": "A-2"}))
    bot = Agent(name="bot", instructions="Help.", tools=[lookup, explode], tool_errors="fail")
    async with deck_with(model_server, bot) as deck:
        with pytest.raises(RunFailedError) as failed:
            await deck.run("bot", "break it")
        assert failed.value.error_code == "tool_error" and failed.value.where == "explode"
        assert "hunter2" not in str(failed.value)
        run = await deck.runs.get(failed.value.run_id)
        log = [event async for event in run.events()]
        [ending] = [e.payload for e in log if isinstance(e.payload, RunFailed)]
        assert ending.message == "tool 'explode' raised RuntimeError"
        [completed] = [e.payload for e in log if isinstance(e.payload, ToolCallCompleted)]
        assert completed.error == "RuntimeError: database password is hunter2"
    assert len(model_server.model_requests) == 1


async def test_an_approval_parks_the_run_and_an_answer_continues_it(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(tool_call("cancel_order", {"order_id": "A-7"}), reply("Cancelled."))
    bot = Agent(
        name="bot", instructions="Help.", tools=[cancel_order], interrupt_on=["cancel_order"]
    )
    async with deck_with(model_server, bot) as deck:
        parked = await deck.run("bot", "cancel A-7")
        assert isinstance(parked, InterruptResult)
        assert parked.payload["tool"] == "cancel_order"
        run = await deck.runs.get(parked.run_id)
        assert await run.status() is RunStatus.WAITING_ANSWER
        await run.answer({"approved": True})
        result = await run
        assert result.output == "Cancelled."
        kinds = [event.kind async for event in run.events()]
        assert kinds.index("approval.decided") < kinds.index("tool.call.completed")


async def test_cancel_during_a_long_stream_stops_at_the_next_stream_item(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(reply([f"w{i} " for i in range(200)], delay=0.01))
    bot = Agent(name="bot", instructions="Talk.")
    async with deck_with(model_server, bot) as deck:
        run = await deck.runs.start("bot", "talk a lot")
        async for event in run.events(follow=True):
            if event.kind == "text.delta":
                await run.cancel("enough")
                break
        with pytest.raises(RunFailedError):
            await asyncio.wait_for(run.result(), timeout=30)
        kinds = [event.kind async for event in run.events()]
        assert kinds[-3:] == ["control.requested", "control.observed", "run.cancelled"]
        assert kinds.count("text.delta") < 200


async def test_the_agents_sdks_default_model_reaches_the_model_when_openai_model_is_unset(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(reply("hi"))
    env = {k: v for k, v in model_server.env().items() if k != "OPENAI_MODEL"}
    env["OPENAI_DEFAULT_MODEL"] = "sdk-default-model"
    agent = Agent(name="Plain", instructions="Say hi.")

    async with Deck(agents=[agent], settings=Settings(env=env), observers=()) as deck:
        result = await deck.run("Plain", "hello")

    assert result.output == "hi"
    [request] = model_server.model_requests
    assert request.body["model"] == "sdk-default-model"
