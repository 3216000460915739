"""Graphs the tests run: small, model-free LangGraph ``StateGraph`` builders.

Shared by the test modules and by the child processes of the cross-process tests, which must
build exactly the graph the parent parked (same shape, so the same ``code_digest``).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from agentdeck import ToolCtx
from agentdeck.model.content import DataBlock
from agentdeck_langgraph import sleep_until

SECRET = "card 4242 declined for alice@example.com"
"""Text a failing node's exception carries: it must never reach the log."""

NAP_UNTIL = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)
"""When the sleeper graph's node wakes: one hour after a ManualClock's default start."""

START_STATE = [DataBlock(data={"n": 1})]
"""The run input every counter graph starts from."""


class Counter(TypedDict, total=False):
    n: int
    log: Annotated[list[str], operator.add]
    answer: Any


def chain(*nodes: Any) -> StateGraph[Counter, Any, Counter, Counter]:
    """START -> nodes in order -> END."""
    graph: StateGraph[Counter, Any, Counter, Counter] = StateGraph(Counter)
    previous = START
    for node in nodes:
        graph.add_node(node.__name__, node)
        graph.add_edge(previous, node.__name__)
        previous = node.__name__
    graph.add_edge(previous, END)
    return graph


async def plan(state: Counter) -> dict[str, Any]:
    return {"n": state.get("n", 0) + 1, "log": ["plan"]}


async def work(state: Counter) -> dict[str, Any]:
    return {"log": ["work"]}


def review(state: Counter) -> dict[str, Any]:
    """A sync node: LangGraph runs it in a worker thread."""
    return {"log": ["review"]}


async def explode(state: Counter) -> dict[str, Any]:
    raise ValueError(SECRET)


async def ask(state: Counter) -> dict[str, Any]:
    answer = interrupt({"question": "ship it?", "n": state.get("n")})
    return {"log": [f"ask:{answer}"], "answer": answer}


async def nap(state: Counter) -> dict[str, Any]:
    sleep_until(NAP_UNTIL)
    return {"log": ["nap"]}


def three_nodes() -> StateGraph[Counter, Any, Counter, Counter]:
    return chain(plan, work, review)


def failing() -> StateGraph[Counter, Any, Counter, Counter]:
    return chain(plan, explode, review)


def asking() -> StateGraph[Counter, Any, Counter, Counter]:
    return chain(plan, ask, review)


def sleeper() -> StateGraph[Counter, Any, Counter, Counter]:
    return chain(plan, nap, review)


async def left(state: Counter) -> dict[str, Any]:
    return {"log": [f"left:{interrupt('left?')}"]}


async def right(state: Counter) -> dict[str, Any]:
    return {"log": [f"right:{interrupt('right?')}"]}


async def steady(state: Counter) -> dict[str, Any]:
    return {"log": ["steady"]}


async def join(state: Counter) -> dict[str, Any]:
    return {"log": ["join"]}


def fan_out(*branches: Any) -> StateGraph[Counter, Any, Counter, Counter]:
    """START -> plan -> every branch in parallel -> join -> END."""
    graph: StateGraph[Counter, Any, Counter, Counter] = StateGraph(Counter)
    graph.add_node("plan", plan)
    graph.add_node("join", join)
    graph.add_edge(START, "plan")
    for branch in branches:
        graph.add_node(branch.__name__, branch)
        graph.add_edge("plan", branch.__name__)
    graph.add_edge([branch.__name__ for branch in branches], "join")
    graph.add_edge("join", END)
    return graph


@dataclass
class Calendar:
    owner: str


class Greeting(TypedDict, total=False):
    who: str
    run: str | None


async def greet_runtime(state: Greeting, runtime: Runtime[Calendar]) -> dict[str, Any]:
    return {"who": runtime.context.owner if runtime.context is not None else "nobody"}


async def greet_ctx(state: Greeting, calendar: ToolCtx[Calendar]) -> dict[str, Any]:
    owner = calendar.data.owner if calendar.data is not None else "nobody"
    return {"who": owner, "run": calendar.run_id}


def greeter(node: Any) -> StateGraph[Greeting, Calendar, Greeting, Greeting]:
    graph: StateGraph[Greeting, Calendar, Greeting, Greeting] = StateGraph(
        Greeting, context_schema=Calendar
    )
    graph.add_node("greet", node)
    graph.add_edge(START, "greet")
    graph.add_edge("greet", END)
    return graph
