"""Engine parity: what a LangGraph graph returns raw, it returns through a Deck.

Each test runs one graph twice: raw (``compiled.ainvoke``, LangGraph's own call) and as a deck's
workflow (``deck.run``), and asserts that both give the same output. No model is involved.
``docs/parity.md`` cites these tests row by row.
"""

from __future__ import annotations

import operator
from collections.abc import AsyncIterator
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.cache.memory import InMemoryCache
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, StateGraph
from langgraph.types import CachePolicy, Command, RetryPolicy, Send, interrupt

from agentdeck import Deck, Event, InterruptResult, RunFailedError, Settings
from agentdeck.errors import InvalidInputError
from agentdeck_langgraph import Workflow, with_config

# --------------------------------------------------------------------------- graphs


class Whole(TypedDict, total=False):
    question: str
    scratch: str
    answer: str


class Question(TypedDict):
    question: str


class Answer(TypedDict):
    answer: str


def think(state: Whole) -> dict[str, Any]:
    return {"scratch": f"thinking about {state['question']}"}


def respond(state: Whole) -> dict[str, Any]:
    return {"answer": state["question"].upper()}


def schema_graph() -> StateGraph[Any, Any, Any, Any]:
    builder = StateGraph(Whole, input_schema=Question, output_schema=Answer)
    builder.add_node("think", think)
    builder.add_node("respond", respond)
    builder.add_edge(START, "think")
    builder.add_edge("think", "respond")
    builder.add_edge("respond", END)
    return builder


@task
async def exclaim(text: str) -> str:
    return text.upper() + "!"


@entrypoint(checkpointer=InMemorySaver())
async def shout(text: str) -> str:
    return await exclaim(text)


class Ticket(TypedDict, total=False):
    ticket: str
    tenant: str
    hops: int
    decision: str


def tag_tenant(state: Ticket, config: RunnableConfig) -> dict[str, Any]:
    return {"tenant": config["configurable"]["tenant"]}


def ask(state: Ticket) -> dict[str, Any]:
    return {"decision": str(interrupt({"ticket": state["ticket"]}))}


def retag(state: Ticket, config: RunnableConfig) -> dict[str, Any]:
    return {"tenant": f"{config['configurable']['tenant']} (after the answer)"}


def ticket_graph(*, asking: bool = False) -> StateGraph[Any, Any, Any, Any]:
    builder = StateGraph(Ticket)
    builder.add_node("tag", tag_tenant)
    builder.add_edge(START, "tag")
    if asking:
        builder.add_node("ask", ask)
        builder.add_node("retag", retag)
        builder.add_edge("tag", "ask")
        builder.add_edge("ask", "retag")
        builder.add_edge("retag", END)
    else:
        builder.add_edge("tag", END)
    return builder


def loop_node(state: Ticket) -> dict[str, Any]:
    return {"hops": state.get("hops", 0) + 1}


def looping_graph() -> StateGraph[Any, Any, Any, Any]:
    builder = StateGraph(Ticket)
    builder.add_node("loop", loop_node)
    builder.add_edge(START, "loop")
    builder.add_conditional_edges("loop", lambda state: "loop" if state["hops"] < 10 else END)
    return builder


@pytest.fixture
async def deck() -> AsyncIterator[Deck]:
    workflows = [
        Workflow("qa", schema_graph()),
        Workflow.from_graph("qa_compiled", schema_graph().compile()),
        Workflow.from_graph("shout", shout),
        Workflow("tickets", ticket_graph()),
        Workflow("asking_tickets", ticket_graph(asking=True)),
        Workflow("looping", looping_graph()),
    ]
    settings = Settings(env={"AGENTDECK_STATE": "memory://"})
    async with Deck(workflows=workflows, settings=settings, observers=()) as opened:
        yield opened


def thread(name: str) -> RunnableConfig:
    return {"configurable": {"thread_id": name}}


# --------------------------------------------------------------------------- 6 output schemas


@pytest.mark.parametrize("workflow", ["qa", "qa_compiled"], ids=["builder", "from_graph"])
async def test_an_output_schema_limits_the_output_to_its_keys_as_ainvoke_does(
    deck: Deck, workflow: str
) -> None:
    raw = (
        await schema_graph()
        .compile(checkpointer=InMemorySaver())
        .ainvoke({"question": "why"}, thread("raw"))
    )

    output = await deck.run(workflow, {"question": "why"})

    assert output == raw == {"answer": "WHY"}
    [*_, run] = await deck.runs.list()  # oldest first: this test's run
    [completed] = [event async for event in run.events() if event.kind == "run.completed"]
    assert "scratch" not in completed.to_json()  # the private key stays out of the output


