"""Agent turn rows: a real ``Deck`` playing agent turns on the openai engine, against the SDK.

Every subject here is ``deck.run(...)`` (or ``deck.stream(...)``) on an open ``Deck``: the
runtime records each event in the store, folds it, hands it to the observers the settings
configure, holds a lease. Every baseline is the Agents SDK's own runner on an equivalent SDK
agent and the *same* model:

* the **in-process model** is :class:`agentdeck_openai.testing.model.ScriptedModel` (typed
  Responses events, no HTTP), given to both sides through an SDK ``ModelProvider`` (the deck's
  engine is built with it via ``plugins_with_model``); it isolates what AgentDeck adds from the
  noise of an HTTP exchange, which alone costs more than the budgets;
* the **HTTP model** is the loopback OpenAI-compatible server (Responses API, streamed), read by
  the official ``openai`` client on both sides.

A text turn is one model call answering a 20-delta reply; a tool turn is two model calls around
one function tool. Turns play without a session. The SQLite rows point the deck's whole state
(``AGENTDECK_STATE``) at a file in a temporary directory.

Which SDK call each row compares with: ``Deck.run`` asks for no deltas, so the engine plays the
turn on ``Runner.run`` itself (``AGENTDECK_RUNNER_DELTAS=when-asked``, the default; see
``agentdeck_openai.quiet``). The rows "Deck.run vs/added over Runner.run" measure what a
user switching from ``Runner.run`` to ``Deck.run`` sees (issue 6's target). The rows "added over
run_streamed" hold streaming equal instead: their deck has ``AGENTDECK_RUNNER_DELTAS=always``,
so ``Deck.run`` streams every model call (as ``deck.stream`` does) and is compared with the SDK's
``Runner.run_streamed`` drained; streaming over HTTP costs the ``openai`` client a pydantic
validation per SSE event on both sides, which ``Runner.run`` never pays.

The memory probes play 50-100 runs a round (fewer under ``--smoke``) and scale to 1,000.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import os
import shutil
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

from agents import Agent as SDKAgent
from agents import (
    ModelProvider,
    OpenAIProvider,
    RunConfig,
    Runner,
    function_tool,
    set_trace_processors,
)
from agents.tool import Tool
from openai import AsyncOpenAI

from agentdeck import Agent, Deck, TurnResult, tool
from agentdeck.memory import MemoryEventStore
from agentdeck.model.events import parse_payload
from agentdeck.model.payloads import RunStarted
from agentdeck.ports import NewRun, PruneQuery
from agentdeck.settings import Settings
from agentdeck_openai.testing import API_KEY, LoopbackModelServer, ModelRequest, Script
from agentdeck_openai.testing import reply as scripted_reply
from agentdeck_openai.testing import tool_call as scripted_tool_call
from agentdeck_openai.testing.model import (
    ScriptedModel,
    ScriptedModelProvider,
    plugins_with_model,
)
from benchmarks import Pair, Probe, Sample, bench

_T = TypeVar("_T")

SMOKE = "--smoke" in sys.argv
RSS_RUNS = 20 if SMOKE else 100
"""Runs per round of the RSS probe (kept to the end, so the last round holds 25 rounds' worth)."""
PRUNE_RUNS = 4 if SMOKE else 10
"""N in the after-prune probe, whose rounds play 5N runs (traced allocations slow runs down)."""
LATENCY_TURNS = 3 if SMOKE else 7
"""Turns per round of the first-delta probe (the round's value is their median)."""

INSTRUCTIONS = "Answer briefly."
QUESTION = "What is the weather in Paris?"
TEXT = "It is sunny in Paris today, with a light breeze from the west and no rain at all."
DELTAS = 20
PACE = 0.002
"""Seconds between deltas where a model's tokens arrive over time (500 a second)."""
MODEL_NAME = "loopback-model"

_DIRECTORY = Path(tempfile.mkdtemp(prefix="agentdeck-bench-agents-"))


# ============================================================================ the script


def _text_turn(request: ModelRequest) -> bool:
    return "get_weather" not in request.tool_names


def _tool_asked(request: ModelRequest) -> bool:
    return "get_weather" in request.tool_names and not request.tool_outputs


def _tool_answered(request: ModelRequest) -> bool:
    return "get_weather" in request.tool_names and bool(request.tool_outputs)


def _script(*, pace: float = 0.0) -> Script:
    """Answers for every agent here, forever: the rules pick the turn from the request."""
    return Script(
        [
            scripted_reply(TEXT, deltas=DELTAS, delay=pace, when=_text_turn, times=None),
            scripted_tool_call(
                "get_weather", {"city": "Paris"}, delay=pace, when=_tool_asked, times=None
            ),
            scripted_reply("It is sunny in Paris.", delay=pace, when=_tool_answered, times=None),
        ]
    )


def _weather(city: str) -> str:
    """Report the weather in a city."""
    return f"sunny in {city}"


def _agents() -> list[Agent]:
    return [
        Agent(name="Teller", instructions=INSTRUCTIONS),
        Agent(
            name="Weather", instructions=INSTRUCTIONS, tools=[tool(name="get_weather")(_weather)]
        ),
    ]


def _sdk_agent(name: str) -> SDKAgent[None]:
    tools: list[Tool] = (
        [function_tool(_weather, name_override="get_weather")] if name == "Weather" else []
    )
    return SDKAgent(name=name, instructions=INSTRUCTIONS, model=MODEL_NAME, tools=tools)


# ============================================================================ shared fixtures


class _Bench:
    """One event loop for the module; servers, models and decks built once and closed at exit."""

    def __init__(self) -> None:
        set_trace_processors([])  # the SDK's exporter would try to reach OpenAI
        self.loop = asyncio.new_event_loop()
        self.server: LoopbackModelServer | None = None
        self.servers: list[LoopbackModelServer] = []
        self.decks: dict[str, Deck] = {}
        self.closers: list[Callable[[], Awaitable[object]]] = []

    def sync(self, awaitable: Awaitable[_T]) -> _T:
        return self.loop.run_until_complete(awaitable)

    def http(self) -> LoopbackModelServer:
        if self.server is None:
            self.server = LoopbackModelServer(_script()).start()
        return self.server

    def deck(self, key: str, build: Callable[[], Deck]) -> Deck:
        """The deck ``key`` (built and opened on first use), with every other deck closed.

        Rows are measured one after another, so a row asking for its deck is done with the
        earlier rows' decks: left open, their threads (a SQLite deck's writer and watcher) and
        background tasks would weigh on every row measured after them.
        """
        for other in [name for name in self.decks if name != key]:
            with contextlib.suppress(Exception):
                self.sync(self.decks.pop(other).aclose())
        deck = self.decks.get(key)
        if deck is None:
            deck = self.decks[key] = build()
            self.sync(deck.open())
        return deck

    def close(self) -> None:
        for deck in self.decks.values():
            with contextlib.suppress(Exception):
                self.sync(deck.aclose())
        for closer in self.closers:
            with contextlib.suppress(Exception):
                self.sync(closer())
        self.loop.close()
        for server in [self.server, *self.servers]:
            if server is not None:
                server.stop()
        shutil.rmtree(_DIRECTORY, ignore_errors=True)


_bench: _Bench | None = None


def _shared() -> _Bench:
    global _bench
    if _bench is None:
        _bench = _Bench()
        atexit.register(_bench.close)
    return _bench


def _sqlite_env(name: str) -> dict[str, str]:
    return {"AGENTDECK_STATE": f"sqlite:///{_DIRECTORY / name}.db"}


_STREAMED = {"AGENTDECK_RUNNER_DELTAS": "always"}
"""A deck whose ``Deck.run`` streams every model call, for the rows holding streaming equal."""


def _in_process(store: str = "memory", *, streamed: bool = False) -> tuple[Deck, RunConfig]:
    """A deck and an SDK run config on one in-process scripted model."""
    bench = _shared()
    provider = ScriptedModelProvider(ScriptedModel(_script()))
    env = {"OPENAI_MODEL": MODEL_NAME, "OPENAI_API_KEY": API_KEY, "AGENTDECK_STATE": "memory://"}
    if store == "sqlite":
        env |= _sqlite_env(f"in-process-{len(bench.decks)}")
    if streamed:
        env |= _STREAMED
    deck = bench.deck(
        f"in-process-{store}-{id(provider)}",
        lambda: Deck(_agents(), settings=Settings(env=env), plugins=plugins_with_model(provider)),
    )
    return deck, RunConfig(model_provider=provider, tracing_disabled=True)


def _over_http(store: str = "memory", *, streamed: bool = False) -> tuple[Deck, RunConfig]:
    """A deck and an SDK run config talking to the loopback server, each with its own client."""
    bench = _shared()
    server = bench.http()
    env = {**server.env(model=MODEL_NAME), "AGENTDECK_STATE": "memory://"}
    if store == "sqlite":
        env |= _sqlite_env(f"http-{len(bench.decks)}")
    if streamed:
        env |= _STREAMED
    deck = bench.deck(
        f"http-{store}{'-streamed' if streamed else ''}",
        lambda: Deck(_agents(), settings=Settings(env=env)),
    )
    client = AsyncOpenAI(base_url=server.base_url, api_key=API_KEY)
    bench.closers.append(client.close)
    provider: ModelProvider = OpenAIProvider(openai_client=client, use_responses=True)
    return deck, RunConfig(model_provider=provider, tracing_disabled=True)


# ============================================================================ the two sides


def _deck_turn(deck: Deck, name: str) -> Callable[[], object]:
    bench = _shared()

    def turn() -> object:
        result = bench.sync(deck.run(name, QUESTION))
        assert isinstance(result, TurnResult) and result.output, result
        return result

    return turn


def _streamed(name: str, config: RunConfig) -> Callable[[], object]:
    """The SDK's ``run_streamed``, drained as the engine drains it."""
    bench = _shared()
    agent = _sdk_agent(name)

    async def stream() -> object:
        result = Runner.run_streamed(agent, QUESTION, run_config=config, max_turns=10)
        async for _ in result.stream_events():
            pass
        assert result.final_output, result
        return result

    return lambda: bench.sync(stream())


def _run(name: str, config: RunConfig) -> Callable[[], object]:
    bench = _shared()
    agent = _sdk_agent(name)

    async def run() -> object:
        result = await Runner.run(agent, QUESTION, run_config=config, max_turns=10)
        assert result.final_output, result
        return result

    return lambda: bench.sync(run())


# ============================================================================ rows: added time


@bench(
    "agent: text turn (20-delta reply), in-process model, memory store: "
    "Deck.run added over run_streamed",
    budget=500.0,
    unit="us",
)
def text_turn_in_process() -> Pair:
    """What a Deck adds to one streamed agent turn, no HTTP on either side (model in process)."""
    deck, config = _in_process(streamed=True)
    return Pair(subject=_deck_turn(deck, "Teller"), baseline=_streamed("Teller", config))


@bench(
    "agent: text turn (20-delta reply), HTTP model, memory store: Deck.run added over run_streamed",
    budget=500.0,
    unit="us",
)
def text_turn_http() -> Pair:
    """The same over the loopback HTTP server (the openai client parses the SSE on both sides)."""
    deck, config = _over_http(streamed=True)
    return Pair(subject=_deck_turn(deck, "Teller"), baseline=_streamed("Teller", config))


@bench(
    "agent: text turn (20-delta reply), in-process model, SQLite log: "
    "Deck.run added over run_streamed",
    budget=1500.0,
    unit="us",
)
def text_turn_in_process_sqlite() -> Pair:
    """The in-process text turn with the deck's state in a SQLite file (the default level)."""
    deck, config = _in_process("sqlite", streamed=True)
    return Pair(subject=_deck_turn(deck, "Teller"), baseline=_streamed("Teller", config))


@bench(
    "agent: text turn (20-delta reply), HTTP model, SQLite log: Deck.run added over run_streamed",
    budget=1500.0,
    unit="us",
)
def text_turn_http_sqlite() -> Pair:
    """The HTTP text turn with the deck's state in a SQLite file."""
    deck, config = _over_http("sqlite", streamed=True)
    return Pair(subject=_deck_turn(deck, "Teller"), baseline=_streamed("Teller", config))


@bench("agent: turn + 1 tool, HTTP model, memory store: Deck.run vs Runner.run", budget=1.10)
def tool_turn_ratio() -> Pair:
    """Issue 6's target as a ratio: a Deck turn with a tool call vs the SDK's Runner.run."""
    deck, config = _over_http()
    return Pair(subject=_deck_turn(deck, "Weather"), baseline=_run("Weather", config))


@bench(
    "agent: turn + 1 tool, HTTP model, memory store: Deck.run added over Runner.run",
    budget=1000.0,
    unit="us",
)
def tool_turn_added() -> Pair:
    """The same pair as microseconds added per turn (budget: 1 ms)."""
    deck, config = _over_http()
    return Pair(subject=_deck_turn(deck, "Weather"), baseline=_run("Weather", config))


@bench(
    "agent: turn + 1 tool, in-process model, memory store: Deck.run added over Runner.run",
    budget=1000.0,
    unit="us",
)
def tool_turn_added_in_process() -> Pair:
    """The same without HTTP on either side: AgentDeck's share with no HTTP noise around it."""
    deck, config = _in_process()
    return Pair(subject=_deck_turn(deck, "Weather"), baseline=_run("Weather", config))


@bench(
    "agent: text turn (20-delta reply), HTTP model, memory store: Deck.run added over Runner.run",
    budget=1000.0,
    unit="us",
)
def text_turn_added_over_run() -> Pair:
    """A text turn as Deck.run plays it (the reply whole) vs the SDK's Runner.run."""
    deck, config = _over_http()
    return Pair(subject=_deck_turn(deck, "Teller"), baseline=_run("Teller", config))


@bench(
    "agent: turn + 1 tool, HTTP model, memory store: Deck.run added over run_streamed",
    budget=1000.0,
    unit="us",
)
def tool_turn_added_over_streamed() -> Pair:
    """Streaming held equal: what the Deck adds to the SDK's streamed tool turn over HTTP."""
    deck, config = _over_http(streamed=True)
    return Pair(subject=_deck_turn(deck, "Weather"), baseline=_streamed("Weather", config))


@bench(
    "agent: turn + 1 tool, HTTP model, deltas paced 2 ms, memory store: Deck.run vs Runner.run",
    budget=1.10,
)
def tool_turn_paced_ratio() -> Pair:
    """Issue 6's target with a model whose tokens arrive over time (2 ms apart, 500/s)."""
    bench = _shared()
    server = LoopbackModelServer(_script(pace=PACE)).start()
    bench.servers.append(server)
    deck = bench.deck(
        "http-paced",
        lambda: Deck(
            _agents(),
            settings=Settings(env={**server.env(model=MODEL_NAME), "AGENTDECK_STATE": "memory://"}),
        ),
    )
    client = AsyncOpenAI(base_url=server.base_url, api_key=API_KEY)
    bench.closers.append(client.close)
    config = RunConfig(
        model_provider=OpenAIProvider(openai_client=client, use_responses=True),
        tracing_disabled=True,
    )
    return Pair(subject=_deck_turn(deck, "Weather"), baseline=_run("Weather", config))


# ============================================================================ row: first delta


@bench(
    "agent: first text.delta, model yield -> deck.stream() consumer (in-process model)",
    budget=1000.0,
    unit="us",
)
def first_delta_latency() -> Probe:
    """µs from the model yielding its first delta to a deck.stream() consumer receiving it.

    The model's deltas are 2 ms apart, so the first one travels alone. Nothing on the path polls:
    the engine yields the payload, the runtime appends it, and the append itself wakes the
    store's follower behind ``deck.stream()``; a polling follower would add up to its interval
    (the original product's 50 ms showed as 25-50 ms). The SDK's own consumer is beside it.
    """
    bench = _shared()
    model = ScriptedModel(_script(pace=PACE))
    provider = ScriptedModelProvider(model)
    env = {"OPENAI_MODEL": MODEL_NAME, "OPENAI_API_KEY": API_KEY, "AGENTDECK_STATE": "memory://"}
    deck = bench.deck(
        "first-delta",
        lambda: Deck(_agents(), settings=Settings(env=env), plugins=plugins_with_model(provider)),
    )
    config = RunConfig(model_provider=provider, tracing_disabled=True)
    agent = _sdk_agent("Teller")

    async def through_deck() -> float:
        seen: float | None = None
        async for event in deck.stream("Teller", QUESTION):
            if seen is None and event.kind == "text.delta":
                seen = time.perf_counter()
        assert seen is not None and model.first_delta_at is not None
        return (seen - model.first_delta_at) * 1e6

    async def through_sdk() -> float:
        seen: float | None = None
        result = Runner.run_streamed(agent, QUESTION, run_config=config)
        async for event in result.stream_events():
            data = getattr(event, "data", None)
            if seen is None and getattr(data, "type", None) == "response.output_text.delta":
                seen = time.perf_counter()
        assert seen is not None and model.first_delta_at is not None
        return (seen - model.first_delta_at) * 1e6

    def one_round() -> Sample:
        deck_us = sorted(bench.sync(through_deck()) for _ in range(LATENCY_TURNS))
        sdk_us = sorted(bench.sync(through_sdk()) for _ in range(LATENCY_TURNS))
        median = deck_us[len(deck_us) // 2]
        return Sample(value=median, subject=median, baseline=sdk_us[len(sdk_us) // 2])

    return Probe(round=one_round, side_unit="µs")


# ============================================================================ rows: memory


def _rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as statm:
        resident_pages = int(statm.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def _settled(reading: Callable[[], float]) -> float:
    gc.collect()
    return reading()


@contextlib.contextmanager
def _older_objects_frozen() -> Iterator[None]:
    """Leave what existed before the round out of the collections it runs: a full collection
    over the whole heap (SDK, pydantic, openai) takes ~0.15 s, over the round's objects ~1 ms.
    Only cycles among the round's own objects are then collected, which is all a round needs."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _traced_mb() -> float:
    return tracemalloc.get_traced_memory()[0] / 1e6


class _Runs:
    """A deck on the in-process model with a memory store of its own, playing tool turns."""

    def __init__(self, key: str) -> None:
        self.bench = _shared()
        self.store = MemoryEventStore()
        provider = ScriptedModelProvider(ScriptedModel(_script()))
        env = {
            "OPENAI_MODEL": MODEL_NAME,
            "OPENAI_API_KEY": API_KEY,
            "AGENTDECK_STATE": "memory://",
        }
        self.deck = self.bench.deck(
            key,
            lambda: Deck(
                _agents(),
                settings=Settings(env=env),
                plugins=plugins_with_model(provider),
                events=self.store,
            ),
        )
        self.bench.closers.append(self.store.close)
        for _ in range(50):  # warm: the first runs fill caches (schemas, validators, the SDK's)
            self.play(1)
        self.prune()

    def play(self, count: int) -> list[str]:
        """Play `count` turns to the end; their run ids."""
        run_ids = []
        for _ in range(count):
            result = self.bench.sync(self.deck.run("Weather", QUESTION))
            assert isinstance(result, TurnResult) and result.output, result
            run_ids.append(result.run_id)
        return run_ids

    def prune(self) -> None:
        self.bench.sync(self.store.prune(PruneQuery(all_namespaces=True)))

    def replay(self, run_ids: list[str], target: MemoryEventStore) -> None:
        """The runs' events recorded into `target` with no engine or deck involved, each payload
        parsed afresh from its JSON, so `target` shares no object with the deck's store."""

        async def replay() -> None:
            for run_id in run_ids:
                events = await self.store.read(run_id)
                payloads = [parse_payload(e.payload.model_dump_json()) for e in events]
                started = payloads[0]
                assert isinstance(started, RunStarted), started
                await target.open_run(NewRun(run_id=run_id, started=started))
                await target.append(run_id, payloads[1:])

        self.bench.sync(replay())


@bench(
    "agent: RSS growth per 1,000 finished runs beyond the memory store's own events",
    budget=5.0,
    unit="MB",
)
def rss_per_thousand_runs() -> Probe:
    """RSS a deck gains per 1,000 finished tool turns, less what storing their events alone gains.

    Each round plays the runs (kept: nothing is freed, so the allocator has no holes to refill
    and RSS growth is additive) and records the same events, parsed afresh, in a second memory
    store; which side goes first alternates.
    """
    runs = _Runs("rss-growth")
    alone = MemoryEventStore()
    runs.bench.closers.append(alone.close)
    count = RSS_RUNS
    scale = 1_000 / count
    first_run_ids = runs.play(count)
    rounds = 0

    def one_round() -> Sample:
        with _older_objects_frozen():
            return measured()

    def measured() -> Sample:
        nonlocal first_run_ids, rounds
        rounds += 1
        before = _settled(_rss_mb)
        if rounds % 2:
            run_ids = runs.play(count)
            played = _settled(_rss_mb)
            runs.replay(first_run_ids, alone)
            stored = _settled(_rss_mb)
            growth_played, growth_stored = played - before, stored - played
        else:
            runs.replay(first_run_ids, alone)
            stored = _settled(_rss_mb)
            run_ids = runs.play(count)
            played = _settled(_rss_mb)
            growth_played, growth_stored = played - stored, stored - before
        first_run_ids = run_ids  # the next round stores these alone
        return Sample(
            value=(growth_played - growth_stored) * scale,
            subject=growth_played * scale,
            baseline=growth_stored * scale,
        )

    return Probe(round=one_round, side_unit="MB")


@bench(
    "agent: memory left per 1,000 finished runs after prune (tracemalloc)", budget=1.0, unit="MB"
)
def memory_after_prune() -> Probe:
    """Python memory still allocated per 1,000 runs once they are pruned (what they took, beside).

    Traced allocations rather than RSS: freed memory stays in the allocator's arenas for reuse,
    so RSS does not fall after a prune whether or not anything leaked. A play-and-prune cycle
    leaves a few KB however many runs it plays (containers keep their capacity, the SDK's
    caches), so the value is the slope: what a cycle of 3N runs leaves beyond a cycle of N. The
    budget, 1 KB a run, is ~zero next to the ~16 KB a run holds until pruned.
    """
    runs = _Runs("after-prune")
    count = PRUNE_RUNS

    def cycle(size: int) -> tuple[float, float]:
        """Play `size` runs and prune them: MB traced at the peak and after, from the start."""
        before = _settled(_traced_mb)
        runs.play(size)
        played = _settled(_traced_mb)
        runs.prune()
        return played - before, _settled(_traced_mb) - before

    def one_round() -> Sample:
        with _older_objects_frozen():
            tracemalloc.start()
            try:
                cycle(count)  # containers re-grown, under tracing, before anything is read
                _, small = cycle(count)
                played, large = cycle(3 * count)
            finally:
                tracemalloc.stop()
        left = (large - small) * 1_000 / (2 * count)
        return Sample(value=left, subject=left, baseline=played * 1_000 / (3 * count))

    return Probe(round=one_round, side_unit="MB")
