"""End to end: a request to the HTTP binding carrying a W3C ``traceparent`` yields spans, as the
OTLP exporter really sends them, in the caller's trace and under the caller's span."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from typing import Any

import httpx

from agentdeck import Deck, WorkflowCtx, workflow
from agentdeck.bindings import Native
from agentdeck.settings import Settings
from agentdeck.testing.otlp import OTLPReceiver
from agentdeck_otel import OTelObserver

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"


def _trees() -> Any:
    path = Path(__file__).parents[1] / "plugins/agentdeck_otel/tests/otlp_trees.py"
    spec = importlib.util.spec_from_file_location("otel_otlp_trees", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


@workflow
async def refund(order_id: str, ctx: WorkflowCtx[Any]) -> str:
    await ctx.report("checking", order=order_id)
    return f"refunded {order_id}"


async def test_a_requests_traceparent_parents_the_runs_trace() -> None:
    with OTLPReceiver() as receiver:
        observer = OTelObserver(receiver.url, signals=("traces",), capture="metadata")
        deck = Deck(workflows=[refund], settings=Settings(), observers=[observer])
        exposure = deck.expose(Native.http())
        server = asyncio.create_task(exposure.serve_async(port=0, log_level="warning"))
        (host, port), *_ = await asyncio.wait_for(exposure.wait_listening(), 30)
        async with httpx.AsyncClient(base_url=f"http://{host}:{port}", timeout=30) as client:
            started = await client.post(
                "/runs",
                json={"name": "refund", "input": {"order_id": "A-1"}},
                headers={
                    "traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01",
                    "tracestate": "rojo=00f067aa0ba902b7",
                },
            )
            assert started.status_code == 201
            run = await deck.runs.get(started.json()["id"])
            assert await run == "refunded A-1"
        exposure.request_shutdown()
        await asyncio.wait_for(server, 30)  # the deck closes: the observer flushes
        spans = _trees().exported_spans(receiver)

    assert spans, "nothing was exported"
    assert {span.trace_id for span in spans} == {TRACE_ID}
    [root] = [span for span in spans if span.parent_span_id == PARENT_ID]
    assert root.name == "invoke_workflow refund"
    assert root.trace_state == "rojo=00f067aa0ba902b7"
    assert all(span.parent_span_id == root.span_id for span in spans if span is not root)
