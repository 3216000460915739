"""``stop_task``: the stopped task's cancellation is swallowed, the stopper's own is not -- and a
stopper already unwinding from an earlier cancellation still finishes what it is closing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentdeck import Deck, WorkflowCtx, workflow
from agentdeck.model.events import Event
from agentdeck.ports import Observer
from agentdeck.runtime.tasks import stop_task
from agentdeck.settings import Settings


async def forever() -> None:
    await asyncio.sleep(3600)


async def test_the_stopped_tasks_cancellation_is_swallowed() -> None:
    task = asyncio.create_task(forever())
    await asyncio.sleep(0)
    await stop_task(task)
    assert task.cancelled()


async def test_a_stopper_cancelled_while_it_waits_is_cancelled() -> None:
    release = asyncio.Event()

    async def slow_to_stop() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            await asyncio.shield(release.wait())  # takes its time to end

    task = asyncio.create_task(slow_to_stop())
    await asyncio.sleep(0)
    stopper = asyncio.create_task(stop_task(task))
    await asyncio.sleep(0.01)
    stopper.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopper
    release.set()
    await asyncio.gather(task, return_exceptions=True)


async def test_a_stopper_unwinding_from_an_earlier_cancellation_finishes_its_stops() -> None:
    stopped: list[bool] = []

    async def owner() -> None:
        background = [asyncio.create_task(forever()) for _ in range(3)]
        try:
            await forever()
        finally:  # cancelled above: the count is 1 here, and no new cancellation arrives
            for task in background:
                await stop_task(task)
                stopped.append(task.cancelled())

    task = asyncio.create_task(owner())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert stopped == [True, True, True]


class Closing(Observer):
    def __init__(self) -> None:
        self.closed = False

    async def emit(self, event: Event) -> None:
        pass

    async def close(self) -> None:
        self.closed = True


@workflow
async def nap(ctx: WorkflowCtx) -> str:
    return "rested"


async def test_a_deck_closed_by_a_cancelled_task_closes_everything(tmp_path: Path) -> None:
    observer = Closing()
    deck = Deck(
        workflows=[nap],
        observers=[observer],
        settings=Settings(env={"AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}"}),
    )
    opened = asyncio.Event()

    async def serve() -> None:
        async with deck:
            assert await deck.run("nap") == "rested"
            opened.set()
            await forever()

    task = asyncio.create_task(serve())
    await asyncio.wait_for(opened.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert observer.closed  # the teardown ran to its end, observers and stores included
