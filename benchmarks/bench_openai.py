"""OpenAI engine rows: the engine's own share of a turn, and where a streamed turn's time goes.

**The engine's share.** Both sides run one agent turn with one tool call (two model calls) against
the same loopback OpenAI-compatible server (real HTTP on 127.0.0.1, Responses API), in one event
loop, interleaved by the harness. The subject plays the turn through ``OpenAIEngine`` with
``agentdeck.testing.drive`` (the runtime's semantics: every payload checked, wrapped in an
envelope, JSON round-tripped and folded; a safe point per stream item and per tool dispatch), or
by consuming ``engine.play`` alone; the baseline is the SDK's ``Runner.run_streamed`` drained the
same way the engine drains it. What a real ``Deck`` adds (store, observers) is measured in
``bench_agent_turns.py``.

**Without deltas.** ``Deck.run`` asks for no deltas, and the engine then plays quietly: the SDK's
own ``Runner.run``, its events taken from run hooks (``agentdeck_openai.quiet``). One row puts
that play (no Deck) beside ``Runner.run`` bare on the same server.

**Why a streamed turn costs more than ``Runner.run``.** A turn that streams its model calls (for
``deck.stream``, run handles, HTTP) pays for it: over the loopback server a streamed model call
costs several milliseconds more than the same answer as one JSON body. These rows take that
apart, each against the non-streamed way of doing the same call, so a regression in *our* part
(the server's SSE writing, its pacing) shows on its own:

* the transport: the same answer fetched with bare ``httpx`` as SSE chunks vs as one body (the
  loopback server's writing: the frames ready at once in one write and one HTTP chunk,
  ``TCP_NODELAY``) -- about 1.2x, nearly all of it the server rendering 28 events instead of one
  body (~0.15 ms);
* the ``openai`` client: ``responses.create(stream=True)`` drained vs not -- about 2x, nearly all
  of it the pydantic validation of every typed stream event (~60-100 µs a delta here, several
  hundred µs for each event carrying a whole ``Response``) against one body's;
* the SDK alone, no HTTP: ``run_streamed`` vs ``Runner.run`` on the in-process scripted model
  (its background task and event queue);
* what a user sees with a model that produces tokens over time: a tool turn whose deltas the
  server paces 2 ms apart, ``run_streamed`` vs ``Runner.run`` -- the parsing overlaps the wait
  for the next token, and streaming costs about nothing.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable

import httpx
from agents import Agent as SDKAgent
from agents import OpenAIProvider, RunConfig, Runner, function_tool, set_trace_processors
from openai import AsyncOpenAI

from agentdeck import Agent
from agentdeck.authoring.tools import tool
from agentdeck.model.payloads import RunCompleted
from agentdeck.ports import EngineRequest, Invocable, Invocation
from agentdeck.settings import Settings
from agentdeck.testing.engine_kit import drive
from agentdeck_openai.engine import OpenAIEngine
from agentdeck_openai.testing import API_KEY, LoopbackModelServer, ModelRequest, Script
from agentdeck_openai.testing import reply as scripted_reply
from agentdeck_openai.testing import tool_call as scripted_tool_call
from agentdeck_openai.testing.model import ScriptedModel, ScriptedModelProvider
from benchmarks import Pair, bench

INSTRUCTIONS = "Answer with the weather."
TEXT = "It is sunny in Paris today, with a light breeze from the west and no rain at all."
PACE = 0.002
"""Seconds between deltas in the paced rows (a fast model: 500 tokens a second)."""


def _weather(city: str) -> str:
    """Report the weather."""
    return f"sunny in {city}"


def _asked(request: ModelRequest) -> bool:
    return not request.tool_outputs


def _answered(request: ModelRequest) -> bool:
    return bool(request.tool_outputs)


def _tool_turns(*, pace: float = 0.0) -> Script:
    return Script(
        [
            scripted_tool_call(
                "get_weather", {"city": "Paris"}, delay=pace, when=_asked, times=None
            ),
            scripted_reply("It is sunny in Paris.", delay=pace, when=_answered, times=None),
        ]
    )


_state: dict[str, object] = {}


def _loop() -> asyncio.AbstractEventLoop:
    loop = _state.get("loop")
    if loop is None:
        set_trace_processors([])  # the SDK's exporter would try to reach OpenAI
        loop = _state["loop"] = asyncio.new_event_loop()
    assert isinstance(loop, asyncio.AbstractEventLoop)
    return loop


def _server(name: str = "tool", script: Callable[[], Script] = _tool_turns) -> LoopbackModelServer:
    """One server per script, started once and never stopped (the benchmark process exits)."""
    key = f"server:{name}"
    server = _state.get(key)
    if server is None:
        server = _state[key] = LoopbackModelServer(script()).start()
    assert isinstance(server, LoopbackModelServer)
    return server


def _opened_engine() -> tuple[asyncio.AbstractEventLoop, OpenAIEngine, Invocable]:
    loop, server = _loop(), _server()
    engine = OpenAIEngine(EngineRequest(settings=Settings(env=server.env())))
    agent = Agent(
        name="Weather", instructions=INSTRUCTIONS, tools=[tool(name="get_weather")(_weather)]
    )
    invocable = engine.compile(agent)
    loop.run_until_complete(engine.open())
    return loop, engine, invocable


def _engine_turn() -> Callable[[], object]:
    """A turn played by ``drive`` (what the runtime does per payload, without a store)."""
    loop, engine, invocable = _opened_engine()
    runs = itertools.count()

    def turn() -> object:
        invocation = Invocation(
            run_id=f"run-{next(runs)}",
            invocable=invocable,
            input=engine.prepare_input(invocable, "weather in Paris?"),
        )
        result = loop.run_until_complete(drive(engine, invocation))
        assert result.status == "completed", result.kinds
        return result

    return turn


def _engine_play(*, deltas: bool = True) -> Callable[[], object]:
    """A turn played by consuming ``engine.play`` directly: the engine's own work only."""
    loop, engine, invocable = _opened_engine()
    runs = itertools.count()

    async def play() -> object:
        invocation = Invocation(
            run_id=f"run-{next(runs)}",
            invocable=invocable,
            input=engine.prepare_input(invocable, "weather in Paris?"),
            deltas=deltas,
        )
        payloads = [payload async for payload in engine.play(invocation)]
        assert isinstance(payloads[-1], RunCompleted), payloads[-1]
        return payloads

    return lambda: loop.run_until_complete(play())


