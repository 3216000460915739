"""Runs admitted to Temporal by a client deck and played by a worker deck, on a real dev server.

A client and a worker share one SQLite state file (the store every process reads) and the
Temporal task queue; nothing else passes between them. The worker is started in this process
as a task (``deck.work()``, what ``agentdeck worker`` runs), with a deck of its own.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from agentdeck import Deck, RunStatus, WorkflowCtx, workflow
from agentdeck.errors import ConfigError
from agentdeck.settings import Settings
from agentdeck_temporal.workflow import RunWorkflow, workflow_id

_WAIT = 30.0


@workflow
async def shout(ctx: WorkflowCtx, text: str) -> str:
    loud = await ctx.step("loud", str.upper, text)
    return f"{loud}!"


def _settings(state: Path, temporal_target: str, task_queue: str) -> Settings:
    return Settings(
        env={
            "AGENTDECK_STATE": f"sqlite:///{state}",
            "AGENTDECK_EXECUTION": f"temporal://{temporal_target}/default?task_queue={task_queue}"
            "&heartbeat_seconds=5",
        }
    )


@pytest.fixture
def make_deck(tmp_path: Path, temporal_target: str) -> Callable[[], Deck]:
    task_queue = f"agentdeck-test-{uuid.uuid4().hex[:8]}"  # a queue of this test's own
    settings = _settings(tmp_path / "state.db", temporal_target, task_queue)

    def make() -> Deck:
        return Deck(workflows=[shout], settings=settings)

    return make


@pytest.fixture
async def client(make_deck: Callable[[], Deck]) -> AsyncIterator[Deck]:
    async with make_deck() as deck:
        yield deck


async def _start_worker(deck: Deck, concurrency: int = 2) -> asyncio.Task[None]:
    return asyncio.create_task(deck.work(concurrency=concurrency), name="worker")


async def _stop(worker: asyncio.Task[None]) -> None:
    worker.cancel()
    with pytest.raises(asyncio.CancelledError):
        await worker


async def test_a_run_admitted_with_no_worker_stays_queued(client: Deck) -> None:
    run = await client.runs.start("shout", {"text": "wait"})

    await asyncio.sleep(1.0)  # time enough for a worker to take it, were there one

    assert await run.status() is RunStatus.QUEUED
    kinds = [event.kind async for event in run.events()]
    assert kinds == ["run.started", "run.queued"]


async def test_starting_a_worker_completes_a_queued_run_and_await_returns_its_output(
    client: Deck, make_deck: Callable[[], Deck]
) -> None:
    run = await client.runs.start("shout", {"text": "hello"})
    assert await run.status() is RunStatus.QUEUED

    worker = await _start_worker(make_deck())
    try:
        output = await asyncio.wait_for(run.result(), _WAIT)
    finally:
        await _stop(worker)

    assert output == "HELLO!"
    kinds = [event.kind async for event in run.events()]
    assert kinds[:3] == ["run.started", "run.queued", "run.claimed"]
    assert kinds[-1] == "run.completed"


async def test_the_workflow_history_carries_ids_and_statuses_never_run_content(
    client: Deck, make_deck: Callable[[], Deck], temporal_target: str
) -> None:
    secret = f"content-{uuid.uuid4().hex}"
    temporal = await Client.connect(temporal_target)
    worker = await _start_worker(make_deck())
    try:
        run = await client.runs.start("shout", {"text": secret})
        assert await asyncio.wait_for(run.result(), _WAIT) == f"{secret.upper()}!"
        handle = temporal.get_workflow_handle(workflow_id(run.id))
        # The workflow's own ending needs a worker too: read it before stopping this one.
        assert await asyncio.wait_for(handle.result(), _WAIT) == "completed"
    finally:
        await _stop(worker)

    history = (await handle.fetch_history()).to_json()
    assert run.id in history
    assert secret not in history and secret.upper() not in history


async def test_several_runs_are_spread_over_two_workers_and_all_complete(
    client: Deck, make_deck: Callable[[], Deck]
) -> None:
    workers = [await _start_worker(make_deck()), await _start_worker(make_deck())]
    try:
        runs = [await client.runs.start("shout", {"text": f"r{i}"}) for i in range(6)]
        outputs = await asyncio.wait_for(asyncio.gather(*(run.result() for run in runs)), _WAIT)
    finally:
        for worker in workers:
            await _stop(worker)

    assert outputs == [f"R{i}!" for i in range(6)]
    claimers: set[Any] = set()
    for run in runs:
        claims = [e.payload.worker async for e in run.events() if e.kind == "run.claimed"]
        assert len(claims) == 1
        claimers.update(claims)
    assert claimers  # every run was claimed exactly once, by one of the two workers


async def test_a_workflow_for_the_run_is_started_once_per_run(client: Deck) -> None:
    run = await client.runs.start("shout", {"text": "one"})
    execution = client.service.runtime.execution
    temporal = execution.client  # type: ignore[attr-defined]
    description = await temporal.get_workflow_handle(workflow_id(run.id)).describe()

    assert description.workflow_type == "agentdeck.run"
    assert RunWorkflow.__name__ == "RunWorkflow"


def test_a_temporal_execution_on_a_memory_store_refuses_to_build(temporal_target: str) -> None:
    settings = Settings(
        env={
            "AGENTDECK_STATE": "memory://",  # named: the default state is a SQLite file now
            "AGENTDECK_EXECUTION": f"temporal://{temporal_target}/default?task_queue=q",
        }
    )
    with pytest.raises(ConfigError) as refused:
        Deck(workflows=[shout], settings=settings).build()
    assert "memory://" in str(refused.value) and "not durable" in str(refused.value)


async def test_a_deck_whose_runs_play_in_process_has_no_work() -> None:
    deck = Deck(workflows=[shout], settings=Settings(env={}))
    with pytest.raises(ConfigError) as refused:
        await deck.work(concurrency=1)
    assert "AGENTDECK_EXECUTION" in str(refused.value)
