"""``POST /runs/{id}/retry`` and ``POST /runs/{id}/fork`` over a real server: a new run linked
to its origin, what it reuses not executed again, and the refusals each documents."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from http_test_support import make_deck, serving

from agentdeck import RunFailedError, WorkflowCtx, workflow
from agentdeck.bindings import Native
from agentdeck.model.payloads import RunStarted

executed: Counter[str] = Counter()
broken: set[str] = set()


def _step(name: str) -> Any:
    def run(value: int) -> int:
        executed[name] += 1
        if name in broken:
            raise RuntimeError(f"{name} is down")
        return value + 1

    return run


@workflow
async def three(ctx: WorkflowCtx[Any]) -> int:
    value = 0
    for n in (1, 2, 3):
        value = await ctx.step(f"s{n}", _step(f"s{n}"), value)
    return value


async def _started(served: Any, run_id: str) -> RunStarted:
    run = await served.exposure.deck.runs.get(run_id)
    async for event in run.events():
        assert isinstance(event.payload, RunStarted)
        return event.payload
    raise AssertionError(run_id)


async def test_retry_starts_a_linked_run_that_reuses_the_completed_steps() -> None:
    executed.clear()
    broken.clear()
    broken.add("s3")
    async with serving(make_deck(workflows=[three]), Native.http()) as served:
        deck = served.exposure.deck
        failed = await deck.runs.start("three")
        with pytest.raises(RunFailedError):
            await failed
        broken.clear()

        response = await served.client.post(f"/runs/{failed.id}/retry")

        assert response.status_code == 201, response.text
        body = response.json()
        assert body["id"] != failed.id and response.headers["location"] == f"/runs/{body['id']}"
        assert await (await deck.runs.get(body["id"])) == 3
        assert executed == Counter(s1=1, s2=1, s3=2)
        assert (await _started(served, body["id"])).retry_of == failed.id

        again = await served.client.post(f"/runs/{body['id']}/retry")
        assert again.status_code == 409
        assert again.json()["error"] == "run_state" and again.json()["hint"] == "fork"


async def test_fork_starts_from_the_given_step_and_refuses_a_point_the_log_lacks() -> None:
    executed.clear()
    broken.clear()
    async with serving(make_deck(workflows=[three]), Native.http()) as served:
        deck = served.exposure.deck
        done = await deck.runs.start("three")
        assert await done == 3
        executed.clear()

        response = await served.client.post(f"/runs/{done.id}/fork", json={"at": 2})

        assert response.status_code == 201, response.text
        fork_id = response.json()["id"]
        assert await (await deck.runs.get(fork_id)) == 3
        assert executed == Counter(s3=1)
        origin = (await _started(served, fork_id)).forked_from
        assert origin is not None and (origin.run_id, origin.at) == (done.id, 2)

        too_far = await served.client.post(f"/runs/{done.id}/fork", json={"at": 7})
        assert too_far.status_code == 422 and too_far.json()["field"] == "at"
        missing = await served.client.post("/runs/nosuch/fork", json={"at": 0})
        assert missing.status_code == 404
