"""LangGraph engine rows: what running a graph as an AgentDeck run costs over running it bare.

Both sides run the same three-node graph (trivial nodes, so the number is the engine's overhead
at its most visible) on an ``InMemorySaver``, each call on a new thread, in one event loop.
The subject plays a run through the engine with ``agentdeck.testing.drive`` (the runtime's
semantics: every payload checked, wrapped in an envelope, JSON round-tripped and folded);
the baseline is the graph's own ``ainvoke``. The Deck-level row (a real store, observers) is
measured where the Deck is.

The first row is the issue's target (1.15x). Two more rows split what it measures: the
engine's own code (its play against the graph streamed exactly as the engine streams it) and
LangGraph's own price for those stream modes (``custom`` and ``messages`` switch LangGraph to
its concurrent task runner, ``checkpoints`` builds a snapshot per step) -- no AgentDeck code in
that one. What is left over is ``drive``'s share: the runtime's per-event envelope, JSON round
trip and fold.
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

from agentdeck.content import DataBlock
from agentdeck.ports import Invocation
from agentdeck.testing.engine_kit import drive
from agentdeck_langgraph import LangGraphEngine, Workflow
from agentdeck_langgraph.engine import STREAM_MODES
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


def _engine_run(loop: asyncio.AbstractEventLoop) -> Callable[[], object]:
    engine = LangGraphEngine(checkpointer="memory://")
    invocable = engine.compile(Workflow("bench", _graph()))
    loop.run_until_complete(engine.open())
    runs = itertools.count()

    def run() -> object:
        invocation = Invocation(
            run_id=f"run-{next(runs)}", invocable=invocable, input=[DataBlock(data={"n": 1})]
        )
        result = loop.run_until_complete(drive(engine, invocation))
        assert result.status == "completed", result.kinds
        return result

    return run


def _bare(loop: asyncio.AbstractEventLoop, *, streamed: bool) -> Callable[[], object]:
    graph = _graph().compile(checkpointer=InMemorySaver())
    threads = itertools.count()

    async def stream(config: RunnableConfig) -> None:
        async for _ in graph.astream(
            {"n": 1}, config, stream_mode=list(STREAM_MODES), durability="sync"
        ):
            pass

    def run() -> object:
        config: RunnableConfig = {"configurable": {"thread_id": f"bare-{next(threads)}"}}
        if streamed:
            return loop.run_until_complete(stream(config))
        return loop.run_until_complete(graph.ainvoke({"n": 1}, config))

    return run


@bench("langgraph: engine run (drive) vs graph.ainvoke, 3 nodes", budget=1.15, unit="x")
def engine_vs_ainvoke() -> Pair:
    """A run through LangGraphEngine + drive vs the bare graph's ainvoke (InMemorySaver)."""
    loop = asyncio.new_event_loop()
    return Pair(subject=_engine_run(loop), baseline=_bare(loop, streamed=False))


@bench("langgraph: engine.play vs graph.astream with the engine's modes", budget=1.25, unit="x")
def play_vs_astream() -> Pair:
    """The engine's own share: its play consumed bare vs the graph streamed the same way."""
    loop = asyncio.new_event_loop()
    engine = LangGraphEngine(checkpointer="memory://")
    invocable = engine.compile(Workflow("bench", _graph()))
    loop.run_until_complete(engine.open())
    runs = itertools.count()

    async def play() -> None:
        invocation = Invocation(
            run_id=f"run-{next(runs)}", invocable=invocable, input=[DataBlock(data={"n": 1})]
        )
        async for _ in engine.play(invocation):
            pass

    return Pair(
        subject=lambda: loop.run_until_complete(play()), baseline=_bare(loop, streamed=True)
    )


@bench("langgraph: graph.astream with the engine's modes vs graph.ainvoke", budget=1.5, unit="x")
def astream_vs_ainvoke() -> Pair:
    """LangGraph's own cost of streaming updates/custom/messages/checkpoints (no AgentDeck)."""
    loop = asyncio.new_event_loop()
    return Pair(subject=_bare(loop, streamed=True), baseline=_bare(loop, streamed=False))
