"""A run parked on a question waits in Temporal; an answer from a client wakes it on a worker.

The client records the answer in the store and signals the run's workflow; a worker's play
activity continues the run from its log. No deck but the worker's plays it: the client only
records.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from temporalio.client import Client

from agentdeck import Deck, RunStatus, WorkflowCtx, workflow
from agentdeck.settings import Settings
from agentdeck_temporal.workflow import WAKE_SIGNAL, workflow_id


@workflow
async def approve(ctx: WorkflowCtx, order: str) -> dict[str, str]:
    answer = await ctx.ask({"order": order}, options=["yes", "no"])
    return {"order": order, "answer": answer}


@pytest.fixture
def make_deck(tmp_path: Path, temporal_target: str) -> Callable[[], Deck]:
    queue = f"agentdeck-answers-{uuid.uuid4().hex[:8]}"
    env = {
        "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}",
        "AGENTDECK_EXECUTION": f"temporal://{temporal_target}/default?task_queue={queue}",
    }
    return lambda: Deck(workflows=[approve], settings=Settings(env=env))


async def _until(run: object, status: RunStatus, within: float = 30.0) -> None:
    async with asyncio.timeout(within):
        while (await run.status()) is not status:  # type: ignore[attr-defined]
            await asyncio.sleep(0.05)


async def test_an_answer_from_a_client_is_recorded_and_a_worker_finishes_the_run(
    make_deck: Callable[[], Deck], temporal_target: str
) -> None:
    async with make_deck() as client:
        worker = asyncio.create_task(make_deck().work(concurrency=2))
        try:
            run = await client.runs.start("approve", {"order": "A-1"})
            await _until(run, RunStatus.WAITING_ANSWER)
            assert client.service.runtime.held.playing == {}  # the client plays nothing

            await run.answer("yes")
            assert client.service.runtime.held.playing == {}  # recorded, not played here
            await _until(run, RunStatus.COMPLETED)
            assert await run.result() == {"order": "A-1", "answer": "yes"}

            temporal = await Client.connect(temporal_target)
            handle = temporal.get_workflow_handle(workflow_id(run.id))
            assert await asyncio.wait_for(handle.result(), 30) == "completed"
        finally:
            worker.cancel()
            with pytest.raises(asyncio.CancelledError):
                await worker
    history = (await handle.fetch_history()).to_json()
    assert WAKE_SIGNAL in history
    assert "A-1" not in history  # the question and the answer stay in the store


async def test_a_parked_run_survives_a_restart_of_every_worker(
    make_deck: Callable[[], Deck],
) -> None:
    async with make_deck() as client:
        first = asyncio.create_task(make_deck().work(concurrency=1))
        run = await client.runs.start("approve", {"order": "B-2"})
        await _until(run, RunStatus.WAITING_ANSWER)
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first

        second = asyncio.create_task(make_deck().work(concurrency=1))
        try:
            await run.answer("no")
            await _until(run, RunStatus.COMPLETED)
        finally:
            second.cancel()
            with pytest.raises(asyncio.CancelledError):
                await second
        assert await run.result() == {"order": "B-2", "answer": "no"}


async def test_cancelling_a_parked_run_ends_it_and_its_workflow(
    make_deck: Callable[[], Deck], temporal_target: str
) -> None:
    async with make_deck() as client:
        worker = asyncio.create_task(make_deck().work(concurrency=1))
        try:
            run = await client.runs.start("approve", {"order": "C-3"})
            await _until(run, RunStatus.WAITING_ANSWER)
            await run.cancel("not needed")
            assert await run.status() is RunStatus.CANCELLED

            temporal = await Client.connect(temporal_target)
            handle = temporal.get_workflow_handle(workflow_id(run.id))
            assert await asyncio.wait_for(handle.result(), 30) == "cancelled"
            await run.cancel("again")  # its workflow is gone: still quiet
        finally:
            worker.cancel()
            with pytest.raises(asyncio.CancelledError):
                await worker


@workflow
async def nap(ctx: WorkflowCtx, seconds: float) -> str:
    await ctx.sleep_until(datetime.now(UTC) + timedelta(seconds=seconds))
    return "rested"


async def test_sleep_until_wakes_on_a_temporal_timer_with_no_sweep(
    tmp_path: Path, temporal_target: str
) -> None:
    queue = f"agentdeck-timer-{uuid.uuid4().hex[:8]}"
    env = {
        "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}",
        "AGENTDECK_EXECUTION": f"temporal://{temporal_target}/default?task_queue={queue}",
    }

    def make() -> Deck:
        return Deck(workflows=[nap], settings=Settings(env=env))

    async with make() as client:
        worker_deck = make()
        worker = asyncio.create_task(worker_deck.work(concurrency=1))
        try:
            run = await client.runs.start("nap", {"seconds": 2.0})
            await _until(run, RunStatus.PAUSED)
            # Nothing here sweeps for due timers: only Temporal's timer can wake it.
            assert client._sweeper is None and worker_deck._sweeper is None
            await _until(run, RunStatus.COMPLETED, within=30)
        finally:
            worker.cancel()
            with pytest.raises(asyncio.CancelledError):
                await worker
        assert await run.result() == "rested"
        reasons = [e.payload.reason async for e in run.events() if e.kind == "run.resumed"]
    assert reasons == ["timer"]
