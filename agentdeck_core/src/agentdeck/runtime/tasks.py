"""Stopping a background task without swallowing the stopper's own cancellation.

``task.cancel()`` then ``with suppress(CancelledError): await task`` is the usual idiom, and it
has a hole: if the task doing the stopping is itself cancelled while it waits (a
``wait_for`` around a deck's close, a CLI's Ctrl-C), that cancellation is suppressed too, and the
stopper carries on as if nothing had been asked of it. :func:`stop_task` swallows only the
stopped task's cancellation.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["stop_task"]


async def stop_task(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and wait until it has ended; re-raise if the caller was cancelled."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        stopper = asyncio.current_task()
        if stopper is not None and stopper.cancelling():
            raise
