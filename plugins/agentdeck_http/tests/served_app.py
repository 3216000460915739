"""A deck served by a child process in ``test_sigterm.py`` with ``deck.serve()`` — the blocking
call that owns the event loop — over a SQLite store: a workflow that works until a flag file
exists, reaching a safe point between rounds.

Run as ``python served_app.py <state url>``. uvicorn logs ``Uvicorn running on http://...:<port>``
to stderr once listening; ``exited`` is printed to stdout when ``deck.serve()`` returns.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from agentdeck import Deck, WorkflowCtx, workflow
from agentdeck.bindings import Native
from agentdeck.settings import Settings


@workflow
async def long_job(flag: str, ctx: WorkflowCtx[Any]) -> str:
    await ctx.step("begin", lambda: "begun")
    while not Path(flag).exists():
        await ctx.safepoint()
        await asyncio.sleep(0.02)  # pacing of the fixture's work, not a timing assertion
    return "finished"


def make_deck(state_url: str) -> Deck:
    return Deck(
        workflows=[long_job], observers=(), settings=Settings(env={"AGENTDECK_STATE": state_url})
    )


if __name__ == "__main__":
    make_deck(sys.argv[1]).serve(Native.http(), port=0, log_level="info")
    print("exited", flush=True)
