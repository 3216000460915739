"""What the hand-over tests share: stopping a worker, and a worker finishing a run handed to it.

Importable by name: ``conftest.py`` puts this directory on ``sys.path`` (the suite runs in
importlib mode, where a test directory is not on it).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentdeck import Deck, Run, RunStatus

__all__ = ["finished_by", "stop_worker"]


async def stop_worker(worker: asyncio.Task[None]) -> None:
    """Cancel a ``deck.work()`` task and wait until it has stopped: it closes its deck, which
    pauses the runs it plays at their next safe point, and ends cancelled (anything else it
    raised fails the test)."""
    worker.cancel()
    with pytest.raises(asyncio.CancelledError):
        await worker


async def finished_by(deck: Deck, run: Run, *, within: float, every: float) -> Any:
    """Work ``deck`` (one play at a time) until ``run`` has completed, then stop it; the run's
    result.

    Polls the run's status every ``every`` seconds for at most ``within``: ``await run`` would
    answer at once for a run its last worker paused, the pause being an ending of the log as it
    is.
    """
    worker = asyncio.create_task(deck.work(concurrency=1))
    try:
        async with asyncio.timeout(within):
            while (await run.status()) is not RunStatus.COMPLETED:
                await asyncio.sleep(every)
        return await run.result()
    finally:
        await stop_worker(worker)