def _sdk_agent() -> SDKAgent[None]:
    return SDKAgent(
        name="Weather",
        instructions=INSTRUCTIONS,
        model="loopback-model",
        tools=[function_tool(_weather, name_override="get_weather")],
    )


def _http_config(server: LoopbackModelServer) -> RunConfig:
    client = AsyncOpenAI(base_url=server.base_url, api_key=API_KEY)
    return RunConfig(
        model_provider=OpenAIProvider(openai_client=client, use_responses=True),
        tracing_disabled=True,
    )


def _bare_run(config: RunConfig) -> Callable[[], object]:
    loop, agent = _loop(), _sdk_agent()

    def run() -> object:
        result = loop.run_until_complete(
            Runner.run(agent, "weather in Paris?", run_config=config, max_turns=30)
        )
        assert result.final_output == "It is sunny in Paris.", result.final_output
        return result

    return run


def _bare_stream(config: RunConfig) -> Callable[[], object]:
    loop, agent = _loop(), _sdk_agent()

    async def stream() -> object:
        result = Runner.run_streamed(agent, "weather in Paris?", run_config=config, max_turns=30)
        async for _ in result.stream_events():
            pass
        assert result.final_output == "It is sunny in Paris.", result.final_output
        return result

    return lambda: loop.run_until_complete(stream())


# ============================================================================ the engine's share


