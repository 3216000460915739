"""``agentdeck serve`` as a Temporal client in front of two workers: the HTTP wire is unchanged.

The served deck only admits and records; two worker decks play. Over real HTTP (uvicorn on
loopback): ``POST /runs`` starts a run, an SSE stream cut at a question resumes with
``Last-Event-ID`` and sees the answer given over HTTP carry the run to its end, and a cancel
over HTTP ends a parked run and its Temporal workflow.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from agentdeck import Deck, WorkflowCtx, workflow
from agentdeck.bindings import Native
from agentdeck.settings import Settings
from agentdeck_temporal.workflow import workflow_id

SAFETY = 60.0
"""A bound on waits that only time out when something is broken (never a timing assertion)."""


@workflow
async def approval(ctx: WorkflowCtx, order_id: str) -> dict[str, Any]:
    """Ask whether to approve an order."""
    decision = await ctx.ask({"approve": order_id}, options=["yes", "no"])
    return {"order": order_id, "decision": decision}


@contextlib.asynccontextmanager
async def served(deck: Deck) -> AsyncIterator[httpx.AsyncClient]:
    """Serve ``deck`` over the native HTTP binding on loopback until the block ends."""
    exposure = deck.expose(Native.http())
    task = asyncio.create_task(exposure.serve_async(port=0, log_level="warning"))
    (host, port), *_ = await asyncio.wait_for(exposure.wait_listening(), SAFETY)
    try:
        async with httpx.AsyncClient(base_url=f"http://{host}:{port}", timeout=SAFETY) as client:
            yield client
    finally:
        exposure.request_shutdown()
        await asyncio.wait_for(task, SAFETY)


async def frames(response: httpx.Response) -> AsyncIterator[tuple[int, str]]:
    """``(id, event)`` of each SSE frame of a body, comments skipped."""
    seq: int | None = None
    kind = ""
    async for line in response.aiter_lines():
        if line == "":
            if seq is not None:
                yield seq, kind
            seq, kind = None, ""
        elif line.startswith("id:"):
            seq = int(line[3:].strip())
        elif line.startswith("event:"):
            kind = line[6:].strip()


async def until_status(client: httpx.AsyncClient, run_id: str, status: str) -> dict[str, Any]:
    async with asyncio.timeout(SAFETY):
        while True:
            view: dict[str, Any] = (await client.get(f"/runs/{run_id}")).json()
            if view["status"] == status:
                return view
            await asyncio.sleep(0.05)


async def test_serve_with_two_workers_starts_streams_answers_and_cancels_over_http(
    tmp_path: Path, temporal_target: str
) -> None:
    queue = f"agentdeck-serve-{uuid.uuid4().hex[:8]}"
    env = {
        "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}",
        "AGENTDECK_EXECUTION": f"temporal://{temporal_target}/default?task_queue={queue}",
    }

    def make() -> Deck:
        return Deck(workflows=[approval], observers=(), settings=Settings(env=env))

    server_deck = make()
    workers = [asyncio.create_task(make().work(concurrency=2)) for _ in range(2)]
    try:
        async with served(server_deck) as client:
            started = await client.post(
                "/runs", json={"name": "approval", "input": {"order_id": "A-1"}}
            )
            assert started.status_code == 201
            run_id = started.json()["id"]
            assert started.headers["location"] == f"/runs/{run_id}"

            # The stream of a run parked on a question ends at the question.
            async with client.stream("GET", f"/runs/{run_id}/events") as response:
                first = [frame async for frame in frames(response)]
            assert first[-1][1] == "run.interrupted"
            assert [seq for seq, _ in first] == list(range(len(first)))
            assert {"run.queued", "run.claimed"} <= {kind for _, kind in first}
            view = await until_status(client, run_id, "waiting_answer")
            assert view["pending"][0]["payload"] == {"approve": "A-1"}

            # Reconnect from the last id seen; the answer over HTTP carries it to its end.
            last = first[-1][0]
            async with client.stream(
                "GET", f"/runs/{run_id}/events", headers={"Last-Event-ID": str(last)}
            ) as response:
                answered = await client.post(f"/runs/{run_id}/answer", json={"value": "yes"})
                assert answered.status_code == 200
                rest = [frame async for frame in frames(response)]
            assert [seq for seq, _ in rest] == list(range(last + 1, last + 1 + len(rest)))
            kinds = [kind for _, kind in rest]
            assert kinds[0] == "answer.recorded" and kinds[-1] == "run.completed"
            assert "run.resumed" in kinds
            done = await until_status(client, run_id, "completed")
            assert done["last_seq"] == rest[-1][0]
            run = await server_deck.runs.get(run_id)
            assert await run.result() == {"order": "A-1", "decision": "yes"}
            assert server_deck.service.runtime.held.playing == {}  # the server played nothing

            # A cancel over HTTP ends a parked run and its workflow.
            parked = (
                await client.post("/runs", json={"name": "approval", "input": {"order_id": "B-2"}})
            ).json()["id"]
            await until_status(client, parked, "waiting_answer")
            async with client.stream("GET", f"/runs/{parked}/events") as response:
                question = [frame async for frame in frames(response)]
            async with client.stream(
                "GET", f"/runs/{parked}/events", headers={"Last-Event-ID": str(question[-1][0])}
            ) as response:
                cancelled = await client.post(
                    f"/runs/{parked}/cancel", json={"reason": "closed tab"}
                )
                assert cancelled.status_code == 202
                assert cancelled.json()["status"] == "cancelled"
                ending = [kind async for _, kind in frames(response)]
            assert ending[-1] == "run.cancelled"

        temporal = await Client.connect(temporal_target)
        outcomes = [
            await asyncio.wait_for(temporal.get_workflow_handle(workflow_id(rid)).result(), SAFETY)
            for rid in (run_id, parked)
        ]
        assert outcomes == ["completed", "cancelled"]
        history = json.dumps(
            (await temporal.get_workflow_handle(workflow_id(run_id)).fetch_history()).to_json()
        )
        assert "A-1" not in history  # the input and the answer stay in the store
    finally:
        for worker in workers:
            worker.cancel()
        for worker in workers:
            with pytest.raises(asyncio.CancelledError):
                await worker
