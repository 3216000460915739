"""LangGraph rows: what running a graph as an AgentDeck run costs over running it bare.

Every row plays the same three-node graph (trivial async nodes, so the number is AgentDeck's
overhead at its most visible) on an ``InMemorySaver``, each call on a new thread, interleaved by
the harness. The baseline is the graph's own ``ainvoke`` (LangGraph's defaults:
``stream_mode="values"``, ``durability="async"``, a checkpoint written per step).

Each side runs in an event loop of its own. A deck leaves work for later on purpose (finished
runs' leases and control requests are tidied in batches, a play task finishes after the caller
has its result); on a shared loop that work would run inside whichever side's batch happened to
be timed next, half of it billed to the baseline. On its own loop it runs only inside the deck's
own calls.

* The **Deck rows** (the issue's target) play ``deck.run(...)`` on an open ``Deck`` with its
  defaults: memory event store, memory checkpointer (derived from ``AGENTDECK_STATE``), the
  observers the (empty) settings configure, a lease, the runtime's fold. One row states it as a
  ratio, one as microseconds added per run.
* The **engine rows** consume ``LangGraphEngine.play`` bare (no runtime): the engine's share,
  held to the issue's 1.15x on its own. One plays as ``Deck.run()`` does (no deltas asked for),
  one as a streamed run does (model tokens tapped: LangChain then dispatches every node's start
  and end to the tap).
* The **LangGraph row** streams the graph exactly as the engine has LangGraph stream it for a
  ``Deck.run()`` (its modes, its live channel for writes, its durability) with no AgentDeck code
  around it: LangGraph's own share, which the engine's choices keep at or below a bare
  ``ainvoke``.
* The **same-checkpoints row** gives the baseline the engine's durability (``"exit"``: one
  checkpoint when the graph stops, see ``agentdeck_langgraph.engine``), so it shows what the
  Deck and the engine add with the checkpointer doing the same work on both sides. The Deck
  rows compare with LangGraph's defaults because that is what a user replacing
  ``graph.ainvoke`` with ``deck.run`` sees.
"""

from __future__ import annotations

import asyncio
import itertools
import operator
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Durability

from agentdeck import Deck
from agentdeck.model.content import DataBlock
from agentdeck.ports import Invocation
from agentdeck.settings import Settings
from agentdeck_langgraph import LangGraphEngine, Workflow
from agentdeck_langgraph.engine import DURABILITY, STREAM_MODES
from agentdeck_langgraph.live import LiveChannel, live_config
from benchmarks import Pair, bench


class _State(TypedDict, total=False):
    n: int
    log: Annotated[list[str], operator.add]


async def _plan(state: _State) -> dict[str, Any]:
    return {"n": state.get("n", 0) + 1, "log": ["plan"]}


async def _work(state: _State) -> dict[str, Any]:
    return {"log": ["work"]}


async def _review(state: _State) -> dict[str, Any]:
    return {"log": ["review"]}


def _graph() -> StateGraph[_State, Any, _State, _State]:
    graph: StateGraph[_State, Any, _State, _State] = StateGraph(_State)
    graph.add_node("plan", _plan)
    graph.add_node("work", _work)
    graph.add_node("review", _review)
    graph.add_edge(START, "plan")
    graph.add_edge("plan", "work")
    graph.add_edge("work", "review")
    graph.add_edge("review", END)
    return graph


FINAL = {"n": 2, "log": ["plan", "work", "review"]}
"""What every side must end with: a row that stopped short would measure nothing."""


def _event_loop() -> asyncio.AbstractEventLoop:
    """A loop for one side of one row (see the module doc; never closed: the process exits)."""
    return asyncio.new_event_loop()


def _deck_run() -> Callable[[], object]:
    loop = _event_loop()
    deck = Deck(
        workflows=[Workflow("pipeline", _graph())],
        settings=Settings(env={"AGENTDECK_STATE": "memory://"}),
    )
    loop.run_until_complete(deck.open())

    def run() -> object:
        output = loop.run_until_complete(deck.run("pipeline", {"n": 1}))
        assert output == FINAL, output
        return output

    return run