async def test_a_graph_without_an_output_schema_still_returns_its_whole_state(
    deck: Deck,
) -> None:
    raw = (
        await ticket_graph()
        .compile()
        .ainvoke({"ticket": "T-1"}, {"configurable": {"tenant": "acme"}})
    )

    output = await deck.run(
        "tickets", with_config({"ticket": "T-1"}, configurable={"tenant": "acme"})
    )

    assert output == raw == {"ticket": "T-1", "tenant": "acme"}


# --------------------------------------------------------------------------- 7 inputs and config


async def test_an_entrypoint_taking_a_string_runs_on_a_deck_and_headless(deck: Deck) -> None:
    raw = await shout.ainvoke("hey", thread("raw-shout"))

    on_deck = await deck.run("shout", "hey")
    headless = await Workflow.from_graph("shout", shout).run("hey")

    assert on_deck == headless == raw == "HEY!"


async def test_a_state_graph_still_refuses_an_input_that_is_not_a_mapping(deck: Deck) -> None:
    with pytest.raises(InvalidInputError) as refused:
        await deck.run("qa", "why")
    assert "mapping" in str(refused.value)


async def test_a_per_run_recursion_limit_stops_the_run_as_it_stops_ainvoke(deck: Deck) -> None:
    with pytest.raises(GraphRecursionError):
        await looping_graph().compile().ainvoke({"ticket": "T-1"}, {"recursion_limit": 3})
    assert (await looping_graph().compile().ainvoke({"ticket": "T-1"}))["hops"] == 10

    with pytest.raises(RunFailedError) as failed:
        await deck.run("looping", with_config({"ticket": "T-1"}, recursion_limit=3))
    assert failed.value.error_code == "engine_error"
    assert "GraphRecursionError" in str(failed.value)
    assert (await deck.run("looping", {"ticket": "T-1"}))["hops"] == 10


async def test_the_per_run_config_is_recorded_and_reaches_the_continuation(deck: Deck) -> None:
    graph = ticket_graph(asking=True).compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "raw-ask", "tenant": "acme"}}
    raw_parked = await graph.ainvoke({"ticket": "T-2"}, config)
    assert "__interrupt__" in raw_parked
    raw = await graph.ainvoke(Command(resume="yes"), config)

    parked = await deck.run(
        "asking_tickets", with_config({"ticket": "T-2"}, configurable={"tenant": "acme"})
    )
    assert isinstance(parked, InterruptResult)
    run = await deck.runs.get(parked.run_id)
    await run.answer("yes")
    output = await run

    assert output == raw
    assert output["tenant"] == "acme (after the answer)"
    started: Event = await anext(aiter(run.events()))
    assert started.payload.input[1].data == {  # type: ignore[union-attr]
        "langgraph.config": {"configurable": {"tenant": "acme"}}
    }


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"configurable": {"thread_id": "mine"}}, "configurable"),
        ({"recursion_limit": 0}, "recursion_limit"),
        ({"tags": [1]}, "tags"),
    ],
    ids=["the engine's thread", "no steps", "a tag that is not a string"],
)
def test_config_the_engine_cannot_take_is_refused_naming_the_field(
    options: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidInputError) as refused:
        with_config({"ticket": "T-3"}, **options)
    assert refused.value.field == field


# --------------------------------------------------------------------------- the graph API


class Fanned(TypedDict, total=False):
    words: list[str]
    word: str
    shouted: Annotated[list[str], operator.add]
    route: str


def split(state: Fanned) -> dict[str, Any]:
    return {}


def fan(state: Fanned) -> list[Send]:
    return [Send("shout_one", {"word": word}) for word in state["words"]]


def shout_one(state: Fanned) -> dict[str, Any]:
    return {"shouted": [state["word"].upper()]}


def send_graph() -> StateGraph[Any, Any, Any, Any]:
    builder = StateGraph(Fanned)
    builder.add_node("split", split)
    builder.add_node("shout_one", shout_one)
    builder.add_edge(START, "split")
    builder.add_conditional_edges("split", fan, ["shout_one"])
    builder.add_edge("shout_one", END)
    return builder


def router(state: Fanned) -> Command[Any]:
    goto = "long" if len(state["words"]) > 2 else "short"
    return Command(update={"route": goto}, goto=goto)


def long_words(state: Fanned) -> dict[str, Any]:
    return {"shouted": ["many words"]}


def short_words(state: Fanned) -> dict[str, Any]:
    return {"shouted": ["few words"]}


