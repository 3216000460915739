"""A request's W3C ``traceparent`` (and ``tracestate``) is recorded with the run it starts, so
the run's trace is a child of the caller's span; a header that is not a traceparent is ignored."""

from __future__ import annotations

from typing import Any

from http_test_support import make_deck, serving

from agentdeck import workflow
from agentdeck.bindings import Native
from agentdeck.model.payloads import RunStarted

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@workflow
async def echo(value: Any = None) -> Any:
    return value


async def started_context(served: Any, headers: dict[str, str]) -> dict[str, str] | None:
    response = await served.client.post(
        "/runs", json={"name": "echo", "input": {"value": 1}}, headers=headers
    )
    assert response.status_code == 201
    run = await served.exposure.deck.runs.get(response.json()["id"])
    await run
    [first, *_] = [event async for event in run.events()]
    assert isinstance(first.payload, RunStarted)
    return first.payload.trace_context


async def test_post_runs_records_the_requests_trace_context() -> None:
    async with serving(make_deck(workflows=[echo]), Native.http()) as served:
        recorded = await started_context(
            served, {"traceparent": TRACEPARENT, "tracestate": "congo=t61rcWkgMzE"}
        )
    assert recorded == {"traceparent": TRACEPARENT, "tracestate": "congo=t61rcWkgMzE"}


async def test_a_header_that_is_not_a_traceparent_is_ignored_not_refused() -> None:
    async with serving(make_deck(workflows=[echo]), Native.http()) as served:
        assert await started_context(served, {"traceparent": "00-not-a-trace"}) is None
        assert await started_context(served, {}) is None


async def test_the_4x_routes_pass_the_trace_context_too() -> None:
    async with serving(make_deck(workflows=[echo]), Native.http()) as served:
        response = await served.client.post(
            "/workflows/echo", json={"value": 3}, headers={"traceparent": TRACEPARENT}
        )
        assert response.status_code == 200
        [run] = await served.exposure.deck.runs.list()
        [first, *_] = [event async for event in run.events()]
    assert isinstance(first.payload, RunStarted)
    assert first.payload.trace_context == {"traceparent": TRACEPARENT}
