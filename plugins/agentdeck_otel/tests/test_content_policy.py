"""The content-capture policy holds in the bytes that actually leave the process."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from otlp_trees import exported_spans

from agentdeck.model.events import Event
from agentdeck.testing.otlp import OTLPReceiver
from agentdeck.testing.trace_scenarios import (
    SECRETS,
    Scenario,
    agent_turn_with_tool,
    failed_run,
    nested_workflow,
    tool_call_with_secrets,
    workflow_with_interrupt,
)
from agentdeck_otel import OTelObserver

SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "agent turn": agent_turn_with_tool,
    "workflow with interrupt": workflow_with_interrupt,
    "failed run": failed_run,
    "nested runs": nested_workflow,
    "secrets": tool_call_with_secrets,
}
RAW_IDS = ("run-agent-1", "run-wf-1", "run-fail-1", "run-parent", "sess-alice", "sess-bob")


async def sent(receiver: OTLPReceiver, events: Sequence[Event], **options: object) -> bytes:
    observer = OTelObserver(receiver.url, **options)  # type: ignore[arg-type]
    await observer.start()
    for event in events:
        await observer.emit(event)
    await observer.close()
    assert receiver.requests("/v1/traces"), "nothing was exported"
    return b"".join(r.body for r in receiver.requests())


@pytest.mark.parametrize("make", SCENARIOS.values(), ids=SCENARIOS.keys())
async def test_off_sends_no_text_no_names_and_no_raw_ids(
    receiver: OTLPReceiver, make: Callable[[], Scenario]
) -> None:
    scenario = make()
    payload = await sent(receiver, scenario.events)

    for text in (*scenario.content, *scenario.names, *RAW_IDS, *SECRETS):
        assert text.encode() not in payload, f"{text!r} left the process under capture=off"


@pytest.mark.parametrize("make", SCENARIOS.values(), ids=SCENARIOS.keys())
async def test_metadata_sends_names_but_no_text(
    receiver: OTLPReceiver, make: Callable[[], Scenario]
) -> None:
    scenario = make()
    payload = await sent(receiver, scenario.events, capture="metadata")

    for name in scenario.names:
        assert name.encode() in payload
    for text in (*scenario.content, *RAW_IDS, *SECRETS):
        assert text.encode() not in payload, f"{text!r} left the process under capture=metadata"


async def test_full_sends_prompts_completions_and_tool_io(receiver: OTLPReceiver) -> None:
    await sent(receiver, agent_turn_with_tool().events, capture="full")

    spans = {(s.name, s.start_ns): s for s in exported_spans(receiver)}
    [tool] = [s for (name, _), s in spans.items() if name == "find_slots"]
    assert tool.attributes["gen_ai.tool.call.arguments"] == (
        '{"restaurant":"Luigi\'s","party":2,"day":"tomorrow"}'
    )
    assert tool.attributes["gen_ai.tool.call.result"] == '["19:00", "20:30"]'
    generations = sorted(
        (s for (name, _), s in spans.items() if name == "gpt-5-mini"), key=lambda s: s.start_ns
    )
    assert generations[0].attributes["gen_ai.prompt"].startswith("Book a table")
    assert generations[1].attributes["gen_ai.completion"].startswith("Luigi's has 19:00")
    [root] = [s for s in spans.values() if s.parent_span_id is None]
    assert root.attributes["session.id"] == "sess-alice"  # under full, ids travel as they are


async def test_full_masks_credentials_inside_a_tool_argument(receiver: OTLPReceiver) -> None:
    payload = await sent(receiver, tool_call_with_secrets().events, capture="full")

    for secret in SECRETS:
        assert secret.encode() not in payload
    [tool] = [s for s in exported_spans(receiver) if s.name == "deploy"]
    arguments = tool.attributes["gen_ai.tool.call.arguments"]
    assert "sk-[REDACTED]" in arguments
    assert "Bearer [REDACTED]" in arguments
    assert "[REDACTED PRIVATE KEY]" in arguments
    assert '"target":"staging"' in arguments  # the rest of the arguments still goes


async def test_full_values_are_cut_to_max_bytes(receiver: OTLPReceiver) -> None:
    await sent(receiver, agent_turn_with_tool().events, capture="full", max_bytes=64)

    values = [
        value
        for span in exported_spans(receiver)
        for key, value in span.attributes.items()
        if key in ("gen_ai.prompt", "gen_ai.completion")
    ]
    assert values
    assert all(len(v.encode()) <= 64 for v in values)
    assert any("[truncated" in v for v in values)
