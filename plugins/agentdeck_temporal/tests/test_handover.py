"""A worker stopped mid-run hands the run on: the next worker goes on from its log.

Stopping a worker (Ctrl-C, SIGTERM, ``deck.work()`` cancelled) closes its deck, which pauses the
runs it plays at their next safe point; Temporal retries the play activity on another worker,
which resumes the run there. The workflow's steps are journaled, so none runs twice.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from worker_support import finished_by, stop_worker

from agentdeck import Deck, RunStatus, WorkflowCtx, workflow
from agentdeck.runtime.play import CLOSING_PAUSE_REASON
from agentdeck.settings import Settings

STEPS: list[str] = []
"""Every step body that ran, in any worker of this process."""


def record_step(label: str) -> str:
    STEPS.append(label)
    return label


@workflow
async def long_job(ctx: WorkflowCtx, count: int) -> list[str]:
    done = []
    for i in range(count):
        done.append(await ctx.step(f"s{i}", record_step, f"s{i}"))
        await ctx.safepoint()
        await asyncio.sleep(0.1)
    return done


@pytest.fixture
def make_deck(tmp_path: Path, temporal_target: str) -> Callable[[], Deck]:
    queue = f"agentdeck-handover-{uuid.uuid4().hex[:8]}"
    env = {
        "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}",
        "AGENTDECK_EXECUTION": f"temporal://{temporal_target}/default?task_queue={queue}"
        "&heartbeat_seconds=3",
    }
    return lambda: Deck(workflows=[long_job], settings=Settings(env=env))


async def _wait_for(condition: Callable[[], bool], within: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("the condition did not hold in time")
        await asyncio.sleep(0.05)


async def test_a_run_a_stopped_worker_was_playing_finishes_on_another_without_repeating_steps(
    make_deck: Callable[[], Deck],
) -> None:
    STEPS.clear()
    async with make_deck() as client:
        first = asyncio.create_task(make_deck().work(concurrency=1))
        run = await client.runs.start("long_job", {"count": 12})
        await _wait_for(lambda: len(STEPS) >= 3)

        await stop_worker(first)  # the worker stops: its deck pauses the run at its next safe point
        assert await run.status() is RunStatus.PAUSED

        result = await finished_by(make_deck(), run, within=60, every=0.1)
        events = [event async for event in run.events()]

    expected = [f"s{i}" for i in range(12)]
    assert result == expected
    assert expected == STEPS  # every step ran once, across both workers
    pauses = [e.payload for e in events if e.kind == "run.paused"]
    assert [p.reason for p in pauses] == [CLOSING_PAUSE_REASON]
    assert [e.kind for e in events].count("run.claimed") == 1
    assert events[-1].kind == "run.completed"
    assert [e.seq for e in events] == list(range(len(events)))  # the log is gapless
