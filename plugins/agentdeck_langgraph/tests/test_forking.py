"""Forking and retrying LangGraph runs on a deck: a new run on a thread of its own, rebuilt at
the checkpoint of a recorded step from the origin's node updates, that executes only the steps
after it (LangGraph's time travel, from the run's log)."""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.func import entrypoint
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send

from agentdeck import Deck, ForkUnsupportedError, InvalidInputError, RunFailedError, Settings
from agentdeck.model.payloads import ForkOrigin, NodeUpdated, RunStarted
from agentdeck_langgraph import Workflow

executed: Counter[str] = Counter()
replies: list[Iterator[AIMessage]] = []
broken: set[str] = set()


class Chat(TypedDict, total=False):
    question: str
    plan: str
    draft: str
    answer: str
    trail: Annotated[list[str], operator.add]


def plan(state: Chat) -> dict[str, Any]:
    executed["plan"] += 1
    return {"plan": f"look up {state['question']}", "trail": ["plan"]}


async def draft(state: Chat) -> dict[str, Any]:
    """Asks a (fake) chat model: each call gets the model's next scripted reply."""
    executed["draft"] += 1
    model = GenericFakeChatModel(messages=replies[0])
    reply = await model.ainvoke(state["plan"])
    return {"draft": str(reply.content), "trail": ["draft"]}


def finish(state: Chat) -> dict[str, Any]:
    executed["finish"] += 1
    if "finish" in broken:
        raise RuntimeError("finish is down")
    return {"answer": state["draft"].upper(), "trail": ["finish"]}


def chat_graph() -> StateGraph[Any, Any, Any, Any]:
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(Chat)
    builder.add_node("plan", plan)
    builder.add_node("draft", draft)
    builder.add_node("finish", finish)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "draft")
    builder.add_edge("draft", "finish")
    builder.add_edge("finish", END)
    return builder


@entrypoint()
async def echo(text: str) -> str:
    return text


@pytest.fixture(autouse=True)
def _reset() -> None:
    executed.clear()
    broken.clear()
    replies[:] = [iter([AIMessage(content="first answer"), AIMessage(content="second answer")])]


@pytest.fixture
async def deck() -> AsyncIterator[Deck]:
    workflows = [Workflow("chat", chat_graph()), Workflow.from_graph("echo", echo)]
    settings = Settings(env={"AGENTDECK_STATE": "memory://"})
    async with Deck(workflows=workflows, settings=settings, observers=()) as opened:
        yield opened


async def _log(deck: Deck, run_id: str) -> list[Any]:
    run = await deck.runs.get(run_id)
    return [event.payload async for event in run.events()]


async def test_a_run_forked_from_the_checkpoint_of_step_1_diverges_with_a_different_answer(
    deck: Deck,
) -> None:
    original = await deck.runs.start("chat", {"question": "refunds"})
    first = await original
    assert first["answer"] == "FIRST ANSWER"

    fork = await deck.runs.fork(original.id, at=1)
    second = await fork

    assert second["answer"] == "SECOND ANSWER"  # the model was asked again, and said else
    assert second["question"] == "refunds" and second["plan"] == first["plan"]
    assert second["trail"] == ["plan", "draft", "finish"]
    assert executed == Counter(plan=1, draft=2, finish=2)  # step 1 (plan) was reused
    log = await _log(deck, fork.id)
    started = log[0]
    assert isinstance(started, RunStarted)
    assert started.forked_from == ForkOrigin(run_id=original.id, at=1)
    updated = [(p.node, p.step) for p in log if isinstance(p, NodeUpdated)]
    assert updated == [("plan", 1), ("draft", 2), ("finish", 3)]
    assert (await deck.runs.get(original.id)) is not None
    assert (await _log(deck, original.id))[-1].output[0].data["answer"] == "FIRST ANSWER"


async def test_a_fork_from_step_0_runs_every_node_again_from_the_input(deck: Deck) -> None:
    original = await deck.runs.start("chat", {"question": "refunds"})
    await original
    fork = await deck.runs.fork(original.id, at=0)
    assert (await fork)["answer"] == "SECOND ANSWER"
    assert executed == Counter(plan=2, draft=2, finish=2)


