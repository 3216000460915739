"""What OTelObserver really sends: the trace tree of each kind of run, decoded from the OTLP/HTTP
requests a loopback receiver accepted from the real OpenTelemetry exporter."""

from __future__ import annotations

from collections.abc import Sequence

from otlp_trees import ExportedSpan, exported_spans

from agentdeck.model.events import Event
from agentdeck.observing.tracing.ids import span_id_for, trace_id_for
from agentdeck.testing.otlp import OTLPReceiver
from agentdeck.testing.trace_scenarios import (
    EPOCH,
    agent_turn_with_tool,
    failed_run,
    nested_workflow,
    workflow_with_interrupt,
)
from agentdeck_otel import OTelObserver

STATUS_OK, STATUS_ERROR = 1, 2
SPAN_KIND_INTERNAL, SPAN_KIND_CLIENT = 1, 3


async def export(
    events: Sequence[Event], receiver: OTLPReceiver, **options: object
) -> list[ExportedSpan]:
    observer = OTelObserver(receiver.url, signals=("traces",), **options)  # type: ignore[arg-type]
    await observer.start()
    for event in events:
        await observer.emit(event)
    await observer.close()
    return exported_spans(receiver)


def children_of(parent: ExportedSpan, spans: Sequence[ExportedSpan]) -> list[ExportedSpan]:
    return sorted(
        (s for s in spans if s.parent_span_id == parent.span_id), key=lambda s: s.start_ns
    )


def root_of(spans: Sequence[ExportedSpan]) -> ExportedSpan:
    [root] = [s for s in spans if s.parent_span_id is None]
    return root


async def test_an_agent_turn_is_one_trace_with_generations_and_a_tool_call(
    receiver: OTLPReceiver,
) -> None:
    spans = await export(agent_turn_with_tool().events, receiver, capture="metadata")

    assert {s.trace_id for s in spans} == {trace_id_for("run-agent-1")}
    root = root_of(spans)
    assert root.name == "invoke_agent booking"
    assert root.kind == SPAN_KIND_INTERNAL
    assert root.span_id == span_id_for("run-agent-1", "run")
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["gen_ai.agent.name"] == "booking"
    assert root.attributes["gen_ai.provider.name"] == "openai"
    assert root.attributes["langfuse.observation.type"] == "agent"
    assert root.attributes["agentdeck.run.status"] == "completed"
    assert root.attributes["gen_ai.usage.input_tokens"] == 892
    assert root.attributes["gen_ai.usage.output_tokens"] == 53
    assert root.status_code == STATUS_OK
    assert root.start_ns == int(EPOCH.timestamp()) * 10**9
    assert root.seconds == 1.5

    first, tool, second = children_of(root, spans)
    assert len(spans) == 4
    assert (first.name, tool.name, second.name) == (
        "chat gpt-5-mini",
        "execute_tool find_slots",
        "chat gpt-5-mini",
    )
    assert (first.kind, tool.kind) == (SPAN_KIND_CLIENT, SPAN_KIND_INTERNAL)
    assert first.attributes["langfuse.observation.type"] == "generation"
    assert first.attributes["gen_ai.operation.name"] == "chat"
    assert first.attributes["gen_ai.provider.name"] == "openai"
    assert first.attributes["gen_ai.request.model"] == "gpt-5-mini"
    assert first.attributes["gen_ai.usage.input_tokens"] == 412
    assert first.attributes["gen_ai.usage.output_tokens"] == 31
    assert first.seconds == 0.8
    assert tool.attributes["gen_ai.tool.name"] == "find_slots"
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.type"] == "function"
    assert tool.seconds == 0.25
    assert second.attributes["gen_ai.usage.input_tokens"] == 480
    assert {s.attributes["session.id"] for s in spans} == {root.attributes["session.id"]}
    assert root.attributes["gen_ai.conversation.id"] == root.attributes["session.id"]
    assert root.attributes["session.id"] != "sess-alice"  # the session travels as a hash
    assert root.resource["service.name"] == "agentdeck"
    assert root.scope == "agentdeck"


async def test_a_workflow_waiting_on_an_approval_shows_the_wait_as_a_span(
    receiver: OTLPReceiver,
) -> None:
    spans = await export(workflow_with_interrupt().events, receiver, capture="metadata")

    root = root_of(spans)
    assert root.name == "invoke_workflow refund"
    assert root.attributes["langfuse.observation.type"] == "chain"
    assert root.attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert root.attributes["gen_ai.workflow.name"] == "refund"
    assert "gen_ai.provider.name" not in root.attributes  # a workflow calls no model itself
    assert root.seconds == 3601.1
    lookup, report, approval, refund = children_of(root, spans)
    assert (lookup.name, report.name, approval.name, refund.name) == (
        "lookup_order",  # a workflow step: no GenAI operation, its own name
        "report",
        "approval",
        "issue_refund",
    )
    assert report.attributes["langfuse.observation.type"] == "event"
    assert report.start_ns == report.end_ns
    assert approval.seconds == 3600.0
    assert approval.attributes["agentdeck.interrupt.reason"] == "approval"
    assert approval.attributes["agentdeck.answer.origin"] == "human"
    assert refund.attributes["agentdeck.step.index"] == 1


