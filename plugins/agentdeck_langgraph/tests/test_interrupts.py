"""``interrupt()`` inside a node: the run waits for an answer, and the answer resumes the thread.

Interrupt ids are LangGraph's own ``Interrupt.id``; several questions open at once are recorded
as several ``run.interrupted`` in a row and may be answered together or one at a time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from langgraph.types import interrupt
from lg_graphs import START_STATE, Counter, asking, chain, fan_out, left, right, steady
from pydantic import BaseModel

from agentdeck.model.payloads import NodeUpdated, RunInterrupted
from agentdeck.testing.engine_kit import (
    check_completed,
    check_failed,
    check_interrupted,
    drive,
    make_invocation,
)
from agentdeck.vocabulary import RunStatus
from agentdeck_langgraph import LangGraphEngine, Workflow


@pytest_asyncio.fixture
async def engine() -> AsyncIterator[LangGraphEngine]:
    engine = LangGraphEngine(checkpointer="memory://")
    await engine.open()
    yield engine
    await engine.close()


async def test_an_interrupt_parks_the_run_with_langgraphs_id_and_the_answer_resumes_it(
    engine: LangGraphEngine,
) -> None:
    workflow = Workflow("approval", asking())
    invocation = make_invocation(engine, workflow, START_STATE)
    parked = await drive(engine, invocation)

    interrupt_id = check_interrupted(parked)
    asked = parked.last.payload
    assert isinstance(asked, RunInterrupted)
    assert (asked.reason, asked.payload) == ("human", {"question": "ship it?", "n": 2})
    graph = await engine._graph(workflow, invocation.invocable)  # the thread is the run's id
    snapshot = await graph.aget_state({"configurable": {"thread_id": invocation.run_id}})
    assert [i.id for i in snapshot.interrupts] == [interrupt_id]

    answered = await drive(engine, invocation, history=parked.events, answers={interrupt_id: "yes"})
    [output] = check_completed(answered)
    assert output.data == {"n": 2, "log": ["plan", "ask:yes", "review"], "answer": "yes"}  # type: ignore[union-attr]
    resumed_nodes = [
        e.payload.node for e in answered.new_events if isinstance(e.payload, NodeUpdated)
    ]
    assert resumed_nodes == ["ask", "review"]


async def test_an_interrupted_node_runs_again_from_its_start_when_answered(
    engine: LangGraphEngine,
) -> None:
    calls: list[str] = []

    async def charge_then_ask(state: Counter) -> dict[str, Any]:
        calls.append("before interrupt")  # a side effect LangGraph repeats on resume
        return {"answer": interrupt("confirm?")}

    invocation = make_invocation(engine, Workflow("charge", chain(charge_then_ask)), START_STATE)
    parked = await drive(engine, invocation)
    answered = await drive(
        engine, invocation, history=parked.events, answers={check_interrupted(parked): True}
    )
    check_completed(answered)
    assert calls == ["before interrupt", "before interrupt"]


async def test_parallel_questions_are_recorded_in_a_row_and_answered_together(
    engine: LangGraphEngine,
) -> None:
    invocation = make_invocation(engine, Workflow("two", fan_out(left, right)), START_STATE)
    parked = await drive(engine, invocation)

    parked.assert_clean()
    assert parked.kinds[-2:] == ["run.interrupted", "run.interrupted"]
    assert parked.status is RunStatus.WAITING_ANSWER and len(parked.open_interrupts) == 2
    by_payload = {
        e.payload.payload: e.payload.interrupt_id
        for e in parked.events
        if isinstance(e.payload, RunInterrupted)
    }
    answered = await drive(
        engine,
        invocation,
        history=parked.events,
        answers={by_payload["left?"]: "L", by_payload["right?"]: "R"},
    )
    [output] = check_completed(answered)
    assert sorted(output.data["log"]) == ["join", "left:L", "plan", "right:R"]  # type: ignore[union-attr]


async def test_answering_one_of_two_questions_asks_the_other_again_under_its_own_id(
    engine: LangGraphEngine,
) -> None:
    invocation = make_invocation(engine, Workflow("two", fan_out(left, right)), START_STATE)
    parked = await drive(engine, invocation)
    ids = {
        e.payload.payload: e.payload.interrupt_id
        for e in parked.events
        if isinstance(e.payload, RunInterrupted)
    }

    first = await drive(engine, invocation, history=parked.events, answers={ids["left?"]: "L"})
    assert first.kinds[-1] == "run.interrupted" and first.open_interrupts == [ids["right?"]]
    second = await drive(engine, invocation, history=first.events, answers={ids["right?"]: "R"})
    [output] = check_completed(second)
    assert sorted(output.data["log"]) == ["join", "left:L", "plan", "right:R"]  # type: ignore[union-attr]


async def test_a_sibling_that_finished_before_the_question_is_not_recorded_twice(
    engine: LangGraphEngine,
) -> None:
    invocation = make_invocation(engine, Workflow("mixed", fan_out(steady, right)), START_STATE)
    parked = await drive(engine, invocation)
    interrupt_id = check_interrupted(parked)
    answered = await drive(engine, invocation, history=parked.events, answers={interrupt_id: "R"})

    check_completed(answered)
    nodes = [e.payload.node for e in answered.events if isinstance(e.payload, NodeUpdated)]
    assert sorted(nodes) == ["join", "plan", "right", "steady"]


async def test_a_typed_question_records_the_answer_shape_it_expects(
    engine: LangGraphEngine,
) -> None:
    class Decision(BaseModel):
        approved: bool

    async def decide(state: Counter) -> dict[str, Any]:
        decision = interrupt("approve?", response_schema=Decision)
        return {"answer": decision.approved}

    invocation = make_invocation(engine, Workflow("typed", chain(decide)), START_STATE)
    parked = await drive(engine, invocation)
    asked = parked.last.payload
    assert isinstance(asked, RunInterrupted) and asked.expected is not None
    assert asked.expected.json_schema is not None
    assert asked.expected.json_schema["properties"]["approved"]["type"] == "boolean"
    answered = await drive(
        engine, invocation, history=parked.events, answers={asked.interrupt_id: {"approved": True}}
    )
    [output] = check_completed(answered)
    assert output.data["answer"] is True  # type: ignore[union-attr]


async def test_a_run_parked_in_another_engines_memory_cannot_be_continued(
    engine: LangGraphEngine,
) -> None:
    from agentdeck.errors import ReplayError

    workflow = Workflow("approval", asking())
    parked = await drive(engine, make_invocation(engine, workflow, START_STATE))
    elsewhere = LangGraphEngine(checkpointer="memory://")
    await elsewhere.open()
    try:
        assert not elsewhere.capabilities.durable_suspend
        answered = await drive(
            elsewhere,
            make_invocation(elsewhere, workflow, START_STATE),
            history=parked.events,
            answers={check_interrupted(parked): "yes"},
        )
    finally:
        await elsewhere.close()
    check_failed(answered)
    assert isinstance(answered.raised, ReplayError)
    assert answered.raised.reason == "parked_in_memory"


async def test_a_non_durable_workflow_parks_in_engine_memory_even_on_a_durable_checkpointer(
    tmp_path: Path,
) -> None:
    from agentdeck.errors import ReplayError

    url = f"sqlite:///{tmp_path / 'cp.db'}"
    workflow = Workflow("scratch", asking(), durable=False)
    first, second = LangGraphEngine(checkpointer=url), LangGraphEngine(checkpointer=url)
    await first.open()
    await second.open()
    try:
        assert first.capabilities.durable_suspend
        parked = await drive(first, make_invocation(first, workflow, START_STATE))
        answered = await drive(
            second,
            make_invocation(second, workflow, START_STATE),
            history=parked.events,
            answers={check_interrupted(parked): "yes"},
        )
    finally:
        await first.close()
        await second.close()
    assert isinstance(answered.raised, ReplayError)
    assert answered.raised.reason == "parked_in_memory"
