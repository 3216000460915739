"""Pause and cancel act at node boundaries: after a superstep's nodes completed and its
checkpoint is written, before the next step's nodes start (the 4.x engine had no safe point).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest_asyncio
from lg_graphs import START_STATE, Counter, asking, chain, fan_out, steady

from agentdeck.model.events import Event
from agentdeck.model.payloads import ControlObserved, ControlRequested, NodeUpdated, RunCancelled
from agentdeck.model.status import fold
from agentdeck.testing.engine_kit import (
    check_completed,
    check_control,
    check_interrupted,
    check_log,
    drive,
    make_invocation,
)
from agentdeck.vocabulary import ControlVerb, RunStatus, SafePoint
from agentdeck_langgraph import LangGraphEngine, Workflow


@pytest_asyncio.fixture
async def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'checkpoints.db'}"


@pytest_asyncio.fixture
async def engine(sqlite_url: str) -> AsyncIterator[LangGraphEngine]:
    engine = LangGraphEngine(checkpointer=sqlite_url)
    await engine.open()
    yield engine
    await engine.close()


def _nodes(events: tuple[Event, ...] | list[Event]) -> list[str]:
    return [e.payload.node for e in events if isinstance(e.payload, NodeUpdated)]


def _counting_chain(calls: list[str]) -> Any:
    def node(name: str) -> Any:
        async def run(state: Counter) -> dict[str, Any]:
            calls.append(name)
            return {"log": [name]}

        run.__name__ = name
        return run

    return chain(node("first"), node("second"), node("third"))


async def test_pause_stops_at_the_node_boundary_and_a_fresh_engine_resumes_from_it(
    engine: LangGraphEngine, sqlite_url: str
) -> None:
    calls: list[str] = []
    workflow = Workflow("steps", _counting_chain(calls))
    invocation = make_invocation(engine, workflow, START_STATE)

    paused = await drive(engine, invocation, directives={1: ControlVerb.PAUSE})

    check_control(paused, ControlVerb.PAUSE)
    assert paused.kinds[1:] == [
        "node.updated",
        "control.requested",
        "control.observed",
        "run.paused",
    ]
    assert paused.events[-2].payload == ControlObserved(
        verb=ControlVerb.PAUSE, safe_point=SafePoint.NODE_BOUNDARY
    )
    assert calls == ["first"]  # the next step never started
    graph = await engine._graph(workflow, invocation.invocable)
    snapshot = await graph.aget_state({"configurable": {"thread_id": invocation.run_id}})
    assert snapshot.next == ("second",)

    restarted = LangGraphEngine(checkpointer=sqlite_url)
    await restarted.open()
    try:
        resumed = await drive(
            restarted, make_invocation(restarted, workflow, START_STATE), history=paused.events
        )
    finally:
        await restarted.close()
    [output] = check_completed(resumed)
    assert output.data["log"] == ["first", "second", "third"]  # type: ignore[union-attr]
    assert calls == ["first", "second", "third"]  # nothing ran twice
    assert _nodes(resumed.new_events) == ["second", "third"]


async def test_cancel_at_a_node_boundary_ends_the_run_before_the_next_node(
    engine: LangGraphEngine,
) -> None:
    calls: list[str] = []
    workflow = Workflow("steps", _counting_chain(calls))
    cancelled = await drive(
        engine,
        make_invocation(engine, workflow, START_STATE),
        directives={2: ControlVerb.CANCEL},
        control_reason="user closed the tab",
    )
    check_control(cancelled, ControlVerb.CANCEL)
    assert cancelled.last.payload == RunCancelled(reason="user closed the tab")
    assert calls == ["first", "second"]
    assert _nodes(cancelled.events) == ["first", "second"]


async def test_a_boundary_falls_after_every_node_of_a_parallel_step(
    engine: LangGraphEngine,
) -> None:
    async def sibling(state: Counter) -> dict[str, Any]:
        return {"log": ["sibling"]}

    workflow = Workflow("wide", fan_out(steady, sibling))
    invocation = make_invocation(engine, workflow, START_STATE)
    paused = await drive(engine, invocation, directives={2: ControlVerb.PAUSE})

    check_control(paused, ControlVerb.PAUSE)
    assert sorted(_nodes(paused.events)) == ["plan", "sibling", "steady"]
    steps = [e.payload.step for e in paused.events if isinstance(e.payload, NodeUpdated)]
    assert steps[0] == 1 and steps[1:] == [2, 2]
    resumed = await drive(engine, invocation, history=paused.events)
    check_completed(resumed)
    assert _nodes(resumed.new_events) == ["join"]


async def test_cancelling_a_run_that_waits_for_an_answer_needs_no_engine(
    engine: LangGraphEngine,
) -> None:
    """A waiting run is not playing: the runtime cancels it from the log alone (safe point
    ``suspended``); nothing of the engine runs, and the checkpoint is left as it was."""
    workflow = Workflow("approval", asking())
    invocation = make_invocation(engine, workflow, START_STATE)
    parked = await drive(engine, invocation)
    check_interrupted(parked)

    last = parked.events[-1]
    cancelled = list(parked.events)
    for payload in (
        ControlRequested(verb=ControlVerb.CANCEL, reason="no longer needed"),
        ControlObserved(verb=ControlVerb.CANCEL, safe_point=SafePoint.SUSPENDED),
        RunCancelled(reason="no longer needed"),
    ):
        cancelled.append(
            Event.record(
                payload,
                seq=len(cancelled),
                run_id=last.run_id,
                ts=last.ts + timedelta(seconds=1),
                origin=last.origin,
            )
        )
    check_log(cancelled)
    assert fold(cancelled).status is RunStatus.CANCELLED and fold(cancelled).interrupts == ()


async def test_cancel_at_the_first_boundary_after_an_answer(engine: LangGraphEngine) -> None:
    workflow = Workflow("approval", asking())
    invocation = make_invocation(engine, workflow, START_STATE)
    parked = await drive(engine, invocation)
    answered = await drive(
        engine,
        invocation,
        history=parked.events,
        answers={check_interrupted(parked): "yes"},
        directives={1: ControlVerb.CANCEL},
    )
    check_control(answered, ControlVerb.CANCEL)
    assert _nodes(answered.new_events) == ["ask"]  # review never ran