@bench("openai: agent turn + 1 tool, engine (drive) vs Runner.run_streamed", budget=1.10, unit="x")
def engine_vs_streamed() -> Pair:
    """Streaming held equal: the bare SDK run streamed and drained, as the engine streams it."""
    return Pair(subject=_engine_turn(), baseline=_bare_stream(_http_config(_server())))


@bench(
    "openai: agent turn + 1 tool, engine.play alone, added over run_streamed",
    budget=1000.0,
    unit="us",
)
def engine_play_added_over_streamed() -> Pair:
    """The engine's own work per turn (translation, safe points, tool wrapper), no driver."""
    return Pair(subject=_engine_play(), baseline=_bare_stream(_http_config(_server())))


@bench(
    "openai: agent turn + 1 tool, engine.play without deltas, added over Runner.run",
    budget=1000.0,
    unit="us",
)
def engine_play_whole_added_over_run() -> Pair:
    """Deck.run's play, no Deck: the engine's work around the SDK's Runner.run, per turn."""
    return Pair(subject=_engine_play(deltas=False), baseline=_bare_run(_http_config(_server())))


# ============================================================================ why streaming costs


def _text_turns() -> Script:
    return Script([scripted_reply(TEXT, deltas=20, times=None)])


def _responses_body() -> dict[str, object]:
    return {"model": "loopback-model", "input": "weather in Paris?", "instructions": INSTRUCTIONS}


@bench(
    "openai: one 20-delta model call over loopback, bare httpx: SSE chunks vs one JSON body",
    budget=1.5,
)
def transport_stream_vs_body() -> Pair:
    """The loopback server's streaming itself: the same answer read as SSE chunks vs as a body."""
    loop, server = _loop(), _server("text", _text_turns)
    client = httpx.AsyncClient()
    url, body = f"{server.base_url}/responses", _responses_body()

    async def streamed() -> None:
        async with client.stream("POST", url, json={**body, "stream": True}) as response:
            async for _ in response.aiter_bytes():
                pass

    async def whole() -> None:
        (await client.post(url, json=body)).raise_for_status()

    return Pair(
        subject=lambda: loop.run_until_complete(streamed()),
        baseline=lambda: loop.run_until_complete(whole()),
    )


@bench(
    "openai: one 20-delta model call over loopback, openai client: stream=True vs not",
    budget=4.0,
)
def client_stream_vs_body() -> Pair:
    """The openai client's share: every SSE event decoded and validated into a typed event."""
    loop, server = _loop(), _server("text", _text_turns)
    client = AsyncOpenAI(base_url=server.base_url, api_key=API_KEY)
    body = _responses_body()

    async def streamed() -> None:
        events = await client.responses.create(**body, stream=True)  # type: ignore[call-overload]
        async for _ in events:
            pass

    async def whole() -> None:
        await client.responses.create(**body)  # type: ignore[call-overload]

    return Pair(
        subject=lambda: loop.run_until_complete(streamed()),
        baseline=lambda: loop.run_until_complete(whole()),
    )


@bench(
    "openai: agent turn + 1 tool, in-process model (no HTTP): run_streamed vs Runner.run",
    budget=2.0,
)
def sdk_stream_vs_run_in_process() -> Pair:
    """The SDK's own streaming machinery (a background task and an event queue), no HTTP."""
    provider = ScriptedModelProvider(ScriptedModel(_tool_turns()))
    config = RunConfig(model_provider=provider, tracing_disabled=True)
    return Pair(subject=_bare_stream(config), baseline=_bare_run(config))


@bench(
    "openai: agent turn + 1 tool, loopback deltas paced 2 ms: run_streamed vs Runner.run",
    budget=1.10,
)
def sdk_stream_vs_run_paced() -> Pair:
    """With tokens arriving over time (as from a real model) the per-event parsing overlaps the
    wait for the next one: streaming costs about nothing."""
    config = _http_config(_server("paced", lambda: _tool_turns(pace=PACE)))
    return Pair(subject=_bare_stream(config), baseline=_bare_run(config))
