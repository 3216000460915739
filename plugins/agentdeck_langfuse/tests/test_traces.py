"""What LangfuseObserver really sends: the Langfuse SDK's own OTLP requests, accepted by a
loopback receiver standing in for a Langfuse server, decoded into the observation tree."""

from __future__ import annotations

import json
from collections.abc import Sequence

from opentelemetry.sdk.trace.sampling import Decision, TraceIdRatioBased
from otlp_trees import ExportedSpan, exported_spans

from agentdeck.model.events import Event
from agentdeck.observing.tracing.ids import span_id_for, trace_id_for
from agentdeck.settings import Settings
from agentdeck.testing.otlp import OTLPReceiver
from agentdeck.testing.trace_scenarios import (
    EPOCH,
    agent_turn_with_tool,
    failed_run,
    nested_workflow,
    workflow_with_interrupt,
)
from agentdeck_langfuse import LangfuseObserver

TRACES_PATH = "/api/public/otel/v1/traces"


async def export(events: Sequence[Event], settings: Settings) -> None:
    observer = LangfuseObserver(settings=settings)
    await observer.start()
    for event in events:
        await observer.emit(event)
    await observer.close()


def observations(receiver: OTLPReceiver) -> list[ExportedSpan]:
    return exported_spans(receiver, TRACES_PATH)


def observation_type(span: ExportedSpan) -> str:
    return str(span.attributes["langfuse.observation.type"])


def children_of(parent: ExportedSpan, spans: Sequence[ExportedSpan]) -> list[ExportedSpan]:
    return sorted(
        (s for s in spans if s.parent_span_id == parent.span_id), key=lambda s: s.start_ns
    )


def root_of(spans: Sequence[ExportedSpan]) -> ExportedSpan:
    [root] = [s for s in spans if s.parent_span_id is None]
    return root


def metadata(span: ExportedSpan, key: str) -> object:
    return json.loads(span.attributes[f"langfuse.observation.metadata.{key}"])


async def test_the_sdk_posts_gzipped_otlp_to_the_langfuse_endpoint_with_its_auth(
    receiver: OTLPReceiver, settings: Settings, public_key: str
) -> None:
    await export(agent_turn_with_tool().events, settings)

    [request] = receiver.requests()
    assert request.path == TRACES_PATH
    assert request.headers["content-encoding"] == "gzip"
    assert request.headers["content-type"] == "application/x-protobuf"
    assert request.headers["x-langfuse-public-key"] == public_key
    assert request.headers["authorization"].startswith("Basic ")


async def test_an_agent_turn_is_one_trace_with_generations_and_a_tool(
    receiver: OTLPReceiver, settings: Settings
) -> None:
    await export(agent_turn_with_tool().events, settings)
    spans = observations(receiver)

    assert {s.trace_id for s in spans} == {trace_id_for("run-agent-1")}
    root = root_of(spans)
    assert root.name == "booking"
    assert root.span_id == span_id_for("run-agent-1", "run")
    assert observation_type(root) == "agent"
    assert root.attributes["langfuse.observation.input"] == (
        "Book a table for two at Luigi's tomorrow evening"
    )
    assert root.attributes["langfuse.observation.output"].startswith("Luigi's has 19:00")
    assert root.start_ns == int(EPOCH.timestamp()) * 10**9
    assert root.seconds == 1.5

    first, tool, second = children_of(root, spans)
    assert [observation_type(s) for s in (first, tool, second)] == [
        "generation",
        "tool",
        "generation",
    ]
    assert first.attributes["langfuse.observation.model.name"] == "gpt-5-mini"
    assert json.loads(first.attributes["langfuse.observation.usage_details"]) == {
        "input": 412,
        "output": 31,
        "total": 443,
    }
    assert first.seconds == 0.8
    assert tool.name == "find_slots"
    assert json.loads(tool.attributes["langfuse.observation.input"]) == {
        "restaurant": "Luigi's",
        "party": 2,
        "day": "tomorrow",
    }
    assert tool.seconds == 0.25
    assert second.attributes["langfuse.observation.output"].startswith("Luigi's has")


async def test_every_observation_carries_the_session_trace_name_and_environment(
    receiver: OTLPReceiver, settings: Settings
) -> None:
    await export(agent_turn_with_tool().events, settings)
    spans = observations(receiver)

    assert {s.attributes["session.id"] for s in spans} == {"sess-alice"}
    assert {s.attributes["langfuse.trace.name"] for s in spans} == {"booking"}
    assert {s.attributes["langfuse.environment"] for s in spans} == {"local"}
    root = root_of(spans)
    assert metadata(root, "agentdeck.run.id") == "run-agent-1"
    assert metadata(root, "agentdeck.namespace") == "acme"
    assert root.resource["service.name"] == "agentdeck"


