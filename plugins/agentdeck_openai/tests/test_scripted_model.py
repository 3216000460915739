"""The in-process scripted SDK model: the same scripted turns as the loopback server, no HTTP.

It has to be a faithful model for the SDK's runner (non-streamed and streamed), and a deck built
with ``plugins_with_model`` has to play runs on it exactly as on the server.
"""

from __future__ import annotations

import asyncio

import pytest
from agents import Agent as SDKAgent
from agents import RunConfig, Runner, function_tool
from agents.items import ToolCallOutputItem
from agents.stream_events import RawResponsesStreamEvent

from agentdeck import Agent, Deck, TurnResult, tool
from agentdeck.errors import ConfigError
from agentdeck.settings import Settings
from agentdeck_openai.testing import ModelRequest, Script, http_error, reply, tool_call
from agentdeck_openai.testing.model import (
    ScriptedModel,
    ScriptedModelProvider,
    plugins_with_model,
)

ENV = {"OPENAI_MODEL": "scripted", "OPENAI_API_KEY": "sk-unused"}


def _weather(city: str) -> str:
    """Report the weather."""
    return f"sunny in {city}"


def _answered(request: ModelRequest) -> bool:
    return bool(request.tool_outputs)


def _config(model: ScriptedModel) -> RunConfig:
    return RunConfig(model_provider=ScriptedModelProvider(model), tracing_disabled=True)


def _sdk_agent() -> SDKAgent[None]:
    return SDKAgent(
        name="Weather",
        instructions="Answer.",
        model="scripted",
        tools=[function_tool(_weather, name_override="get_weather")],
    )


def _script() -> Script:
    return Script(
        [
            tool_call("get_weather", {"city": "Paris"}, when=lambda r: not _answered(r)),
            reply("It is sunny in Paris.", deltas=5, when=_answered),
        ]
    )


async def test_runner_run_calls_the_tool_and_answers_from_the_script() -> None:
    model = ScriptedModel(_script())
    result = await Runner.run(_sdk_agent(), "weather?", run_config=_config(model))
    assert result.final_output == "It is sunny in Paris."
    assert model.calls == 2
    outputs = [item.output for item in result.new_items if isinstance(item, ToolCallOutputItem)]
    assert outputs == ["sunny in Paris"]


async def test_run_streamed_yields_every_delta_in_order_and_records_when_the_first_left() -> None:
    model = ScriptedModel(_script())
    result = Runner.run_streamed(_sdk_agent(), "weather?", run_config=_config(model))
    deltas = [
        event.data.delta
        async for event in result.stream_events()
        if isinstance(event, RawResponsesStreamEvent)
        and event.data.type == "response.output_text.delta"
    ]
    assert len(deltas) == 5 and "".join(deltas) == "It is sunny in Paris."
    assert result.final_output == "It is sunny in Paris."
    assert model.first_delta_at is not None


async def test_a_paced_turn_keeps_its_schedule_and_an_unscripted_call_says_so() -> None:
    model = ScriptedModel(Script([reply("a b c d", delay=0.01)]))
    agent = SDKAgent(name="Talker", instructions="Talk.", model="scripted")
    loop = asyncio.get_running_loop()
    started = loop.time()
    result = Runner.run_streamed(agent, "talk", run_config=_config(model))
    async for _ in result.stream_events():
        pass
    assert result.final_output == "a b c d"
    assert loop.time() - started >= 0.04  # four deltas, 10 ms apart
    with pytest.raises(ConfigError, match="exhausted"):
        await Runner.run(agent, "again", run_config=_config(model))


async def test_a_scripted_http_error_is_refused_with_a_pointer_to_the_server() -> None:
    model = ScriptedModel(Script([http_error(503, "down")]))
    agent = SDKAgent(name="Talker", instructions="Talk.", model="scripted")
    with pytest.raises(ConfigError, match="LoopbackModelServer"):
        await Runner.run(agent, "hi", run_config=_config(model))


async def test_a_deck_on_the_model_plays_a_tool_turn_and_streams_each_delta() -> None:
    model = ScriptedModel(_script())
    weather = Agent(
        name="Weather", instructions="Answer.", tools=[tool(name="get_weather")(_weather)]
    )
    deck = Deck(
        [weather],
        settings=Settings(env=ENV),
        plugins=plugins_with_model(ScriptedModelProvider(model)),
        observers=(),
    )
    async with deck:
        events = [event async for event in deck.stream("Weather", "weather?")]
        kinds = [event.kind for event in events]
        assert kinds.count("text.delta") == 5
        assert kinds.index("tool.call.started") < kinds.index("tool.call.completed")
        assert kinds[-1] == "run.completed"
        model.script.add(reply("Again sunny.", when=lambda r: True))
        result = await deck.run("Weather", "and now?")
        assert isinstance(result, TurnResult) and result.output == "Again sunny."
    assert model.calls == 3
