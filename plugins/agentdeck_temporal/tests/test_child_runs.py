"""Child runs on Temporal workers: a parent parks while its children play, wherever they play.

A ``@workflow`` parent invokes a child workflow (``ctx.invoke``), which becomes a run of its own,
admitted to the same task queue. The parent does not hold its worker's slot while it waits: it
parks (``run.paused(waiting_on="child_runs")``) and the child's end, on whichever worker played
it, resumes it through Temporal. One worker taking one run at a time used to wait for good (the
parent held the only slot its child needed). Steps are journalled: neither body repeats one.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from agentdeck import Deck, Run, RunStatus, WorkflowCtx, workflow
from agentdeck.errors import RunSuspendedError
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunPaused
from agentdeck.settings import Settings
from agentdeck.vocabulary import WaitKind

SAFETY = 60.0
"""A bound on waits that only time out when something is broken (never a timing assertion)."""

STEPS: list[str] = []
"""Every step body that ran, in every worker deck of this process."""


def _record(label: str) -> str:
    STEPS.append(label)
    return label


@workflow
async def child(ctx: WorkflowCtx, order_id: str) -> str:
    await ctx.step("pack", _record, f"pack {order_id}")
    return f"packed {order_id}"


@workflow
async def asking_child(ctx: WorkflowCtx, order_id: str) -> str:
    decision = await ctx.ask({"ship": order_id}, options=["yes", "no"])
    return f"{order_id}: {decision}"


@workflow
async def asking_parent(ctx: WorkflowCtx, order_id: str) -> str:
    return str(await ctx.invoke("asking_child", {"order_id": order_id}))


@workflow
async def parent(ctx: WorkflowCtx, orders: list[str]) -> list[str]:
    await ctx.step("open", _record, "open")
    packed = [await ctx.invoke("child", {"order_id": order}) for order in orders]
    await ctx.step("close", _record, "close")
    return packed


WORKFLOWS = [parent, child, asking_parent, asking_child]


def settings_for(tmp_path: Path, temporal_target: str) -> Settings:
    queue = f"agentdeck-children-{uuid.uuid4().hex[:8]}"
    return Settings(
        env={
            "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}",
            "AGENTDECK_EXECUTION": f"temporal://{temporal_target}/default?task_queue={queue}",
        }
    )


@pytest.mark.parametrize("workers", [1, 2])
async def test_a_parent_parks_while_its_children_play_and_each_childs_end_resumes_it(
    tmp_path: Path, temporal_target: str, workers: int
) -> None:
    STEPS.clear()
    settings = settings_for(tmp_path, temporal_target)

    def make() -> Deck:
        return Deck(workflows=WORKFLOWS, settings=settings, observers=())

    playing = [asyncio.create_task(make().work(concurrency=1)) for _ in range(workers)]
    try:
        async with make() as client:
            run = await client.runs.start("parent", {"orders": ["A", "B"]})
            assert await asyncio.wait_for(run.result(), SAFETY) == ["packed A", "packed B"]
            events = [event async for event in run.events()]
            children = [r for r in await client.runs.list() if r.id != run.id]
            statuses = {await c.status() for c in children}
            assert client.service.runtime.held.playing == {}  # the client played nothing
    finally:
        for worker in playing:
            worker.cancel()
        await asyncio.gather(*playing, return_exceptions=True)

    assert STEPS == ["open", "pack A", "pack B", "close"]  # no step of either body repeated
    assert len(children) == 2 and statuses == {RunStatus.COMPLETED}
    waits = [e.payload for e in events if isinstance(e.payload, RunPaused)]
    assert [w.waiting_on for w in waits] == [WaitKind.CHILD_RUNS] * 2  # one park per child
    assert [w.waiting_for for w in waits] == [[c.id] for c in sorted_by_start(children, events)]
    assert [e.kind for e in events].count("run.resumed") == 2
    assert events[-1].kind == "run.completed"


def sorted_by_start(children: list[Run], parent_events: list[Event]) -> list[Run]:
    """``children`` in the order the parent parked on them."""
    order = [e.payload.waiting_for[0] for e in parent_events if isinstance(e.payload, RunPaused)]
    return sorted(children, key=lambda c: order.index(c.id))


async def test_awaiting_a_parent_stops_when_its_child_asks_and_the_answer_finishes_both(
    tmp_path: Path, temporal_target: str
) -> None:
    settings = settings_for(tmp_path, temporal_target)
    worker = asyncio.create_task(
        Deck(workflows=WORKFLOWS, settings=settings, observers=()).work(concurrency=1)
    )
    try:
        async with Deck(workflows=WORKFLOWS, settings=settings, observers=()) as client:
            run = await client.runs.start("asking_parent", {"order_id": "Q-9"})
            with pytest.raises(RunSuspendedError):  # the child waits on someone: so does this
                await asyncio.wait_for(run.result(), SAFETY)
            [asking] = [r for r in await client.runs.list() if r.id != run.id]
            assert await asking.status() is RunStatus.WAITING_ANSWER
            assert await run.status() is RunStatus.PAUSED

            await asking.answer("yes")
            assert await asyncio.wait_for(run.result(), SAFETY) == "Q-9: yes"
    finally:
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)