async def test_a_fork_of_a_fork_goes_on_from_the_forks_own_log(deck: Deck) -> None:
    replies[:] = [iter([AIMessage(content=f"answer {n}") for n in range(3)])]
    original = await deck.runs.start("chat", {"question": "refunds"})
    await original
    fork = await deck.runs.fork(original.id, at=2)  # reuses plan and draft: same answer
    assert (await fork)["answer"] == "ANSWER 0"
    again = await deck.runs.fork(fork.id, at=1)
    assert (await again)["answer"] == "ANSWER 1"
    assert executed == Counter(plan=1, draft=2, finish=3)


async def test_a_failed_run_retried_goes_on_from_the_checkpoint_it_stopped_at(
    deck: Deck,
) -> None:
    broken.add("finish")
    failed = await deck.runs.start("chat", {"question": "refunds"})
    with pytest.raises(RunFailedError):
        await failed
    broken.clear()

    retry = await deck.runs.retry(failed.id)

    assert (await retry)["answer"] == "FIRST ANSWER"  # the draft was reused, not asked again
    assert executed == Counter(plan=1, draft=1, finish=2)
    started = (await _log(deck, retry.id))[0]
    assert isinstance(started, RunStarted) and started.retry_of == failed.id


async def test_a_step_the_log_does_not_hold_is_refused_and_an_entrypoint_does_not_fork(
    deck: Deck,
) -> None:
    original = await deck.runs.start("chat", {"question": "refunds"})
    await original
    with pytest.raises(InvalidInputError) as refused:
        await deck.runs.fork(original.id, at=4)
    assert refused.value.field == "at" and "0 to 3" in str(refused.value)

    run = await deck.runs.start("echo", "hi")
    assert await run == "hi"
    with pytest.raises(ForkUnsupportedError) as unsupported:
        await deck.runs.fork(run.id, at=0)
    assert unsupported.value.engine == "langgraph"


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
    executed["shout_one"] += 1
    return {"shouted": [state["word"].upper()]}


def router(state: Fanned) -> Command[Any]:
    goto = "long" if len(state["words"]) > 2 else "short"
    return Command(update={"route": goto}, goto=goto)


def long_words(state: Fanned) -> dict[str, Any]:
    return {"shouted": ["many words"]}


def short_words(state: Fanned) -> dict[str, Any]:
    return {"shouted": ["few words"]}


def fanned_graphs() -> list[Workflow]:
    sending: StateGraph[Any, Any, Any, Any] = StateGraph(Fanned)
    sending.add_node("split", split)
    sending.add_node("shout_one", shout_one)
    sending.add_edge(START, "split")
    sending.add_conditional_edges("split", fan, ["shout_one"])
    sending.add_edge("shout_one", END)
    routing: StateGraph[Any, Any, Any, Any] = StateGraph(Fanned)
    routing.add_node("router", router, destinations=("long", "short"))
    routing.add_node("long", long_words)
    routing.add_node("short", short_words)
    routing.add_edge(START, "router")
    routing.add_edge("long", END)
    routing.add_edge("short", END)
    return [Workflow("sending", sending), Workflow("routing", routing)]


async def test_a_fork_after_a_send_fan_out_fans_out_again_from_the_reused_state() -> None:
    settings = Settings(env={"AGENTDECK_STATE": "memory://"})
    async with Deck(workflows=fanned_graphs(), settings=settings, observers=()) as deck:
        run = await deck.runs.start("sending", {"words": ["a", "bb"]})
        raw = await run
        fork = await deck.runs.fork(run.id, at=1)  # split reused; Send picks the words again
        assert await fork == raw == {"words": ["a", "bb"], "shouted": ["A", "BB"]}
        assert executed["shout_one"] == 4


async def test_a_step_routed_by_a_command_is_no_fork_point_but_its_neighbours_are() -> None:
    settings = Settings(env={"AGENTDECK_STATE": "memory://"})
    async with Deck(workflows=fanned_graphs(), settings=settings, observers=()) as deck:
        run = await deck.runs.start("routing", {"words": ["a", "bb", "ccc"]})
        raw = await run
        with pytest.raises(InvalidInputError) as refused:
            await deck.runs.fork(run.id, at=1)
        assert refused.value.field == "at" and "'router' routes with Command" in str(refused.value)
        assert await (await deck.runs.fork(run.id, at=0)) == raw
        assert await (await deck.runs.fork(run.id, at=2)) == raw
