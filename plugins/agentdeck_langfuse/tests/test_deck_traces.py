"""Traces of runs a real Deck played (the native workflow engine), as the Langfuse SDK exports
them to a loopback receiver: the observer sees exactly what the runtime recorded."""

from __future__ import annotations

import json

import pytest
from otlp_trees import ExportedSpan, exported_spans

from agentdeck import Deck, RunFailedError, WorkflowCtx, workflow
from agentdeck.observing.tracing.ids import trace_id_for
from agentdeck.settings import Settings
from agentdeck.testing.otlp import OTLPReceiver
from agentdeck_langfuse import LangfuseObserver

TRACES_PATH = "/api/public/otel/v1/traces"


@workflow
async def refund(order_id: str, ctx: WorkflowCtx) -> dict[str, object]:
    await ctx.report("looking up", order=order_id)
    answer = await ctx.ask({"question": f"refund {order_id}?"}, options=["yes", "no"])
    return {"order_id": order_id, "refunded": answer == "yes"}


@workflow
async def broken(ctx: WorkflowCtx) -> None:
    raise KeyError("order 42")


def root_of(spans: list[ExportedSpan], run_id: str) -> ExportedSpan:
    [root] = [s for s in spans if s.trace_id == trace_id_for(run_id) and s.parent_span_id is None]
    return root


async def test_a_deck_run_with_an_interrupt_and_a_failed_run_are_traced(
    receiver: OTLPReceiver, settings: Settings
) -> None:
    deck = Deck(workflows=[refund, broken], settings=settings, observers=[LangfuseObserver()])
    async with deck:
        parked = await deck.run("refund", {"order_id": "A-1"}, session_id="s-1")
        run = await deck.runs.get(parked.run_id)
        await run.answer("yes")
        assert await run == {"order_id": "A-1", "refunded": True}
        with pytest.raises(RunFailedError) as failed:
            await deck.run("broken")
    spans = exported_spans(receiver, TRACES_PATH)

    root = root_of(spans, run.id)
    assert root.name == "refund"
    assert root.attributes["session.id"] == "s-1"
    children = sorted(
        (s for s in spans if s.parent_span_id == root.span_id), key=lambda s: s.start_ns
    )
    assert [s.name for s in children] == ["report", "interrupt"]
    report, interrupt = children
    assert report.attributes["langfuse.observation.type"] == "event"
    assert json.loads(str(report.attributes["langfuse.observation.output"])) == {
        "message": "looking up",
        "fields": {"order": "A-1"},
    }
    assert interrupt.attributes["langfuse.observation.output"] == "yes"
    assert json.loads(str(root.attributes["langfuse.observation.output"])) == {
        "order_id": "A-1",
        "refunded": True,
    }

    failed_root = root_of(spans, failed.value.run_id)
    assert failed_root.attributes["langfuse.observation.level"] == "ERROR"
    assert "engine_error" in str(failed_root.attributes["langfuse.observation.status_message"])
    assert "order 42" not in json.dumps({k: str(v) for k, v in failed_root.attributes.items()})
