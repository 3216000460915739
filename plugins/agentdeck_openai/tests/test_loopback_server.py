"""The loopback server over real HTTP, driven by the official ``openai`` client.

Both APIs, streamed and not, answer closely enough that the client parses them into its own
typed objects; every request is recorded; errors come back as the client's typed errors.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import openai
import pytest
from agents import (
    Agent,
    OpenAIResponsesModel,
    Runner,
    TracingProcessor,
    add_trace_processor,
    flush_traces,
    set_trace_processors,
)
from agents.tracing import Span, Trace
from openai import AsyncOpenAI

from agentdeck.errors import ConfigError
from agentdeck_openai.testing import (
    API_KEY,
    MODEL,
    LoopbackModelServer,
    ModelRequest,
    Rule,
    Script,
    Usage,
    http_error,
    reply,
    tool_call,
)


@pytest.fixture
async def client(model_server: LoopbackModelServer) -> AsyncIterator[AsyncOpenAI]:
    client = AsyncOpenAI(base_url=model_server.base_url, api_key=API_KEY)
    yield client
    await client.close()


# --------------------------------------------------------------------------- lifecycle


def test_it_serves_on_a_free_loopback_port_only_while_started() -> None:
    server = LoopbackModelServer()
    with pytest.raises(ConfigError, match="until it is started"):
        _ = server.port
    with server:
        port = server.port
        assert server.base_url == f"http://127.0.0.1:{port}/v1"
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        with pytest.raises(ConfigError, match="already started"):
            server.start()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    server.stop()  # idempotent


def test_it_can_be_started_again_after_stopping() -> None:
    server = LoopbackModelServer(Script([reply("one"), reply("two")]))
    for expected in ("one", "two"):
        with server, httpx2.Client() as http:
            answer = http.post(f"{server.base_url}/chat/completions", json={"messages": []})
            assert answer.json()["choices"][0]["message"]["content"] == expected


def test_the_pytest_fixtures_give_a_started_server_and_settings_pointing_at_it(
    model_server: LoopbackModelServer, openai_env: dict[str, str]
) -> None:
    assert model_server.script.pending == ()
    assert openai_env == {
        "OPENAI_BASE_URL": model_server.base_url,
        "OPENAI_API_KEY": "sk-loopback",
        "OPENAI_MODEL": "loopback-model",
    }


# --------------------------------------------------------------------------- answers


async def test_a_chat_completion_carries_text_and_usage(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    model_server.script.add(reply("Hello there", usage=Usage(input_tokens=7, output_tokens=3)))
    completion = await client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}]
    )
    assert completion.choices[0].message.content == "Hello there"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (7, 3)
    assert completion.usage.total_tokens == 10


async def test_a_response_carries_text_calls_and_usage(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    model_server.script.add(tool_call("get_weather", {"city": "Paris"}, call_id="c-1"))
    response = await client.responses.create(model=MODEL, input="weather in Paris?")
    [item] = response.output
    assert item.type == "function_call"
    assert (item.call_id, item.name, json.loads(item.arguments)) == (
        "c-1",
        "get_weather",
        {"city": "Paris"},
    )
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (10, 5)


async def test_streamed_chat_text_arrives_one_chunk_per_scripted_delta(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    model_server.script.add(reply(["It ", "is ", "sunny"]))
    stream = await client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "weather?"}], stream=True
    )
    deltas = []
    usage = None
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            deltas.append(chunk.choices[0].delta.content)
        usage = chunk.usage or usage
    assert deltas == ["It ", "is ", "sunny"]
    assert usage is not None
    assert usage.total_tokens == 15


async def test_a_streamed_response_is_the_full_typed_event_sequence(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    model_server.script.add(reply(["It ", "is ", "sunny"]))
    stream = await client.responses.create(model=MODEL, input="weather?", stream=True)
    events = [event async for event in stream]
    assert [event.type for event in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [event.sequence_number for event in events] == list(range(len(events)))
    assert [getattr(e, "delta", None) for e in events if e.type.endswith(".delta")] == [
        "It ",
        "is ",
        "sunny",
    ]
    completed = events[-1]
    assert completed.type == "response.completed"
    assert completed.response.output_text == "It is sunny"


async def test_streamed_function_calls_send_their_arguments_in_deltas(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    model_server.script.add(tool_call("get_weather", {"city": "Paris"}))
    stream = await client.responses.create(model=MODEL, input="weather?", stream=True)
    events = [event async for event in stream]
    deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert deltas == ['{"city":', ' "Paris"}']
    [done] = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert done.arguments == '{"city": "Paris"}'


async def test_the_models_route_lists_the_loopback_model(client: AsyncOpenAI) -> None:
    models = await client.models.list()
    assert [m.id async for m in models] == [MODEL]


# --------------------------------------------------------------------------- recording


async def test_every_request_is_recorded_with_path_headers_and_body(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    model_server.script.add(reply("one"), reply("two"))
    await client.chat.completions.create(
        model="gpt-x", messages=[{"role": "user", "content": "first"}]
    )
    await client.responses.create(model="gpt-y", input="second", instructions="Be brief.")
    first, second = model_server.requests
    assert (first.index, first.method, first.path, first.api) == (
        0,
        "POST",
        "/v1/chat/completions",
        "chat",
    )
    assert first.headers["authorization"] == f"Bearer {API_KEY}"
    assert first.body == {"model": "gpt-x", "messages": [{"role": "user", "content": "first"}]}
    assert (second.path, second.model, second.last_user_text) == (
        "/v1/responses",
        "gpt-y",
        "second",
    )
    assert second.instructions == "Be brief."
    model_server.clear_requests()
    assert model_server.requests == []


async def test_concurrent_requests_are_each_answered_by_their_own_rule(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    def asks(word: str) -> Rule:
        return lambda request: request.last_user_text == word

    words = [f"w{i}" for i in range(24)]
    model_server.script.add(*(reply(f"answer {w}", when=asks(w)) for w in words))

    async def ask(word: str) -> str | None:
        completion = await client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": word}]
        )
        return completion.choices[0].message.content

    answers = await asyncio.gather(*(ask(w) for w in words))
    assert answers == [f"answer {w}" for w in words]
    assert sorted(r.index for r in model_server.requests) == list(range(24))
    model_server.script.assert_consumed()


# --------------------------------------------------------------------------- errors


async def test_running_out_of_script_is_a_500_that_says_so_and_is_not_retried(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    with pytest.raises(openai.InternalServerError) as failed:
        await client.responses.create(model=MODEL, input="anyone there?")
    assert "script is exhausted" in str(failed.value)
    assert "'anyone there?'" in str(failed.value)
    assert len(model_server.requests) == 1  # x-should-retry: false stops the client's retries


async def test_a_rule_that_raises_is_reported_as_a_500_naming_the_error(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    def broken(request: ModelRequest) -> bool:
        raise KeyError("oops")

    model_server.script.add(reply("never", when=broken))
    with pytest.raises(openai.InternalServerError, match="when-rule raised KeyError"):
        await client.responses.create(model=MODEL, input="x")


async def test_unknown_routes_and_non_json_bodies_are_refused(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    with pytest.raises(openai.NotFoundError, match="no route POST /v1/embeddings"):
        await client.embeddings.create(model=MODEL, input="x")
    async with httpx2.AsyncClient() as http:
        answer = await http.post(f"{model_server.base_url}/responses", content=b"{not json")
    assert answer.status_code == 400
    assert "not JSON" in answer.json()["error"]["message"]
    assert model_server.requests[-1].body == "{not json"
    assert model_server.model_requests[-1].path == "/v1/responses"


async def test_any_scripted_status_reaches_the_client_with_its_headers(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    model_server.script.add(http_error(418, "I am a teapot", headers={"x-brew": "earl grey"}))
    with pytest.raises(openai.APIStatusError) as failed:
        await client.responses.create(model=MODEL, input="x")
    assert failed.value.status_code == 418
    assert failed.value.response.headers["x-brew"] == "earl grey"
    assert "I am a teapot" in str(failed.value)


async def test_a_chunked_request_body_is_read_whole(model_server: LoopbackModelServer) -> None:
    model_server.script.add(reply("got it"))

    async def body() -> AsyncIterator[bytes]:
        yield b'{"model": "m", "input": '
        yield b'"in pieces"}'

    async with httpx2.AsyncClient() as http:
        answer = await http.post(f"{model_server.base_url}/responses", content=body())
    assert answer.status_code == 200
    assert model_server.requests[0].headers["transfer-encoding"] == "chunked"
    assert model_server.requests[0].last_user_text == "in pieces"


# --------------------------------------------------------------------------- slow streams


async def test_a_client_that_hangs_up_mid_stream_leaves_the_server_serving(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    model_server.script.add(reply("slow " * 10, delay=0.05), reply("next"))
    stream = await client.responses.create(model=MODEL, input="x", stream=True)
    async for event in stream:
        if event.type == "response.output_text.delta":
            break
    await stream.close()
    response = await client.responses.create(model=MODEL, input="y")
    assert response.output_text == "next"


def test_stopping_ends_a_slow_stream_instead_of_waiting_for_it() -> None:
    server = LoopbackModelServer(Script([reply("never " * 5, delay=3600)])).start()
    received: list[str] = []
    first_event = threading.Event()

    def consume() -> None:
        with (
            httpx2.Client(timeout=60) as http,
            http.stream(
                "POST", f"{server.base_url}/responses", json={"input": "x", "stream": True}
            ) as answer,
        ):
            try:
                for line in answer.iter_lines():
                    received.append(line)
                    first_event.set()
            except httpx2.HTTPError:
                pass  # the server cut the stream: what stop() must do

    reader = threading.Thread(target=consume)
    reader.start()
    assert first_event.wait(30)
    stopper = threading.Thread(target=server.stop)
    stopper.start()
    stopper.join(30)
    reader.join(30)
    assert not stopper.is_alive(), "stop() waited for the slow stream"
    assert not reader.is_alive()
    assert not any("output_text.delta" in line for line in received)


# --------------------------------------------------------------------------- the pytest plugin


class _Recorder(TracingProcessor):
    def __init__(self) -> None:
        self.traces: list[str] = []

    def on_trace_start(self, trace: Trace) -> None:
        self.traces.append(trace.name)

    def on_trace_end(self, trace: Trace) -> None: ...
    def on_span_start(self, span: Span[Any]) -> None: ...
    def on_span_end(self, span: Span[Any]) -> None: ...
    def shutdown(self) -> None: ...
    def force_flush(self) -> None: ...


async def test_the_sdk_trace_exporter_is_off_while_tracing_stays_on(
    model_server: LoopbackModelServer,
    client: AsyncOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # With the SDK's exporter in place and no key in the environment, exporting logs
    # "OPENAI_API_KEY is not set, skipping trace export"; with a key it would reach OpenAI.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    recorder = _Recorder()
    add_trace_processor(recorder)
    try:
        model_server.script.add(reply("hi"))
        agent = Agent(name="greeter", model=OpenAIResponsesModel(MODEL, client))
        with caplog.at_level(logging.DEBUG, logger="openai.agents"):
            await Runner.run(agent, "hello")
            flush_traces()
    finally:
        set_trace_processors([])
    assert recorder.traces == ["Agent workflow"]  # tracing ran...
    assert not [r for r in caplog.records if "trace export" in r.getMessage()]  # ...unexported
