"""A ``deck.stream()`` consumer that goes away leaves its run cancelled, however it goes away.

A web server whose client hangs up cancels the task that streams to it; Starlette (and so
FastAPI) does it through an anyio cancel scope, which cancels every await that task makes after
it, the stream's own clean-up included. The cancel request must land all the same, on the
default SQLite state (where recording it is a real round trip) as in memory.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import pytest

from agentdeck import Deck, RunFailedError, RunStatus, WorkflowCtx, workflow
from agentdeck.settings import Settings

GATE: dict[str, asyncio.Event] = {}


@workflow
async def long_answer(ctx: WorkflowCtx[Any]) -> str:
    """Reports once, then holds until the test lets it reach a safe point."""
    await ctx.report("answering")
    await GATE["open"].wait()
    await ctx.safepoint()
    return "an answer nobody reads"


@pytest.mark.parametrize("state", [None, "memory://"], ids=["default-sqlite", "memory"])
async def test_a_consumer_cancelled_by_its_server_leaves_the_run_cancelled(
    state: str | None,
) -> None:
    GATE["open"] = asyncio.Event()
    env = {} if state is None else {"AGENTDECK_STATE": state}
    async with Deck(workflows=[long_answer], settings=Settings(env=env), observers=()) as deck:
        seen: list[str] = []

        async def respond(client: anyio.CancelScope) -> None:
            """What a streaming response does: walk the stream, close it however it ends."""
            events = deck.stream("long_answer")
            try:
                async for event in events:
                    seen.append(event.run_id)
                    if event.kind == "report":
                        client.cancel()  # the client hung up
            finally:
                await events.aclose()

        async with asyncio.timeout(30), anyio.create_task_group() as server:  # a hang guard
            server.start_soon(respond, server.cancel_scope)
        GATE["open"].set()

        run = await deck.runs.get(seen[0])
        with pytest.raises(RunFailedError) as ended:
            await run
        assert await run.status() is RunStatus.CANCELLED
        assert ended.value.reason == "the stream's consumer went away"
