"""W3C trace context: a caller's ``traceparent`` is checked, recorded in ``run.started``, and
parents the run's trace -- in the process that started it and in one that meets it mid-way."""

from __future__ import annotations

from typing import Any

import pytest

from agentdeck import Deck, WorkflowCtx, workflow
from agentdeck.errors import InvalidInputError
from agentdeck.model.clock import ManualClock
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunStarted
from agentdeck.observing.tracing.context import parse_traceparent, trace_context
from agentdeck.observing.tracing.ids import span_id_for, trace_id_for
from agentdeck.observing.tracing.renderer import TraceRenderer, place
from agentdeck.observing.tracing.spans import SpanRecord
from agentdeck.settings import Settings
from agentdeck.testing.trace_scenarios import EPOCH, RunLog, workflow_with_interrupt

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"


@pytest.mark.parametrize(
    "header",
    [
        f"00-{'0' * 32}-{PARENT_ID}-01",  # all-zero trace id
        f"00-{TRACE_ID}-{'0' * 16}-01",  # all-zero span id
        f"ff-{TRACE_ID}-{PARENT_ID}-01",  # the forbidden version
        f"00-{TRACE_ID}-{PARENT_ID}-01-extra",  # version 00 has nothing after the flags
        f"00-{TRACE_ID[:-1]}-{PARENT_ID}-01",
        "garbage",
        "",
    ],
)
def test_an_invalid_traceparent_is_not_read(header: str) -> None:
    assert parse_traceparent(header) is None


def test_a_valid_traceparent_is_read_and_a_later_versions_extra_fields_ignored() -> None:
    parent = parse_traceparent(TRACEPARENT.upper(), "vendor=abc")
    assert parent is not None
    assert (parent.trace_id, parent.span_id, parent.sampled) == (TRACE_ID, PARENT_ID, True)
    assert parent.trace_state == "vendor=abc"
    later = parse_traceparent(f"01-{TRACE_ID}-{PARENT_ID}-00-more")
    assert later is not None and later.sampled is False


def test_a_callers_trace_context_keeps_only_the_trace_headers() -> None:
    assert trace_context({"Traceparent": TRACEPARENT, "tracestate": "a=1", "baggage": "x"}) == {
        "traceparent": TRACEPARENT,
        "tracestate": "a=1",
    }
    assert trace_context({}) is None
    assert trace_context({"baggage": "x"}) is None


def test_a_malformed_traceparent_from_a_caller_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidInputError) as refused:
        trace_context({"traceparent": "00-nope"})
    assert refused.value.field == "trace_context.traceparent"


@workflow
async def echo(text: str, ctx: WorkflowCtx[Any]) -> str:
    return text


async def test_runs_start_records_the_trace_context_in_run_started() -> None:
    async with Deck(workflows=[echo], settings=Settings(), observers=()) as deck:
        run = await deck.runs.start(
            "echo", {"text": "hi"}, trace_context={"traceparent": TRACEPARENT}
        )
        assert await run.result() == "hi"
        [started, *_] = [event async for event in run.events()]
        plain = await deck.runs.start("echo", {"text": "hi"})
        await plain.result()
        [plain_started, *_] = [event async for event in plain.events()]
        with pytest.raises(InvalidInputError):
            await deck.runs.start("echo", {"text": "x"}, trace_context={"traceparent": "bad"})
    assert isinstance(started.payload, RunStarted)
    assert started.payload.trace_context == {"traceparent": TRACEPARENT}
    assert isinstance(plain_started.payload, RunStarted)
    assert plain_started.payload.trace_context is None


def traced_run(run_id: str = "run-traced") -> list[Event]:
    log = RunLog(run_id, ManualClock(EPOCH), origin="echo")
    context = {"traceparent": TRACEPARENT, "tracestate": "vendor=abc"}
    log.add(RunStarted(name="echo", invocable_kind="workflow", trace_context=context))
    return log.events


def records(rendered: list[Any]) -> list[SpanRecord]:
    return [r for r in rendered if isinstance(r, SpanRecord)]


def test_the_root_of_a_run_started_under_a_trace_context_is_the_callers_child() -> None:
    renderer = TraceRenderer()
    [started] = renderer.feed(traced_run()[0])
    [root] = records(renderer.close(EPOCH))

    assert (started.trace_id, started.parent_span_id) == (TRACE_ID, PARENT_ID)
    assert (root.trace_id, root.parent_span_id) == (TRACE_ID, PARENT_ID)
    assert root.span_id == span_id_for("run-traced", "run")  # still derived from the run id
    assert root.trace_state == "vendor=abc"


async def test_a_process_meeting_a_traced_run_mid_way_continues_it_in_the_callers_trace() -> None:
    events = workflow_with_interrupt().events
    context = {"traceparent": TRACEPARENT}
    first = events[0]
    assert isinstance(first.payload, RunStarted)
    started = first.model_copy(
        update={"payload": first.payload.model_copy(update={"trace_context": context})}
    )
    later = events[[e.kind for e in events].index("answer.recorded") :]
    reads: list[str] = []

    async def read_start(run_id: str) -> Event | None:
        reads.append(run_id)
        return started if run_id == started.run_id else None

    renderer = TraceRenderer()
    out: list[Any] = []
    for event in later:
        await place(renderer, event, read_start)
        out += renderer.feed(event)

    assert reads == [started.run_id]  # read once, for the run met mid-way
    spans = records(out)
    assert {span.trace_id for span in spans} == {TRACE_ID}
    [continuation] = [s for s in spans if s.attributes.get("agentdeck.run.continued")]
    assert continuation.parent_span_id == span_id_for(started.run_id, "run")


async def test_without_a_start_in_the_log_a_run_met_mid_way_keeps_its_derived_trace() -> None:
    events = workflow_with_interrupt().events
    later = events[[e.kind for e in events].index("answer.recorded") :]

    async def read_start(run_id: str) -> Event | None:
        return None

    renderer = TraceRenderer()
    out: list[Any] = []
    for event in later:
        await place(renderer, event, read_start)
        out += renderer.feed(event)
    assert {span.trace_id for span in records(out)} == {trace_id_for("run-wf-1")}
