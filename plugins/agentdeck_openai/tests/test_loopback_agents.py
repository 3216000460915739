"""The Agents SDK runs unchanged against the loopback server, over both OpenAI APIs.

Every test drives a real ``agents.Agent`` through ``Runner.run`` / ``Runner.run_streamed`` with
the SDK's own OpenAI models (or ``OpenAIProvider``), and asserts both what the run produced and
what the model was sent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import openai
import pytest
from agents import (
    Agent,
    Model,
    OpenAIChatCompletionsModel,
    OpenAIProvider,
    OpenAIResponsesModel,
    ReasoningItem,
    RunConfig,
    Runner,
    function_tool,
)
from openai import AsyncOpenAI
from openai.types.responses import ResponseTextDeltaEvent
from pydantic import BaseModel

from agentdeck_openai.testing import (
    API_KEY,
    MODEL,
    LoopbackModelServer,
    Usage,
    call,
    handoff,
    rate_limited,
    reply,
    server_error,
    structured,
    tool_call,
    tool_calls,
)

APIS = ["responses", "chat"]


@pytest.fixture(params=APIS)
def api(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def client(model_server: LoopbackModelServer) -> AsyncIterator[AsyncOpenAI]:
    client = AsyncOpenAI(base_url=model_server.base_url, api_key=API_KEY)
    yield client
    await client.close()


@pytest.fixture
def model(api: str, client: AsyncOpenAI) -> Model:
    if api == "responses":
        return OpenAIResponsesModel(MODEL, client)
    return OpenAIChatCompletionsModel(MODEL, client)


weather_calls: list[str] = []


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    weather_calls.append(city)
    return f"sunny in {city}"


@pytest.fixture(autouse=True)
def _fresh_weather_calls() -> None:
    weather_calls.clear()


def weather_agent(model: Model) -> Agent[None]:
    return Agent(
        name="weather", instructions="Answer weather questions.", tools=[get_weather], model=model
    )


# --------------------------------------------------------------------------- text


async def test_a_text_reply_is_the_final_output_and_the_model_saw_the_input(
    model_server: LoopbackModelServer, model: Model, api: str
) -> None:
    model_server.script.add(reply("Hello, Sagi."))
    result = await Runner.run(weather_agent(model), "my name is Sagi")
    assert result.final_output == "Hello, Sagi."
    [request] = model_server.requests
    assert request.api == api
    assert request.last_user_text == "my name is Sagi"
    assert request.instructions == "Answer weather questions."
    assert request.tool_names == ["get_weather"]


async def test_streamed_text_deltas_arrive_one_per_scripted_delta(
    model_server: LoopbackModelServer, model: Model
) -> None:
    model_server.script.add(reply(["It ", "is ", "sun", "ny."]))
    streamed = Runner.run_streamed(weather_agent(model), "weather?")
    deltas = [
        event.data.delta
        async for event in streamed.stream_events()
        if event.type == "raw_response_event" and isinstance(event.data, ResponseTextDeltaEvent)
    ]
    assert deltas == ["It ", "is ", "sun", "ny."]
    assert streamed.final_output == "It is sunny."
    assert model_server.requests[0].stream


async def test_the_provider_path_reaches_the_same_server(
    model_server: LoopbackModelServer, client: AsyncOpenAI, api: str
) -> None:
    model_server.script.add(reply("via provider"))
    provider = OpenAIProvider(openai_client=client, use_responses=api == "responses")
    agent = Agent(name="plain", model=MODEL)
    result = await Runner.run(agent, "hi", run_config=RunConfig(model_provider=provider))
    assert result.final_output == "via provider"
    assert [r.api for r in model_server.requests] == [api]


# --------------------------------------------------------------------------- tools


async def test_a_tool_call_round_trip_sends_the_output_back_to_the_model(
    model_server: LoopbackModelServer, model: Model
) -> None:
    model_server.script.add(
        tool_call("get_weather", {"city": "Paris"}, call_id="call-paris"), reply("It is sunny.")
    )
    result = await Runner.run(weather_agent(model), "weather in Paris?")
    assert result.final_output == "It is sunny."
    assert weather_calls == ["Paris"]
    first, second = model_server.requests
    assert first.tool_outputs == {}
    assert second.tool_calls == {"call-paris": ("get_weather", '{"city": "Paris"}')}
    assert second.tool_outputs == {"call-paris": "sunny in Paris"}


async def test_parallel_tool_calls_in_one_turn_are_all_answered(
    model_server: LoopbackModelServer, model: Model
) -> None:
    model_server.script.add(
        tool_calls(call("get_weather", {"city": "Paris"}), call("get_weather", {"city": "Rome"})),
        reply("Both sunny."),
    )
    result = await Runner.run(weather_agent(model), "Paris and Rome?")
    assert result.final_output == "Both sunny."
    assert sorted(weather_calls) == ["Paris", "Rome"]
    assert sorted(model_server.requests[1].tool_outputs.values()) == [
        "sunny in Paris",
        "sunny in Rome",
    ]


async def test_streamed_tool_calls_surface_as_run_items(
    model_server: LoopbackModelServer, model: Model
) -> None:
    model_server.script.add(tool_call("get_weather", {"city": "Oslo"}), reply("Cold."))
    streamed = Runner.run_streamed(weather_agent(model), "Oslo?")
    names = [
        event.name
        async for event in streamed.stream_events()
        if event.type == "run_item_stream_event"
    ]
    assert names == ["tool_called", "tool_output", "message_output_created"]
    assert weather_calls == ["Oslo"]


async def test_malformed_tool_arguments_reach_the_model_as_a_tool_error(
    model_server: LoopbackModelServer, model: Model
) -> None:
    model_server.script.add(tool_call("get_weather", '{"city": "Par'), reply("Sorry."))
    result = await Runner.run(weather_agent(model), "weather?")
    assert result.final_output == "Sorry."
    assert weather_calls == []  # the tool never ran on arguments it could not parse
    [output] = model_server.requests[1].tool_outputs.values()
    assert "error" in output.lower()


# --------------------------------------------------------------------------- handoffs, output


async def test_a_handoff_moves_the_conversation_to_the_named_agent(
    model_server: LoopbackModelServer, model: Model
) -> None:
    billing = Agent(name="Billing Desk", instructions="You handle billing.", model=model)
    triage = Agent(name="triage", instructions="Route.", handoffs=[billing], model=model)
    model_server.script.add(handoff("Billing Desk"), reply("Billing here."))
    result = await Runner.run(triage, "I need a refund")
    assert result.last_agent is billing
    assert result.final_output == "Billing here."
    first, second = model_server.requests
    assert first.tool_names == ["transfer_to_billing_desk"]
    assert second.instructions == "You handle billing."
    assert second.user_texts == ["I need a refund"]


class Forecast(BaseModel):
    city: str
    temperature: int


async def test_structured_output_parses_into_the_output_type(
    model_server: LoopbackModelServer, model: Model, api: str
) -> None:
    model_server.script.add(structured(Forecast(city="Paris", temperature=21)))
    agent = Agent(name="forecaster", output_type=Forecast, model=model)
    result = await Runner.run(agent, "forecast?")
    assert result.final_output == Forecast(city="Paris", temperature=21)
    body = model_server.requests[0].body
    schema_holder = body["text"]["format"] if api == "responses" else body["response_format"]
    assert "json_schema" in json.dumps(schema_holder)


# --------------------------------------------------------------------------- reasoning, usage


async def test_reasoning_is_reported_before_the_reply(
    model_server: LoopbackModelServer, model: Model
) -> None:
    model_server.script.add(reply("42.", reasoning="Think it through."))
    streamed = Runner.run_streamed(weather_agent(model), "meaning?")
    thought = [
        getattr(event.data, "delta", "")
        async for event in streamed.stream_events()
        if event.type == "raw_response_event"
        and event.data.type == "response.reasoning_summary_text.delta"
    ]
    assert thought == ["Think ", "it ", "through."]
    [reasoning] = [item for item in streamed.new_items if isinstance(item, ReasoningItem)]
    assert [s.text for s in reasoning.raw_item.summary] == ["Think it through."]
    assert streamed.final_output == "42."


async def test_usage_is_reported_per_model_call_and_summed_by_the_sdk(
    model_server: LoopbackModelServer, model: Model
) -> None:
    model_server.script.add(
        tool_call("get_weather", {"city": "Paris"}, usage=Usage(input_tokens=100, output_tokens=7)),
        reply("Sunny.", usage=Usage(input_tokens=140, output_tokens=3)),
    )
    result = await Runner.run(weather_agent(model), "Paris?")
    assert [r.usage.input_tokens for r in result.raw_responses] == [100, 140]
    total = result.context_wrapper.usage
    assert (total.requests, total.input_tokens, total.output_tokens) == (2, 240, 10)


# --------------------------------------------------------------------------- errors


async def test_a_429_is_retried_by_the_client_and_the_run_succeeds(
    model_server: LoopbackModelServer, model: Model
) -> None:
    model_server.script.add(rate_limited(), reply("After the wait."))
    result = await Runner.run(weather_agent(model), "hi")
    assert result.final_output == "After the wait."
    limited, retried = model_server.requests
    assert retried.body == limited.body
    assert retried.headers["x-stainless-retry-count"] == "1"


async def test_a_500_fails_the_run_with_the_clients_typed_error(
    model_server: LoopbackModelServer, model: Model
) -> None:
    model_server.script.add(server_error("model overloaded"))
    with pytest.raises(openai.InternalServerError, match="model overloaded"):
        await Runner.run(weather_agent(model), "hi")
    assert len(model_server.requests) == 1


async def test_a_retryable_500_is_retried_into_the_next_turn(
    model_server: LoopbackModelServer, model: Model
) -> None:
    model_server.script.add(server_error(retryable=True), reply("Recovered."))
    result = await Runner.run(weather_agent(model), "hi")
    assert result.final_output == "Recovered."
    assert len(model_server.requests) == 2


async def test_an_exhausted_script_fails_the_run_saying_so(
    model_server: LoopbackModelServer, model: Model
) -> None:
    model_server.script.add(tool_call("get_weather", {"city": "Paris"}))
    with pytest.raises(openai.InternalServerError, match="script is exhausted"):
        await Runner.run(weather_agent(model), "Paris?")
    assert weather_calls == ["Paris"]  # the first turn ran; the follow-up call found no turn


# --------------------------------------------------------------------------- routing, cancel


async def test_concurrent_runs_are_routed_by_rules_on_the_request(
    model_server: LoopbackModelServer, model: Model
) -> None:
    model_server.script.add(
        reply("Rainy in Oslo.", when=lambda r: r.last_user_text == "Oslo?"),
        reply("Sunny in Rome.", when=lambda r: r.last_user_text == "Rome?"),
    )
    oslo, rome = await asyncio.gather(
        Runner.run(weather_agent(model), "Oslo?"), Runner.run(weather_agent(model), "Rome?")
    )
    assert (oslo.final_output, rome.final_output) == ("Rainy in Oslo.", "Sunny in Rome.")


async def test_a_slow_stream_can_be_cancelled_mid_reply(
    model_server: LoopbackModelServer, model: Model
) -> None:
    # A minute before every delta: the run can only end promptly by being cancelled.
    model_server.script.add(reply("slow " * 3, delay=60), reply("next run"))
    streamed = Runner.run_streamed(weather_agent(model), "talk slowly")
    deltas: list[str] = []
    async for event in streamed.stream_events():
        if event.type != "raw_response_event":
            continue
        if event.data.type == "response.created":  # the model call has started answering
            streamed.cancel()
        if isinstance(event.data, ResponseTextDeltaEvent):
            deltas.append(event.data.delta)
    assert streamed.is_complete
    assert deltas == []
    assert streamed.final_output is None
    follow_up = await Runner.run(weather_agent(model), "again")
    assert follow_up.final_output == "next run"
