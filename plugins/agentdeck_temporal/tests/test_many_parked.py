"""Many runs parked on questions outlive every worker, hold nothing in them, and all finish.

Issue 24 asks for 1,000 parked runs. The count here is ``PARKED_RUNS`` (override it with
``AGENTDECK_TEST_TEMPORAL_PARKED``); its default keeps the test to well under a minute on a
small shared machine. A parked run is a Temporal workflow waiting for a signal and a log in
the store: no play of it is in flight on any worker, and the worker's runtime holds no table
entry for it (no play, no in-memory park, no kept suspension, no context, no budget).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest

from agentdeck import Deck, Run, RunStatus, WorkflowCtx, workflow
from agentdeck.settings import Settings

PARKED_RUNS = int(os.environ.get("AGENTDECK_TEST_TEMPORAL_PARKED", "200"))
"""How many runs park at once (issue 24's acceptance run uses 1,000)."""

IN_FLIGHT = 32
"""Client calls (starts, answers) in flight at once: enough to keep both workers busy."""

SAFETY = 300.0
"""A bound on waits that only time out when something is broken (never a timing assertion)."""

T = TypeVar("T")


@workflow
async def sign_off(ctx: WorkflowCtx, order: int) -> dict[str, int | str]:
    answer = await ctx.ask({"order": order}, options=["yes", "no"])
    return {"order": order, "answer": answer}


async def bounded(calls: list[Callable[[], Awaitable[T]]]) -> list[T]:
    """Await every call, at most ``IN_FLIGHT`` at a time, in order."""
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one(call: Callable[[], Awaitable[T]]) -> T:
        async with gate:
            return await call()

    return await asyncio.gather(*(one(call) for call in calls))


async def until_counted(deck: Deck, status: RunStatus, count: int) -> None:
    async with asyncio.timeout(SAFETY):
        while len(await deck.runs.list(status=status)) < count:
            await asyncio.sleep(0.5)


def held_entries(deck: Deck) -> dict[str, int]:
    """How many runs each of the deck's in-memory runtime tables holds."""
    held = deck.service.runtime.held
    return {
        "playing": len(held.playing),
        "parked": len(held.parked),
        "suspended": len(held.suspended),
        "contexts": len(held.contexts),
    }


async def stop(workers: list[asyncio.Task[None]]) -> None:
    for worker in workers:
        worker.cancel()
    for worker in workers:
        with pytest.raises(asyncio.CancelledError):
            await worker


async def test_parked_runs_survive_a_restart_of_every_worker_and_all_complete(
    tmp_path: Path, temporal_target: str
) -> None:
    queue = f"agentdeck-parked-{uuid.uuid4().hex[:8]}"
    env = {
        "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}",
        "AGENTDECK_EXECUTION": f"temporal://{temporal_target}/default?task_queue={queue}",
    }

    def make() -> Deck:
        return Deck(workflows=[sign_off], observers=(), settings=Settings(env=env))

    first_decks = [make(), make()]
    first = [asyncio.create_task(deck.work(concurrency=16)) for deck in first_decks]
    try:
        async with make() as client:
            runs: list[Run] = await bounded(
                [
                    lambda order=order: client.runs.start("sign_off", {"order": order})
                    for order in range(PARKED_RUNS)
                ]
            )
            await until_counted(client, RunStatus.WAITING_ANSWER, PARKED_RUNS)
        # Every run is parked: no worker holds anything of any of them.
        for deck in first_decks:
            assert held_entries(deck) == dict.fromkeys(held_entries(deck), 0)
    finally:
        await stop(first)

    second_decks = [make(), make()]
    second = [asyncio.create_task(deck.work(concurrency=16)) for deck in second_decks]
    try:
        async with make() as fresh:  # a client that started none of them
            parked = await fresh.runs.list(status=RunStatus.WAITING_ANSWER)
            assert sorted(run.id for run in parked) == sorted(run.id for run in runs)
            await bounded(
                [
                    lambda run=run, i=i: _answer(fresh, run.id, "yes" if i % 2 == 0 else "no")
                    for i, run in enumerate(runs)
                ]
            )
            await until_counted(fresh, RunStatus.COMPLETED, PARKED_RUNS)
            results = await bounded([lambda run=run: _result(fresh, run.id) for run in runs])
            assert held_entries(fresh)["playing"] == 0  # the client only recorded answers
    finally:
        await stop(second)
    assert results == [
        {"order": i, "answer": "yes" if i % 2 == 0 else "no"} for i in range(PARKED_RUNS)
    ]


async def _answer(deck: Deck, run_id: str, value: str) -> None:
    await (await deck.runs.get(run_id)).answer(value)


async def _result(deck: Deck, run_id: str) -> object:
    return await (await deck.runs.get(run_id)).result()