async def test_a_workflow_with_an_interrupt_shows_the_wait_and_the_answer(
    receiver: OTLPReceiver, settings: Settings
) -> None:
    await export(workflow_with_interrupt().events, settings)
    spans = observations(receiver)

    root = root_of(spans)
    assert root.name == "refund"
    assert observation_type(root) == "chain"
    assert root.seconds == 3601.1
    lookup, report, approval, refund = children_of(root, spans)
    assert [s.name for s in (lookup, report, approval, refund)] == [
        "lookup_order",
        "report",
        "approval",
        "issue_refund",
    ]
    assert observation_type(report) == "event"
    assert approval.seconds == 3600.0
    assert json.loads(approval.attributes["langfuse.observation.input"]) == {
        "question": "Refund 120 EUR for order A-1009?",
        "amount": 120,
    }
    assert json.loads(approval.attributes["langfuse.observation.output"]) == {"approved": True}
    assert metadata(approval, "agentdeck.answer.origin") == "human"


async def test_a_failed_run_is_an_error_at_its_root_and_at_the_failing_tool(
    receiver: OTLPReceiver, settings: Settings
) -> None:
    await export(failed_run().events, settings)
    spans = observations(receiver)

    root = root_of(spans)
    assert root.attributes["langfuse.observation.level"] == "ERROR"
    assert root.attributes["langfuse.observation.status_message"] == (
        "tool_error: lookup_order raised KeyError"
    )
    assert metadata(root, "agentdeck.error.code") == "tool_error"
    [tool] = [s for s in children_of(root, spans) if observation_type(s) == "tool"]
    assert tool.attributes["langfuse.observation.level"] == "ERROR"
    assert tool.attributes["langfuse.observation.status_message"] == "KeyError: order 42"


async def test_a_nested_run_is_placed_under_its_parent_in_the_parents_trace(
    receiver: OTLPReceiver, settings: Settings
) -> None:
    await export(nested_workflow().events, settings)
    spans = observations(receiver)

    assert {s.trace_id for s in spans} == {trace_id_for("run-parent")}
    parent = root_of(spans)
    [child] = [s for s in spans if observation_type(s) == "chain"]
    assert child.name == "reserve"
    assert child.parent_span_id == parent.span_id
    assert [s.name for s in children_of(child, spans)] == ["book"]
    assert {s.attributes["langfuse.trace.name"] for s in spans} == {"concierge"}


async def test_environment_and_service_name_come_from_settings(
    receiver: OTLPReceiver, langfuse_env: dict[str, str]
) -> None:
    settings = Settings(
        env={
            **langfuse_env,
            "AGENTDECK_LANGFUSE_ENVIRONMENT": "staging",
            "AGENTDECK_LANGFUSE_SERVICE_NAME": "booking-api",
        }
    )
    await export(failed_run().events, settings)

    spans = observations(receiver)
    assert {s.attributes["langfuse.environment"] for s in spans} == {"staging"}
    assert {s.resource["service.name"] for s in spans} == {"booking-api"}


async def test_a_sample_rate_of_zero_exports_no_run(
    receiver: OTLPReceiver, langfuse_env: dict[str, str]
) -> None:
    settings = Settings(env={**langfuse_env, "AGENTDECK_LANGFUSE_SAMPLE_RATE": "0"})
    await export(agent_turn_with_tool().events, settings)

    assert receiver.requests() == []


async def test_sampling_keeps_or_drops_each_run_whole_by_its_trace_id(
    receiver: OTLPReceiver, langfuse_env: dict[str, str]
) -> None:
    settings = Settings(env={**langfuse_env, "AGENTDECK_LANGFUSE_SAMPLE_RATE": "0.5"})
    scenarios = [agent_turn_with_tool, workflow_with_interrupt, failed_run, nested_workflow]
    await export([e for make in scenarios for e in make().events], settings)

    sampler = TraceIdRatioBased(0.5)
    run_ids = ["run-agent-1", "run-wf-1", "run-fail-1", "run-parent"]
    kept = {
        trace_id_for(run_id)
        for run_id in run_ids
        if sampler.should_sample(None, int(trace_id_for(run_id), 16), "run").decision
        is Decision.RECORD_AND_SAMPLE
    }
    assert 0 < len(kept) < len(run_ids)  # the rate really splits these runs
    spans = observations(receiver)
    assert {s.trace_id for s in spans} == kept
    for trace_id in kept:  # each kept run arrives whole, root included
        assert len([s for s in spans if s.trace_id == trace_id and s.parent_span_id is None]) == 1
