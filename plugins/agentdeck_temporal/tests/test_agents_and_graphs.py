"""Agents (the OpenAI engine) and LangGraph workflows on Temporal workers, not only ``@workflow``.

A client deck admits each run and plays nothing; two worker decks share the task queue and the
SQLite state file (the LangGraph checkpoints sit in its sibling file). The agent talks to the
loopback model server; its tool needs an approval, so the run parks, the client answers, and a
worker -- whichever Temporal picks -- continues it from the log and the agent's saved state. The
graph parks on ``interrupt()`` and is answered the same way, resuming from its checkpoint.
"""

from __future__ import annotations

import asyncio
import operator
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from agentdeck import Agent, Budget, Deck, InterruptResult, Run, RunStatus, tool
from agentdeck.errors import RunFailedError, RunSuspendedError
from agentdeck.settings import Settings
from agentdeck_langgraph import Workflow
from agentdeck_openai.testing import LoopbackModelServer, reply, tool_call

SAFETY = 60.0
"""A bound on waits that only time out when something is broken (never a timing assertion)."""

REFUNDS: list[str] = []
"""Every order the agent's tool refunded, in every worker deck of this process."""


@tool
def refund(order_id: str) -> str:
    """Refund an order."""
    REFUNDS.append(order_id)
    return f"refunded {order_id}"


clerk = Agent(
    name="clerk", instructions="Refund when asked.", tools=[refund], interrupt_on=["refund"]
)


class Order(TypedDict, total=False):
    order_id: str
    log: Annotated[list[str], operator.add]


async def price(state: Order) -> dict[str, Any]:
    return {"log": [f"priced {state['order_id']}"]}


async def approve(state: Order) -> dict[str, Any]:
    decision = interrupt({"approve": state["order_id"]})
    return {"log": [f"approved: {decision}"]}


def order_graph() -> StateGraph[Order, Any, Order, Order]:
    graph: StateGraph[Order, Any, Order, Order] = StateGraph(Order)
    graph.add_node("price", price)
    graph.add_node("approve", approve)
    graph.add_edge(START, "price")
    graph.add_edge("price", "approve")
    graph.add_edge("approve", END)
    return graph


@asynccontextmanager
async def client_and_two_workers(env: dict[str, str]) -> AsyncIterator[Deck]:
    """An open client deck while two worker decks serve the same task queue."""

    def make() -> Deck:
        return Deck(
            agents=[clerk],
            workflows=[Workflow("approval", order_graph())],
            observers=(),
            settings=Settings(env=env),
        )

    workers = [asyncio.create_task(make().work(concurrency=2)) for _ in range(2)]
    try:
        async with make() as client:
            yield client
            assert client.service.runtime.held.playing == {}  # the client played nothing
    finally:
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)


async def parked_on(run: Run) -> InterruptResult:
    """The question ``run`` parked on, once a worker played it that far."""
    with pytest.raises(RunSuspendedError) as suspended:
        await run.result()
    pending = suspended.value.pending
    assert isinstance(pending, InterruptResult), pending
    return pending


def settings_env(
    tmp_path: Path, temporal_target: str, model: LoopbackModelServer
) -> dict[str, str]:
    queue = f"agentdeck-engines-{uuid.uuid4().hex[:8]}"
    return {
        **model.env(),
        "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}",
        "AGENTDECK_EXECUTION": f"temporal://{temporal_target}/default?task_queue={queue}",
    }


async def test_an_agents_tool_approval_parks_on_a_worker_and_another_play_finishes_it(
    tmp_path: Path, temporal_target: str, model_server: LoopbackModelServer
) -> None:
    REFUNDS.clear()
    model_server.script.add(tool_call("refund", {"order_id": "A-7"}, call_id="call_1"))
    model_server.script.add(reply("Refunded A-7."))
    async with client_and_two_workers(
        settings_env(tmp_path, temporal_target, model_server)
    ) as deck:
        run = await deck.runs.start("clerk", "refund order A-7")
        parked = await asyncio.wait_for(parked_on(run), SAFETY)
        assert parked.payload["tool"] == "refund"
        assert REFUNDS == []  # nothing ran before the approval
        assert await run.status() is RunStatus.WAITING_ANSWER

        await run.answer({"approved": True})
        outcome = await asyncio.wait_for(run.result(), SAFETY)
        kinds = [event.kind async for event in run.events()]
    assert getattr(outcome, "output", outcome) == "Refunded A-7."
    assert REFUNDS == ["A-7"]  # the approved tool ran once, on a worker
    assert kinds.count("run.claimed") == 1 and kinds.count("run.resumed") >= 1
    assert "approval.decided" in kinds and kinds[-1] == "run.completed"


async def test_a_langgraph_interrupt_parks_on_a_worker_and_the_answer_resumes_its_checkpoint(
    tmp_path: Path, temporal_target: str, model_server: LoopbackModelServer
) -> None:
    async with client_and_two_workers(
        settings_env(tmp_path, temporal_target, model_server)
    ) as deck:
        run = await deck.runs.start("approval", {"order_id": "G-3"})
        parked = await asyncio.wait_for(parked_on(run), SAFETY)
        assert parked.payload == {"approve": "G-3"}

        await run.answer("yes")
        final = await asyncio.wait_for(run.result(), SAFETY)
        nodes = [e.payload.node async for e in run.events() if e.kind == "node.updated"]
    assert final["log"] == ["priced G-3", "approved: yes"]
    assert nodes == ["price", "approve"]  # price ran once: the answer resumed the checkpoint


async def test_a_budget_given_to_the_client_is_enforced_by_the_worker(
    tmp_path: Path, temporal_target: str, model_server: LoopbackModelServer
) -> None:
    model_server.script.add(reply("one"))
    async with client_and_two_workers(
        settings_env(tmp_path, temporal_target, model_server)
    ) as deck:
        run = await deck.runs.start("clerk", "hello", budget=Budget(max_requests=0))
        with pytest.raises(RunFailedError) as failed:
            await asyncio.wait_for(run.result(), SAFETY)
    assert failed.value.error_code == "budget_exceeded"
    assert "model requests: 1 used, budget 0" in (failed.value.reason or "")
