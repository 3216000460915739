"""What a node writes reaches the run while the node still runs, and checkpoints are written when
the graph stops (see ``agentdeck_langgraph.live`` and the engine's module doc).

The liveness tests consume ``engine.play`` directly: a node writes, then waits for the test to
have *received* the write; a play that held writes back until the node returned would never
let it finish (each wait is bounded, so such a play fails instead of hanging).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import StreamWriter
from lg_graphs import START_STATE, Counter, chain, fan_out, three_nodes

from agentdeck.model.payloads import NodeUpdated, Payload, Report, TextDelta
from agentdeck.testing.engine_kit import check_completed, drive, make_invocation
from agentdeck_langgraph import LangGraphEngine, Workflow, live, report

PATIENCE = 5.0
"""Seconds a node waits for the test to see its write before the test counts it as held back."""


@pytest_asyncio.fixture
async def engine() -> AsyncIterator[LangGraphEngine]:
    engine = LangGraphEngine(checkpointer="memory://")
    await engine.open()
    yield engine
    await engine.close()


async def _play_until(
    engine: LangGraphEngine, workflow: Workflow, seen: asyncio.Event, wanted: type[Payload]
) -> list[Payload]:
    """Play ``workflow``, setting ``seen`` on the first ``wanted`` payload; every payload."""
    payloads: list[Payload] = []
    invocation = make_invocation(engine, workflow, START_STATE)
    async with asyncio.timeout(PATIENCE * 2):
        async for payload in engine.play(invocation):
            payloads.append(payload)
            if isinstance(payload, wanted):
                seen.set()
    return payloads


async def test_a_custom_write_is_yielded_while_its_node_still_runs(
    engine: LangGraphEngine,
) -> None:
    seen = asyncio.Event()

    async def slow(state: Counter) -> dict[str, Any]:
        report("halfway")
        await asyncio.wait_for(seen.wait(), PATIENCE)  # TimeoutError if the write was held
        return {"log": ["slow"]}

    payloads = await _play_until(engine, Workflow("slow", chain(slow)), seen, Report)
    kinds = [p.kind for p in payloads]
    assert kinds == ["report", "node.updated", "run.completed"]


async def test_model_tokens_are_yielded_while_their_node_still_runs(
    engine: LangGraphEngine,
) -> None:
    seen = asyncio.Event()
    model = GenericFakeChatModel(messages=iter([AIMessage("one two three")]))

    async def talk(state: Counter) -> dict[str, Any]:
        reply = await model.ainvoke("hi")
        await asyncio.wait_for(seen.wait(), PATIENCE)
        return {"log": [str(reply.content)]}

    payloads = await _play_until(engine, Workflow("talk", chain(talk)), seen, TextDelta)
    deltas = [p for p in payloads if isinstance(p, TextDelta)]
    assert "".join(d.text for d in deltas) == "one two three"
    assert [p.kind for p in payloads][-2:] == ["node.updated", "run.completed"]


async def test_a_node_update_is_yielded_while_another_node_of_its_step_still_runs(
    engine: LangGraphEngine,
) -> None:
    """Only the update of a step's *sole* task waits for the boundary that follows it at once
    (``LiveChannel.queue``); one task of several is recorded as it returns."""
    seen = asyncio.Event()

    async def quick(state: Counter) -> dict[str, Any]:
        return {"log": ["quick"]}

    async def slow(state: Counter) -> dict[str, Any]:
        await asyncio.sleep(0.01)  # let quick return first
        await asyncio.wait_for(seen.wait(), PATIENCE)  # TimeoutError if quick's update was held
        return {"log": ["slow"]}

    payloads: list[Payload] = []
    invocation = make_invocation(engine, Workflow("wide", fan_out(quick, slow)), START_STATE)
    async with asyncio.timeout(PATIENCE * 2):
        async for payload in engine.play(invocation):
            payloads.append(payload)
            if isinstance(payload, NodeUpdated) and payload.node == "quick":
                seen.set()
    nodes = [p.node for p in payloads if isinstance(p, NodeUpdated)]
    assert nodes == ["plan", "quick", "slow", "join"]


async def test_writes_from_a_sync_node_keep_their_order_ahead_of_its_update(
    engine: LangGraphEngine,
) -> None:
    threads: set[int] = set()

    def busy(state: Counter) -> dict[str, Any]:  # LangGraph runs it in a worker thread
        threads.add(threading.get_ident())
        write = get_stream_writer()
        for i in range(20):
            write(f"line {i}")
        return {"log": ["busy"]}

    invocation = make_invocation(engine, Workflow("busy", chain(busy)), START_STATE)
    result = await drive(engine, invocation)
    check_completed(result)
    assert threading.get_ident() not in threads  # the writes did cross threads
    written = [e.payload.message for e in result.events if isinstance(e.payload, Report)]
    assert written == [f"line {i}" for i in range(20)]
    assert result.kinds[-2:] == ["node.updated", "run.completed"]


async def test_writes_and_tokens_of_a_subgraphs_nodes_are_not_recorded(
    engine: LangGraphEngine,
) -> None:
    """As LangGraph's own ``custom``/``messages`` modes without ``subgraphs`` never showed
    them: the subgraph's node update is recorded as its parent node's, nothing inside it."""
    model = GenericFakeChatModel(messages=iter([AIMessage("inner tokens")]))

    async def inner(state: Counter) -> dict[str, Any]:
        report("from inside")
        await model.ainvoke("hi")
        return {"log": ["inner"]}

    sub: StateGraph[Counter, Any, Counter, Counter] = StateGraph(Counter)
    sub.add_node("inner", inner)
    sub.add_edge(START, "inner")
    sub.add_edge("inner", END)

    async def outer(state: Counter) -> dict[str, Any]:
        report("from outside")
        return {"log": ["outer"]}

    graph: StateGraph[Counter, Any, Counter, Counter] = StateGraph(Counter)
    graph.add_node("outer", outer)
    graph.add_node("sub", sub.compile())
    graph.add_edge(START, "outer")
    graph.add_edge("outer", "sub")
    graph.add_edge("sub", END)

    result = await drive(engine, make_invocation(engine, Workflow("nested", graph), START_STATE))
    check_completed(result)
    reports = [e.payload.message for e in result.events if isinstance(e.payload, Report)]
    assert reports == ["from outside"]
    assert "text.delta" not in result.kinds
    nodes = [e.payload.node for e in result.events if isinstance(e.payload, NodeUpdated)]
    assert nodes == ["outer", "sub"]


async def test_an_abandoned_play_stops_its_graph_mid_node(engine: LangGraphEngine) -> None:
    started, stopped = asyncio.Event(), asyncio.Event()

    async def forever(state: Counter) -> dict[str, Any]:
        report("waiting")
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return {"log": ["never"]}

    invocation = make_invocation(engine, Workflow("forever", chain(forever)), START_STATE)
    play = engine.play(invocation)
    first = await asyncio.wait_for(anext(play), PATIENCE)  # type: ignore[arg-type]
    assert isinstance(first, Report)
    await asyncio.wait_for(started.wait(), PATIENCE)
    await play.aclose()  # type: ignore[attr-defined]
    assert stopped.is_set()  # the node was cancelled before aclose returned


async def test_a_finished_run_wrote_one_checkpoint_not_one_per_step(
    engine: LangGraphEngine,
) -> None:
    workflow = Workflow("pipeline", three_nodes())
    invocation = make_invocation(engine, workflow, START_STATE)
    result = await drive(engine, invocation)
    check_completed(result)
    graph = await engine._graph(workflow, invocation.invocable)
    assert graph.checkpointer is not None
    config = {"configurable": {"thread_id": invocation.run_id}}
    written = [c async for c in graph.checkpointer.alist(config)]  # type: ignore[arg-type]
    assert [c.metadata.get("step") for c in written] == [3]
    snapshot = await graph.aget_state(config)  # type: ignore[arg-type]
    assert snapshot.next == () and snapshot.values["log"] == ["plan", "work", "review"]


async def test_every_way_a_node_reaches_its_writer_leads_to_the_run(
    engine: LangGraphEngine,
) -> None:
    async def by_runtime(state: Counter, runtime: Runtime[None]) -> dict[str, Any]:
        runtime.stream_writer("runtime.stream_writer")
        return {"log": ["by_runtime"]}

    async def by_parameter(state: Counter, writer: StreamWriter) -> dict[str, Any]:
        writer("writer parameter")
        return {"log": ["by_parameter"]}

    async def by_lookup(state: Counter) -> dict[str, Any]:
        get_stream_writer()("get_stream_writer()")
        return {"log": ["by_lookup"]}

    workflow = Workflow("writers", chain(by_runtime, by_parameter, by_lookup))
    result = await drive(engine, make_invocation(engine, workflow, START_STATE))
    check_completed(result)
    written = [e.payload.message for e in result.events if isinstance(e.payload, Report)]
    assert written == ["runtime.stream_writer", "writer parameter", "get_stream_writer()"]


async def test_a_safe_point_waits_until_the_play_asks_past_the_steps_payloads() -> None:
    """The channel the play drains: ``flushed`` (the node boundary) returns only once the play
    has taken every payload put before it *and* asked for the next item, i.e. once the run
    recorded them; a failing pump still ends the channel, and awaiting its task re-raises."""
    steps: list[str] = []

    async def pump(channel: live.LiveChannel) -> None:
        channel.put("update")
        await channel.flushed()
        steps.append("boundary")
        channel.put("next update")
        raise RuntimeError("node failed")

    channel, task = live.pump_in_task(pump)
    assert channel.take() is live.EMPTY
    await channel.arrival()
    assert channel.take() == "update"
    for _ in range(5):  # the pump gets every chance to run: it must still wait at the boundary
        await asyncio.sleep(0)
    assert steps == []
    taken = channel.take()  # asking for the next item releases the boundary
    if taken is live.EMPTY:
        await channel.arrival()
        taken = channel.take()
    assert steps == ["boundary"] and taken == "next update"
    while (item := channel.take()) is live.EMPTY:
        await channel.arrival()
    assert item is live.END
    with pytest.raises(RuntimeError, match="node failed"):
        await task


async def test_a_queued_payload_waits_for_the_next_wake_up_and_keeps_its_place() -> None:
    released = asyncio.Event()

    async def pump(channel: live.LiveChannel) -> None:
        channel.queue("sole node's update")
        await released.wait()
        channel.put("write")

    channel, task = live.pump_in_task(pump)
    arrival = channel.arrival()
    for _ in range(5):
        await asyncio.sleep(0)
    assert not arrival.done()  # queued: the play is not woken for it alone
    released.set()
    await arrival  # the put wakes it, and the queued payload comes first
    assert [channel.take(), channel.take()] == ["sole node's update", "write"]
    while (item := channel.take()) is live.EMPTY:
        await channel.arrival()
    assert item is live.END
    await task