async def test_a_failed_run_is_an_error_at_its_root_and_at_the_failing_tool(
    receiver: OTLPReceiver,
) -> None:
    spans = await export(failed_run().events, receiver, capture="metadata")

    root = root_of(spans)
    assert root.status_code == STATUS_ERROR
    assert root.status_message == "tool_error"
    assert root.attributes["error.type"] == "tool_error"
    assert root.attributes["agentdeck.run.status"] == "failed"
    assert root.attributes["agentdeck.error.code"] == "tool_error"
    assert root.attributes["agentdeck.error.where"] == "lookup_order"
    generation, tool = children_of(root, spans)
    assert generation.status_code != STATUS_ERROR
    assert tool.name == "execute_tool lookup_order"
    assert tool.status_code == STATUS_ERROR
    assert tool.attributes["agentdeck.tool.error"] is True
    assert tool.attributes["error.type"] == "tool_error"


async def test_a_nested_run_is_placed_under_its_parent_in_the_parents_trace(
    receiver: OTLPReceiver,
) -> None:
    spans = await export(nested_workflow().events, receiver, capture="metadata")

    assert {s.trace_id for s in spans} == {trace_id_for("run-parent")}
    parent = root_of(spans)
    assert parent.name == "invoke_agent concierge"
    [child] = [s for s in spans if s.name == "invoke_workflow reserve"]
    assert child.parent_span_id == parent.span_id
    assert [s.name for s in children_of(child, spans)] == ["book"]


async def test_without_names_spans_are_named_by_their_operation_alone(
    receiver: OTLPReceiver,
) -> None:
    spans = await export(agent_turn_with_tool().events, receiver)  # capture="off", the default

    assert sorted(s.name for s in spans) == ["chat", "chat", "execute_tool", "invoke_agent"]
    assert {s.attributes["gen_ai.operation.name"] for s in spans} == {
        "chat",
        "execute_tool",
        "invoke_agent",
    }  # an operation is not content: it goes under every policy
    root = root_of(spans)
    assert "session.id" not in root.attributes
    assert root.attributes["agentdeck.run.id"] != "run-agent-1"
    assert root.attributes["gen_ai.usage.input_tokens"] == 892  # token counts always go


async def test_the_service_name_and_headers_reach_the_receiver(receiver: OTLPReceiver) -> None:
    await export(
        failed_run().events,
        receiver,
        service_name="support-api",
        headers={"Authorization": "Basic cGs6c2s="},
    )

    [request] = receiver.requests("/v1/traces")
    assert request.headers["authorization"] == "Basic cGs6c2s="
    assert request.headers["content-encoding"] == "gzip"
    assert {s.resource["service.name"] for s in exported_spans(receiver)} == {"support-api"}


async def test_a_run_still_waiting_when_the_deck_closes_is_exported_unfinished(
    receiver: OTLPReceiver,
) -> None:
    events = workflow_with_interrupt().events
    parked = [e for e in events if e.kind != "answer.recorded"]
    parked = parked[: [e.kind for e in parked].index("run.interrupted") + 1]

    spans = await export(parked, receiver, capture="metadata")

    root = root_of(spans)
    assert root.attributes["agentdeck.run.status"] == "waiting_answer"
    assert root.attributes["agentdeck.span.unfinished"] is True
    [approval] = [s for s in spans if s.name == "approval"]
    assert approval.attributes["agentdeck.span.unfinished"] is True


async def test_a_run_resumed_by_another_process_continues_under_the_first_root(
    receiver: OTLPReceiver,
) -> None:
    events = workflow_with_interrupt().events
    resumed_at = [e.kind for e in events].index("answer.recorded")

    spans = await export(events[resumed_at:], receiver, capture="metadata")

    [continuation] = [s for s in spans if s.attributes.get("agentdeck.run.continued")]
    assert continuation.trace_id == trace_id_for("run-wf-1")
    assert continuation.parent_span_id == span_id_for("run-wf-1", "run")
    assert continuation.attributes["agentdeck.run.status"] == "completed"
    assert [s.name for s in children_of(continuation, spans)] == ["answer", "issue_refund"]
