"""``Workflow`` as a declaration: validation, discovery, its digest and thread policy, and the
headless ``run()``/``resume()`` path that bypasses the Deck."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph
from lg_graphs import (
    NAP_UNTIL,
    Counter,
    asking,
    chain,
    fan_out,
    left,
    plan,
    right,
    sleeper,
    three_nodes,
)

from agentdeck.authoring.catalog import Catalog, discover_project, is_workflow
from agentdeck.errors import ConfigError, InvalidInputError, NotFoundError
from agentdeck.model.clock import ManualClock
from agentdeck.model.content import DataBlock
from agentdeck.testing.engine_kit import check_completed, drive, make_invocation
from agentdeck_langgraph import LangGraphEngine, PendingInterrupt, RunRef, Workflow


def test_a_workflow_is_a_catalog_workflow_of_the_langgraph_kind() -> None:
    workflow = Workflow("pipeline", three_nodes(), description="three steps")
    assert is_workflow(workflow) and workflow.__agentdeck_workflow__ == "langgraph"
    assert Catalog(workflows=[workflow]).resolve("pipeline") is workflow
    assert (workflow.name, workflow.description, workflow.durable) == (
        "pipeline",
        "three steps",
        True,
    )


def test_a_project_directory_declares_workflows_in_workflow_py(tmp_path: Path) -> None:
    bundle = tmp_path / ".agentdeck" / "workflows" / "approval"
    bundle.mkdir(parents=True)
    (bundle / "workflow.py").write_text(
        textwrap.dedent(
            """
            from typing import TypedDict

            from langgraph.graph import END, START, StateGraph

            from agentdeck_langgraph import Workflow


            class State(TypedDict):
                order_id: str


            async def check(state: State) -> dict:
                return {"order_id": state["order_id"].upper()}


            builder = StateGraph(State)
            builder.add_node("check", check)
            builder.add_edge(START, "check")
            builder.add_edge("check", END)

            approval = Workflow("approval", builder, description="Approve an order")
            """
        )
    )
    sources = discover_project(tmp_path / ".agentdeck")
    try:
        [found] = sources.workflows
        assert isinstance(found, Workflow) and found.name == "approval"
        assert Catalog.from_sources(sources).resolve("approval") is found
    finally:
        sources.unload()


async def test_a_discovered_workflow_runs(tmp_path: Path) -> None:
    bundle = tmp_path / ".agentdeck" / "workflows" / "upper"
    bundle.mkdir(parents=True)
    (bundle / "workflow.py").write_text(
        "from typing import TypedDict\n"
        "from langgraph.graph import END, START, StateGraph\n"
        "from agentdeck_langgraph import Workflow\n"
        "class S(TypedDict):\n    text: str\n"
        "def shout(state: S) -> dict:\n    return {'text': state['text'].upper()}\n"
        "g = StateGraph(S)\ng.add_node('shout', shout)\ng.add_edge(START, 'shout')\n"
        "g.add_edge('shout', END)\nupper = Workflow('upper', g)\n"
    )
    sources = discover_project(tmp_path / ".agentdeck")
    engine = LangGraphEngine(checkpointer="memory://")
    try:
        [found] = sources.workflows
        result = await drive(
            engine, make_invocation(engine, found, [DataBlock(data={"text": "hi"})])
        )
        [output] = check_completed(result)
        assert output.data == {"text": "HI"}  # type: ignore[union-attr]
    finally:
        await engine.close()
        sources.unload()


@pytest.mark.parametrize("name", ["", " padded ", None])
def test_a_workflow_needs_a_usable_name(name: Any) -> None:
    with pytest.raises(ConfigError, match="workflow name"):
        Workflow(name, three_nodes())


def test_builders_and_compiled_graphs_each_have_their_door() -> None:
    with pytest.raises(ConfigError, match=r"Workflow\.from_graph"):
        Workflow("x", three_nodes().compile())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="pass a StateGraph builder to Workflow"):
        Workflow.from_graph("x", three_nodes())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="needs a langgraph StateGraph, not dict"):
        Workflow("x", {})  # type: ignore[arg-type]


def test_a_graph_that_does_not_compile_is_refused_at_build_naming_the_workflow() -> None:
    graph: StateGraph[Counter, Any, Counter, Counter] = StateGraph(Counter)
    graph.add_node("plan", plan)  # no edge from START
    workflow = Workflow("broken", graph)
    with pytest.raises(ConfigError, match="workflow 'broken' does not compile"):
        LangGraphEngine(checkpointer="memory://").compile(workflow)


def test_the_digest_follows_the_graphs_shape_not_its_node_bodies() -> None:
    async def plan(state: Counter) -> dict[str, Any]:  # same name, another body
        return {"log": ["a different plan"]}

    from lg_graphs import review, work

    original = Workflow("w", three_nodes()).digest()
    assert Workflow("w", chain(plan, work, review)).digest() == original
    assert Workflow("w", chain(plan, work)).digest() != original
    invocable = LangGraphEngine(checkpointer="memory://").compile(Workflow("w", three_nodes()))
    assert invocable.code_digest == original


async def test_a_thread_policy_lets_runs_of_one_session_share_their_graph_state() -> None:
    workflow = Workflow(
        "tally",
        chain(plan),
        thread_id=lambda run: f"{run.namespace}/{run.session_id}",
    )
    engine = LangGraphEngine(checkpointer="memory://")
    try:
        outputs = []
        for _ in range(2):
            invocation = make_invocation(
                engine, workflow, [DataBlock(data={})], session_id="s-1", namespace="acme"
            )
            [output] = check_completed(await drive(engine, invocation))
            outputs.append(output.data)  # type: ignore[union-attr]
    finally:
        await engine.close()
    assert outputs == [{"n": 1, "log": ["plan"]}, {"n": 2, "log": ["plan", "plan"]}]
    assert (
        workflow.thread_for(RunRef(run_id="r", workflow="tally", session_id="s", namespace=None))
        == "None/s"
    )


def test_a_thread_policy_must_return_a_name() -> None:
    workflow = Workflow("w", three_nodes(), thread_id=lambda run: "")
    with pytest.raises(ConfigError, match="non-empty string"):
        workflow.thread_for(RunRef(run_id="r", workflow="w"))
    with pytest.raises(ConfigError, match="takes a callable"):
        Workflow("w", three_nodes(), thread_id="session")  # type: ignore[arg-type]


# =========================================================================== headless


async def test_headless_run_returns_the_final_state() -> None:
    state = await Workflow("pipeline", three_nodes()).run({"n": 1})
    assert state == {"n": 2, "log": ["plan", "work", "review"]}


async def test_headless_run_returns_a_pending_interrupt_and_resume_answers_it() -> None:
    workflow = Workflow("approval", asking())
    parked = await workflow.run({"n": 1})
    assert isinstance(parked, PendingInterrupt)
    assert parked["type"] == "interrupt" and parked.payload == {"question": "ship it?", "n": 2}
    assert parked["thread_id"] == parked.thread_id and parked["id"] == parked.interrupt_id

    with pytest.raises(InvalidInputError, match="no open question 'nope'"):
        await workflow.resume(parked.thread_id, "yes", interrupt_id="nope")
    state = await workflow.resume(parked.thread_id, "yes")
    assert state["log"] == ["plan", "ask:yes", "review"]


async def test_headless_resume_needs_the_id_when_several_questions_are_open() -> None:
    workflow = Workflow("two", fan_out(left, right))
    parked = await workflow.run({"n": 1})
    with pytest.raises(InvalidInputError, match="2 open questions"):
        await workflow.resume(parked.thread_id, "x")
    next_question = await workflow.resume(parked.thread_id, "L", interrupt_id=parked.interrupt_id)
    assert isinstance(next_question, PendingInterrupt)
    assert {parked.payload, next_question.payload} == {"left?", "right?"}
    state = await workflow.resume(next_question.thread_id, "R")
    assert len(state["log"]) == 4 and state["log"][-1] == "join"


async def test_headless_resume_of_an_unknown_thread_is_not_found() -> None:
    with pytest.raises(NotFoundError, match="no thread 'ghost'"):
        await Workflow("approval", asking()).resume("ghost", "yes")


async def test_headless_run_refuses_an_input_that_is_not_a_state() -> None:
    with pytest.raises(InvalidInputError, match="mapping"):
        await Workflow("pipeline", three_nodes()).run("text")


class _SleepingClock(ManualClock):
    """A manual clock whose ``sleep`` records the wait and moves time by it."""

    def __init__(self) -> None:
        super().__init__()
        self.slept: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.advance(seconds)


async def test_headless_sleep_until_waits_in_process_on_the_given_clock() -> None:
    clock = _SleepingClock()
    state = await Workflow("nightly", sleeper()).run({"n": 1}, clock=clock)
    assert state["log"] == ["plan", "nap", "review"]
    assert clock.slept == [3600.0] and clock.now() == NAP_UNTIL


async def test_headless_runs_use_the_callers_checkpointer_or_the_graphs_own() -> None:
    saver = InMemorySaver()
    workflow = Workflow("pipeline", three_nodes())
    await workflow.run({"n": 1}, thread_id="t-1", checkpointer=saver)
    assert saver.get({"configurable": {"thread_id": "t-1"}}) is not None

    own = InMemorySaver()
    legacy = Workflow.from_graph("legacy", three_nodes().compile(checkpointer=own))
    await legacy.run({"n": 1}, thread_id="t-2")
    assert own.get({"configurable": {"thread_id": "t-2"}}) is not None
