"""OpenAI engine rows: what running an agent turn as an AgentDeck run costs over the bare SDK.

Both sides run one agent turn with one tool call (two model calls) against the same loopback
OpenAI-compatible server (real HTTP on 127.0.0.1, Responses API), in one event loop, interleaved
by the harness. The subject plays the turn through ``OpenAIEngine`` with
``agentdeck.testing.drive`` (the runtime's semantics: every payload checked, wrapped in an
envelope, JSON round-tripped and folded; a safe point per stream item and per tool dispatch);
the baseline is the SDK's own ``Runner.run`` of an equivalent agent, and, for the engine's own
share, ``Runner.run_streamed`` drained the same way the engine drains it. The Deck-level row (a
real store, observers) is measured where the Deck is.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable

from agents import Agent as SDKAgent
from agents import OpenAIProvider, RunConfig, Runner, function_tool, set_trace_processors
from openai import AsyncOpenAI

from agentdeck import Agent
from agentdeck.events import RunCompleted
from agentdeck.ports import EngineRequest, Invocable, Invocation
from agentdeck.settings import Settings
from agentdeck.testing.engine_kit import drive
from agentdeck.tools import tool
from agentdeck_openai.engine import OpenAIEngine
from agentdeck_openai.testing import API_KEY, LoopbackModelServer, ModelRequest, Script
from agentdeck_openai.testing import reply as scripted_reply
from agentdeck_openai.testing import tool_call as scripted_tool_call
from benchmarks import Pair, bench

INSTRUCTIONS = "Answer with the weather."


def _weather(city: str) -> str:
    """Report the weather."""
    return f"sunny in {city}"


def _asked(request: ModelRequest) -> bool:
    return not request.tool_outputs


def _answered(request: ModelRequest) -> bool:
    return bool(request.tool_outputs)


_state: dict[str, object] = {}


def _setup() -> tuple[asyncio.AbstractEventLoop, LoopbackModelServer]:
    """One loop and one server for every row of this module (started once, never stopped: the
    benchmark process exits)."""
    if not _state:
        set_trace_processors([])
        script = Script(
            [
                scripted_tool_call("get_weather", {"city": "Paris"}, when=_asked, times=None),
                scripted_reply("It is sunny in Paris.", when=_answered, times=None),
            ]
        )
        _state["server"] = LoopbackModelServer(script).start()
        _state["loop"] = asyncio.new_event_loop()
    loop = _state["loop"]
    server = _state["server"]
    assert isinstance(loop, asyncio.AbstractEventLoop)
    assert isinstance(server, LoopbackModelServer)
    return loop, server


def _opened_engine() -> tuple[asyncio.AbstractEventLoop, OpenAIEngine, Invocable]:
    loop, server = _setup()
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


def _engine_play() -> Callable[[], object]:
    """A turn played by consuming ``engine.play`` directly: the engine's own work only."""
    loop, engine, invocable = _opened_engine()
    runs = itertools.count()

    async def play() -> object:
        invocation = Invocation(
            run_id=f"run-{next(runs)}",
            invocable=invocable,
            input=engine.prepare_input(invocable, "weather in Paris?"),
        )
        payloads = [payload async for payload in engine.play(invocation)]
        assert isinstance(payloads[-1], RunCompleted), payloads[-1]
        return payloads

    return lambda: loop.run_until_complete(play())


def _sdk() -> tuple[asyncio.AbstractEventLoop, SDKAgent[None], RunConfig]:
    loop, server = _setup()
    client = AsyncOpenAI(base_url=server.base_url, api_key=API_KEY)
    agent: SDKAgent[None] = SDKAgent(
        name="Weather",
        instructions=INSTRUCTIONS,
        model="loopback-model",
        tools=[function_tool(_weather, name_override="get_weather")],
    )
    config = RunConfig(
        model_provider=OpenAIProvider(openai_client=client, use_responses=True),
        tracing_disabled=True,
    )
    return loop, agent, config


def _bare_run() -> Callable[[], object]:
    loop, agent, config = _sdk()

    def run() -> object:
        result = loop.run_until_complete(
            Runner.run(agent, "weather in Paris?", run_config=config, max_turns=30)
        )
        assert result.final_output == "It is sunny in Paris."
        return result

    return run


def _bare_stream() -> Callable[[], object]:
    loop, agent, config = _sdk()

    async def stream() -> object:
        result = Runner.run_streamed(agent, "weather in Paris?", run_config=config, max_turns=30)
        async for _ in result.stream_events():
            pass
        assert result.final_output == "It is sunny in Paris."
        return result

    return lambda: loop.run_until_complete(stream())


@bench("openai: agent turn + 1 tool, engine (drive) vs Runner.run", budget=1.10, unit="x")
def engine_vs_run() -> Pair:
    """One agent turn with a tool call through OpenAIEngine + drive vs the SDK's Runner.run."""
    return Pair(subject=_engine_turn(), baseline=_bare_run())


@bench("openai: agent turn + 1 tool, time added over Runner.run", budget=1000.0, unit="us")
def engine_added_over_run() -> Pair:
    """The same pair, as microseconds added per turn (budget: 1 ms)."""
    return Pair(subject=_engine_turn(), baseline=_bare_run())


@bench("openai: agent turn + 1 tool, engine (drive) vs Runner.run_streamed", budget=1.10, unit="x")
def engine_vs_streamed() -> Pair:
    """Streaming held equal: the bare SDK run streamed and drained, as the engine streams it."""
    return Pair(subject=_engine_turn(), baseline=_bare_stream())


@bench(
    "openai: agent turn + 1 tool, engine.play alone, added over run_streamed",
    budget=1000.0,
    unit="us",
)
def engine_play_added_over_streamed() -> Pair:
    """The engine's own work per turn (translation, safe points, tool wrapper), no driver."""
    return Pair(subject=_engine_play(), baseline=_bare_stream())
