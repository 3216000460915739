"""The trace rendering every exporter shares: events in, a tree of finished spans out."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from agentdeck.model.clock import ManualClock
from agentdeck.model.content import TextBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    MessageCompleted,
    RunCompleted,
    RunPaused,
    RunResumed,
    RunStarted,
    ToolCallCompleted,
    ToolCallStarted,
    UnknownEvent,
    Usage,
    UsageReported,
)
from agentdeck.observing.capture import ContentPolicy
from agentdeck.observing.tracing import attributes
from agentdeck.observing.tracing.ids import span_id_for, trace_id_for
from agentdeck.observing.tracing.renderer import TraceRenderer
from agentdeck.observing.tracing.run_spans import PROMPT_ITEMS
from agentdeck.observing.tracing.spans import (
    Rendered,
    SpanLevel,
    SpanRecord,
    SpanStarted,
    SpanType,
)
from agentdeck.testing.event_examples import EXAMPLE_EVENTS
from agentdeck.testing.trace_scenarios import (
    EPOCH,
    RunLog,
    Scenario,
    agent_turn_with_tool,
    failed_run,
    nested_workflow,
    tool_call_with_secrets,
    workflow_with_interrupt,
)

METADATA = ContentPolicy(capture="metadata")
FULL = ContentPolicy(capture="full")


def render(events: Iterable[Event], policy: ContentPolicy | None = None) -> list[Rendered]:
    renderer = TraceRenderer(policy)
    out = [item for event in events for item in renderer.feed(event)]
    assert renderer.open_runs == 0
    return out


def records(items: Sequence[Rendered]) -> list[SpanRecord]:
    return [item for item in items if isinstance(item, SpanRecord)]


def children(parent: SpanRecord, spans: Sequence[SpanRecord]) -> list[SpanRecord]:
    return sorted((s for s in spans if s.parent_span_id == parent.span_id), key=lambda s: s.start)


def root(spans: Sequence[SpanRecord]) -> SpanRecord:
    [top] = [s for s in spans if s.parent_span_id is None]
    return top


def test_an_agent_turn_renders_root_generations_and_tool() -> None:
    spans = records(render(agent_turn_with_tool().events, METADATA))

    top = root(spans)
    assert (top.name, top.type, top.run_root) == ("booking", SpanType.AGENT, True)
    assert top.trace_id == trace_id_for("run-agent-1")
    assert top.span_id == span_id_for("run-agent-1", "run")
    assert top.start == EPOCH and top.end == EPOCH + timedelta(seconds=1.5)
    assert top.usage == Usage(requests=2, input_tokens=892, output_tokens=53, total_tokens=945)
    assert top.attributes["agentdeck.run.status"] == "completed"
    first, tool, second = children(top, spans)
    assert (first.type, tool.type, second.type) == (
        SpanType.GENERATION,
        SpanType.TOOL,
        SpanType.GENERATION,
    )
    assert first.model == "gpt-5-mini"
    assert first.usage is not None and first.usage.input_tokens == 412
    assert first.end - first.start == timedelta(seconds=0.8)  # run start to first usage report
    assert second.start == tool.end  # the next model call starts when the tool returns
    assert tool.name == "find_slots"
    assert {s.session_id for s in spans} == {METADATA.identifier("sess-alice")}
    assert {s.trace_name for s in spans} == {"booking"}


def test_the_root_is_announced_first_and_finished_last() -> None:
    items = render(agent_turn_with_tool().events)

    assert isinstance(items[0], SpanStarted)
    assert items[0].span_id == span_id_for("run-agent-1", "run")
    assert isinstance(items[-1], SpanRecord) and items[-1].span_id == items[0].span_id
    assert [i for i in items if isinstance(i, SpanStarted)] == [items[0]]


def test_rendering_is_the_same_in_every_process() -> None:
    assert render(workflow_with_interrupt().events) == render(workflow_with_interrupt().events)


def test_an_interrupt_is_a_span_covering_the_wait_until_the_answer() -> None:
    spans = records(render(workflow_with_interrupt().events, FULL))

    top = root(spans)
    assert top.type is SpanType.CHAIN
    lookup, report, approval, refund = children(top, spans)
    assert report.type is SpanType.EVENT and report.start == report.end
    assert approval.name == "approval"
    assert approval.end - approval.start == timedelta(hours=1)
    assert approval.input == '{"question":"Refund 120 EUR for order A-1009?","amount":120}'
    assert approval.output == '{"approved":true}'
    assert approval.attributes["agentdeck.answer.origin"] == "human"
    assert (lookup.name, refund.name) == ("lookup_order", "issue_refund")
    assert refund.start == top.start + timedelta(seconds=3600.5)  # from the resume


def test_a_pause_is_a_span_until_the_resume() -> None:
    clock = ManualClock(EPOCH)
    log = RunLog("r-p", clock, origin="nightly")
    log.add(RunStarted(name="nightly", invocable_kind="workflow"))
    log.add(RunPaused(reason="maintenance", wake_at=EPOCH + timedelta(hours=2)), after=1)
    log.add(RunResumed(), after=7200)
    log.add(RunCompleted(), after=1)

    spans = records(render(log.events, METADATA))

    [paused] = children(root(spans), spans)
    assert paused.name == "paused"
    assert paused.end - paused.start == timedelta(hours=2)
    assert paused.attributes["agentdeck.pause.wake_at"] == "2030-01-02T11:00:00+00:00"


def test_a_failed_run_is_an_error_with_its_code() -> None:
    spans = records(render(failed_run().events, METADATA))

    top = root(spans)
    assert top.level is SpanLevel.ERROR
    assert top.status_message == "tool_error"  # the message itself is content
    assert top.attributes["agentdeck.error.code"] == "tool_error"
    assert top.attributes["agentdeck.error.where"] == "lookup_order"
    [tool] = [s for s in spans if s.type is SpanType.TOOL]
    assert tool.level is SpanLevel.ERROR
    assert tool.status_message == "tool error"


def test_a_nested_run_lives_under_its_parent_in_the_parents_trace() -> None:
    spans = records(render(nested_workflow().events, METADATA))

    parent = root(spans)
    [child] = [s for s in spans if s.run_root and s is not parent]
    assert child.trace_id == parent.trace_id == trace_id_for("run-parent")
    assert child.parent_span_id == parent.span_id
    assert child.trace_name == "concierge"
    assert [s.name for s in children(child, spans)] == ["book"]


def test_a_nested_run_whose_parent_was_never_seen_goes_under_the_parents_ids() -> None:
    events = [e for e in nested_workflow().events if e.run_id == "run-child"]

    spans = records(render(events))

    [child] = [s for s in spans if s.run_root]
    assert child.trace_id == trace_id_for("run-parent")
    assert child.parent_span_id == span_id_for("run-parent", "run")


def test_a_run_first_seen_mid_way_continues_under_its_root() -> None:
    events = workflow_with_interrupt().events
    resumed = [e.kind for e in events].index("answer.recorded")

    spans = records(render(events[resumed:], METADATA))

    [continuation] = [s for s in spans if s.attributes.get("agentdeck.run.continued")]
    assert continuation.parent_span_id == span_id_for("run-wf-1", "run")
    assert continuation.trace_id == trace_id_for("run-wf-1")
    assert not continuation.run_root
    assert continuation.attributes["agentdeck.run.status"] == "completed"
    assert {s.parent_span_id for s in spans if s is not continuation} == {continuation.span_id}


def test_closing_finishes_open_runs_as_unfinished() -> None:
    events = workflow_with_interrupt().events
    parked = events[: [e.kind for e in events].index("run.interrupted") + 1]
    renderer = TraceRenderer(METADATA)
    for event in parked:
        renderer.feed(event)

    closed = records(renderer.close(EPOCH))  # a wall clock behind the log's clock

    assert renderer.open_runs == 0
    top = root(closed)
    assert top.attributes["agentdeck.run.status"] == "waiting_answer"
    assert top.attributes["agentdeck.span.unfinished"] is True
    assert top.end == parked[-1].ts  # never before the run's last event
    [approval] = [s for s in closed if s.name == "approval"]
    assert approval.attributes["agentdeck.span.unfinished"] is True


def test_at_most_max_open_runs_are_tracked() -> None:
    clock = ManualClock(EPOCH)
    renderer = TraceRenderer(max_open_runs=2)
    finished: list[Rendered] = []
    for n in range(3):
        log = RunLog(f"r-{n}", clock, origin="a")
        finished += renderer.feed(log.add(RunStarted(name="a", invocable_kind="agent"), after=1))

    assert renderer.open_runs == 2
    [evicted] = records(finished)
    assert evicted.span_id == span_id_for("r-0", "run")
    assert evicted.attributes["agentdeck.span.unfinished"] is True


def test_off_renders_no_names_no_content_and_no_raw_ids() -> None:
    for scenario in (agent_turn_with_tool(), workflow_with_interrupt(), tool_call_with_secrets()):
        spans = records(render(scenario.events))
        exported = repr(spans)
        for text in (*scenario.content, *scenario.names, "run-agent-1", "sess-alice", "acme"):
            assert text not in exported
        assert all(s.input is None and s.output is None and s.model is None for s in spans)
        assert all(s.session_id is None for s in spans)


def test_metadata_renders_names_but_no_content() -> None:
    scenario = agent_turn_with_tool()
    spans = records(render(scenario.events, METADATA))
    exported = repr(spans)

    for name in scenario.names:
        assert name in exported
    for text in scenario.content:
        assert text not in exported
    assert "sess-alice" not in exported


def test_full_renders_content_and_raw_ids() -> None:
    spans = records(render(agent_turn_with_tool().events, FULL))

    top = root(spans)
    assert top.input == "Book a table for two at Luigi's tomorrow evening"
    assert top.output == "Luigi's has 19:00 or 20:30 tomorrow; shall I book 19:00?"
    assert top.session_id == "sess-alice"
    assert top.attributes["agentdeck.run.id"] == "run-agent-1"
    first, tool, second = children(top, spans)
    assert first.input == top.input and first.output is None  # it answered with a tool call
    assert tool.input == '{"restaurant":"Luigi\'s","party":2,"day":"tomorrow"}'
    assert tool.output == '["19:00", "20:30"]'
    assert second.input == f'{top.input}\nfind_slots: ["19:00", "20:30"]'
    assert second.output == top.output


def test_a_generation_prompt_keeps_the_latest_items() -> None:
    clock = ManualClock(EPOCH)
    log = RunLog("r-long", clock, origin="a")
    log.add(RunStarted(name="a", invocable_kind="agent", input=[TextBlock(text="item 0")]))
    for n in range(1, PROMPT_ITEMS + 5):
        log.add(ToolCallStarted(call_id=f"c{n}", tool="t"))
        log.add(ToolCallCompleted(call_id=f"c{n}", tool="t", result_preview=f"item {n}"))
    log.add(MessageCompleted(message_id="m", text="done"))
    log.add(UsageReported(usage=Usage(input_tokens=1)))
    log.add(RunCompleted())

    [generation] = [s for s in records(render(log.events, FULL)) if s.type is SpanType.GENERATION]

    assert generation.input is not None
    lines = generation.input.splitlines()
    assert len(lines) == PROMPT_ITEMS
    assert lines[-1] == f"t: item {PROMPT_ITEMS + 4}"


def test_a_kind_this_release_does_not_know_is_skipped() -> None:
    events = agent_turn_with_tool().events
    newer = Event.record(UnknownEvent(kind="run.rewound"), seq=99, run_id="run-agent-1", ts=EPOCH)

    assert render([*events[:-1], newer, events[-1]]) == render(events)


SCENARIOS: list[Scenario] = [
    agent_turn_with_tool(),
    workflow_with_interrupt(),
    failed_run(),
    nested_workflow(),
    tool_call_with_secrets(),
]


def test_every_attribute_a_record_carries_is_named_in_the_attribute_vocabulary() -> None:
    vocabulary = {getattr(attributes, name) for name in attributes.__all__ if name.isupper()}
    streams = [EXAMPLE_EVENTS] + [
        scenario().events
        for scenario in (agent_turn_with_tool, workflow_with_interrupt, failed_run, nested_workflow)
    ]
    seen: set[str] = set()
    for policy in (ContentPolicy(capture="off"), METADATA, FULL):
        for events in streams:
            renderer = TraceRenderer(policy)
            items = [item for event in events for item in renderer.feed(event)]
            items += renderer.close(EPOCH + timedelta(days=1))
            seen.update(key for span in records(items) for key in span.attributes)
    assert seen <= vocabulary, f"not in the vocabulary: {sorted(seen - vocabulary)}"
    assert len(seen) > 30  # the streams reach nearly every kind of span


@given(
    st.sampled_from(SCENARIOS).flatmap(
        lambda s: st.lists(st.booleans(), min_size=len(s.events), max_size=len(s.events)).map(
            lambda keep: [e for e, k in zip(s.events, keep, strict=True) if k]
        )
    ),
    st.sampled_from([None, METADATA, FULL]),
)
def test_any_gappy_stream_renders_a_consistent_tree(
    events: list[Event], policy: ContentPolicy | None
) -> None:
    # Observers can miss events (a view, a dropped backlog, a restart): whatever arrives must
    # still render into spans that end after they start, in one trace per top-level run, and
    # every span must be finished once the renderer closes.
    renderer = TraceRenderer(policy)
    items = [item for event in events for item in renderer.feed(event)]
    items += renderer.close(EPOCH)

    assert renderer.open_runs == 0
    spans = records(items)
    started = {i.span_id for i in items if isinstance(i, SpanStarted)}
    assert started <= {s.span_id for s in spans}
    for span in spans:
        assert span.end >= span.start
        assert len(span.trace_id) == 32 and len(span.span_id) == 16