def command_graph() -> StateGraph[Any, Any, Any, Any]:
    builder = StateGraph(Fanned)
    builder.add_node("router", router, destinations=("long", "short"))
    builder.add_node("long", long_words)
    builder.add_node("short", short_words)
    builder.add_edge(START, "router")
    builder.add_edge("long", END)
    builder.add_edge("short", END)
    return builder


def subgraph_graph() -> StateGraph[Any, Any, Any, Any]:
    inner = StateGraph(Fanned)
    inner.add_node("shout_all", lambda state: {"shouted": [w.upper() for w in state["words"]]})
    inner.add_edge(START, "shout_all")
    inner.add_edge("shout_all", END)
    outer = StateGraph(Fanned)
    outer.add_node("inner", inner.compile())
    outer.add_edge(START, "inner")
    outer.add_edge("inner", END)
    return outer


class Flaky:
    """A node that fails its first ``failures`` calls, then answers."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def __call__(self, state: Fanned) -> dict[str, Any]:
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionError("the service blinked")
        return {"shouted": [f"answered on call {self.calls}"]}


def retry_graph(node: Flaky) -> StateGraph[Any, Any, Any, Any]:
    builder = StateGraph(Fanned)
    builder.add_node(
        "flaky", node, retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False)
    )
    builder.add_edge(START, "flaky")
    builder.add_edge("flaky", END)
    return builder


class Counted:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, state: Fanned) -> dict[str, Any]:
        self.calls += 1
        return {"shouted": [" ".join(state["words"]).upper()]}


def cached_graph(node: Counted) -> StateGraph[Any, Any, Any, Any]:
    builder = StateGraph(Fanned)
    builder.add_node("expensive", node, cache_policy=CachePolicy())
    builder.add_edge(START, "expensive")
    builder.add_edge("expensive", END)
    return builder


async def _both(builder: StateGraph[Any, Any, Any, Any], state: dict[str, Any]) -> tuple[Any, Any]:
    """``ainvoke`` of the compiled builder, and the same builder's run on a deck."""
    raw = await builder.compile().ainvoke(state)
    settings = Settings(env={"AGENTDECK_STATE": "memory://"})
    async with Deck(workflows=[Workflow("g", builder)], settings=settings, observers=()) as deck:
        return raw, await deck.run("g", state)


async def test_send_fans_out_and_a_reducer_gathers_as_raw() -> None:
    raw, on_deck = await _both(send_graph(), {"words": ["a", "b", "c"]})
    assert on_deck == raw
    assert sorted(on_deck["shouted"]) == ["A", "B", "C"]


async def test_a_command_routes_and_updates_as_raw() -> None:
    raw, on_deck = await _both(command_graph(), {"words": ["a", "b", "c"]})
    assert on_deck == raw
    assert (on_deck["route"], on_deck["shouted"]) == ("long", ["many words"])


async def test_a_compiled_subgraph_as_a_node_runs_as_raw() -> None:
    raw, on_deck = await _both(subgraph_graph(), {"words": ["a", "b"]})
    assert on_deck == raw
    assert on_deck["shouted"] == ["A", "B"]


async def test_a_retry_policy_retries_a_failing_node_as_raw() -> None:
    raw_node, deck_node = Flaky(failures=2), Flaky(failures=2)
    raw = await retry_graph(raw_node).compile().ainvoke({"words": []})
    settings = Settings(env={"AGENTDECK_STATE": "memory://"})
    workflow = Workflow("g", retry_graph(deck_node))
    async with Deck(workflows=[workflow], settings=settings, observers=()) as deck:
        on_deck = await deck.run("g", {"words": []})
    assert on_deck == raw == {"words": [], "shouted": ["answered on call 3"]}
    assert deck_node.calls == raw_node.calls == 3


async def test_a_cache_policy_is_honoured_for_a_graph_compiled_with_a_cache() -> None:
    raw_node, deck_node = Counted(), Counted()
    raw_graph = cached_graph(raw_node).compile(cache=InMemoryCache())
    raw = [await raw_graph.ainvoke({"words": ["a", "b"]}) for _ in range(2)]
    settings = Settings(env={"AGENTDECK_STATE": "memory://"})
    workflow = Workflow.from_graph("g", cached_graph(deck_node).compile(cache=InMemoryCache()))
    async with Deck(workflows=[workflow], settings=settings, observers=()) as deck:
        on_deck = [await deck.run("g", {"words": ["a", "b"]}) for _ in range(2)]
    assert on_deck == raw
    assert deck_node.calls == raw_node.calls == 1  # the second run was served from the cache