def _engine_play(*, deltas: bool) -> Callable[[], object]:
    loop = _event_loop()
    engine = LangGraphEngine(checkpointer="memory://")
    invocable = engine.compile(Workflow("pipeline", _graph()))
    loop.run_until_complete(engine.open())
    runs = itertools.count()

    async def play() -> object:
        invocation = Invocation(
            run_id=f"run-{next(runs)}",
            invocable=invocable,
            input=[DataBlock(data={"n": 1})],
            deltas=deltas,
        )
        kinds = [payload.kind async for payload in engine.play(invocation)]
        assert kinds[-1] == "run.completed", kinds
        return kinds

    return lambda: loop.run_until_complete(play())


def _astream_as_the_engine_does() -> Callable[[], object]:
    loop = _event_loop()
    graph = _graph().compile(checkpointer=InMemorySaver())
    threads = itertools.count()

    async def stream() -> object:
        config: RunnableConfig = {"configurable": {"thread_id": f"streamed-{next(threads)}"}}
        live = live_config(config, LiveChannel(), tokens=False)
        items = [
            mode
            async for mode, _ in graph.astream(
                {"n": 1}, live, stream_mode=list(STREAM_MODES), durability=DURABILITY
            )
        ]
        assert items.count("updates") == 3, items
        return items

    return lambda: loop.run_until_complete(stream())


def _ainvoke(durability: Durability | None = None) -> Callable[[], object]:
    loop = _event_loop()
    graph = _graph().compile(checkpointer=InMemorySaver())
    threads = itertools.count()

    def run() -> object:
        config: RunnableConfig = {"configurable": {"thread_id": f"bare-{next(threads)}"}}
        output = loop.run_until_complete(graph.ainvoke({"n": 1}, config, durability=durability))
        assert output == FINAL, output
        return output

    return run


@bench(
    "langgraph: Deck.run of a 3-node graph vs graph.ainvoke (memory checkpointer, memory store)",
    budget=1.15,
    unit="x",
)
def deck_vs_ainvoke() -> Pair:
    """Issue 7's target: a Deck run of the graph vs the bare graph's ainvoke."""
    return Pair(subject=_deck_run(), baseline=_ainvoke())


@bench(
    "langgraph: Deck.run of a 3-node graph, µs added over graph.ainvoke "
    "(memory checkpointer, memory store)",
    budget=200.0,
    unit="us",
)
def deck_added_over_ainvoke() -> Pair:
    """The same pair as microseconds a Deck adds to one run of the graph."""
    return Pair(subject=_deck_run(), baseline=_ainvoke())


@bench("langgraph: engine.play of a 3-node graph vs graph.ainvoke (no runtime)", budget=1.15)
def play_vs_ainvoke() -> Pair:
    """The engine's own share: its play consumed bare (no store, no fold), as Deck.run plays."""
    return Pair(subject=_engine_play(deltas=False), baseline=_ainvoke())


@bench(
    "langgraph: engine.play of a 3-node graph with model tokens tapped vs graph.ainvoke",
    budget=1.15,
)
def streamed_play_vs_ainvoke() -> Pair:
    """The engine's share for a streamed run: the token tap's callbacks on every node."""
    return Pair(subject=_engine_play(deltas=True), baseline=_ainvoke())


@bench(
    "langgraph: graph.astream as the engine streams it vs graph.ainvoke (no AgentDeck code)",
    budget=1.05,
)
def astream_as_the_engine_vs_ainvoke() -> Pair:
    """LangGraph's own share: the engine's modes, live channel and durability, bare."""
    return Pair(subject=_astream_as_the_engine_does(), baseline=_ainvoke())


@bench(
    "langgraph: Deck.run of a 3-node graph vs graph.ainvoke(durability='exit'), same checkpoints",
    budget=1.60,
)
def deck_vs_ainvoke_same_checkpoints() -> Pair:
    """Orientation: both sides write one checkpoint per run, as the engine does."""
    return Pair(subject=_deck_run(), baseline=_ainvoke("exit"))
