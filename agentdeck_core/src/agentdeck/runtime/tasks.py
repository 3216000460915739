"""Stopping a background task without swallowing the stopper's own cancellation.

``task.cancel()`` then ``with suppress(CancelledError): await task`` is the usual idiom, and it
has a hole: if the task doing the stopping is itself cancelled while it waits (a
``wait_for`` around a deck's close, a CLI's Ctrl-C), that cancellation is suppressed too, and the
stopper carries on as if nothing had been asked of it. :func:`stop_task` swallows only the
stopped task's cancellation.

"Cancelled while it waits" means a cancellation that *arrives during the wait*, counted by
``Task.cancelling()`` before and after. A stopper that is already unwinding from an earlier
cancellation -- ``Deck.work()`` cancelled, then closing its deck in a ``finally`` -- still has a
non-zero count, and must be let finish its close: re-raising there skipped the rest of the
teardown (engines, stores and leases left open; LangGraph's checkpointer closed by the loop's
shutdown instead, with errors).
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["stop_task"]


async def stop_task(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and wait until it has ended; re-raise if the caller was cancelled."""
    stopper = asyncio.current_task()
    asked_before = stopper.cancelling() if stopper is not None else 0
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        if stopper is not None and stopper.cancelling() > asked_before:
            raise
