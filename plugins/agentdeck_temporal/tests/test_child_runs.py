"""Child runs on Temporal workers: a parent waits on a child another worker may play.

A ``@workflow`` parent invokes a child workflow (``ctx.invoke``), which becomes a run of its own,
admitted to the same task queue. With two workers each taking one run at a time, the parent's
worker is busy while it waits, so every child is played by the other worker, and the child's end
(read from the store) is what lets the parent go on. Steps are journalled: neither body repeats
one.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from agentdeck import Deck, RunStatus, WorkflowCtx, workflow
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunClaimed
from agentdeck.settings import Settings

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
async def parent(ctx: WorkflowCtx, orders: list[str]) -> list[str]:
    await ctx.step("open", _record, "open")
    packed = [await ctx.invoke("child", {"order_id": order}) for order in orders]
    await ctx.step("close", _record, "close")
    return packed


def claimer(events: list[Event]) -> str:
    """The worker whose ``run.claimed`` is in ``events``."""
    [claimed] = [e.payload for e in events if isinstance(e.payload, RunClaimed)]
    return claimed.worker


async def test_a_parent_waits_on_children_played_by_any_worker_and_is_woken_by_each(
    tmp_path: Path, temporal_target: str
) -> None:
    STEPS.clear()
    queue = f"agentdeck-children-{uuid.uuid4().hex[:8]}"
    settings = Settings(
        env={
            "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}",
            "AGENTDECK_EXECUTION": f"temporal://{temporal_target}/default?task_queue={queue}",
        }
    )

    def make() -> Deck:
        return Deck(workflows=[parent, child], settings=settings, observers=())

    workers = [asyncio.create_task(make().work(concurrency=1)) for _ in range(2)]
    try:
        async with make() as client:
            run = await client.runs.start("parent", {"orders": ["A", "B"]})
            assert await asyncio.wait_for(run.result(), SAFETY) == ["packed A", "packed B"]
            events = [event async for event in run.events()]
            kinds = [event.kind for event in events]
            parent_worker = claimer(events)
            children = [r for r in await client.runs.list() if r.id != run.id]
            assert client.service.runtime.held.playing == {}  # the client played nothing
            statuses = {await c.status() for c in children}
            child_workers = {claimer([e async for e in c.events()]) for c in children}
    finally:
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)

    assert STEPS == ["open", "pack A", "pack B", "close"]  # no step of either body repeated
    assert len(children) == 2 and statuses == {RunStatus.COMPLETED}
    assert kinds[-1] == "run.completed", kinds
    # Each worker plays one run at a time and the parent's was busy waiting: every child was
    # played by the other worker, and its end reached the parent across processes' decks.
    assert parent_worker and child_workers and parent_worker not in child_workers
