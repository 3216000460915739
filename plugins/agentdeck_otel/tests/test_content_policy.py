"""The content-capture policy holds in the bytes that actually leave the process."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import pytest
from otlp_trees import exported_spans

from agentdeck.model.clock import ManualClock
from agentdeck.model.content import TextBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    MessageCompleted,
    RunCompleted,
    RunStarted,
    Usage,
    UsageReported,
)
from agentdeck.testing.otlp import OTLPReceiver
from agentdeck.testing.trace_scenarios import (
    EPOCH,
    SECRETS,
    RunLog,
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


async def test_full_sends_messages_and_tool_io_as_the_conventions_name_them(
    receiver: OTLPReceiver,
) -> None:
    await sent(receiver, agent_turn_with_tool().events, capture="full")

    spans = exported_spans(receiver)
    [tool] = [s for s in spans if s.name == "execute_tool find_slots"]
    assert tool.attributes["gen_ai.tool.call.arguments"] == (
        '{"restaurant":"Luigi\'s","party":2,"day":"tomorrow"}'
    )
    assert tool.attributes["gen_ai.tool.call.result"] == '["19:00", "20:30"]'
    first, second = sorted(
        (s for s in spans if s.name == "chat gpt-5-mini"), key=lambda s: s.start_ns
    )
    [asked] = json.loads(first.attributes["gen_ai.input.messages"])
    assert asked["role"] == "user"
    assert asked["parts"][0]["type"] == "text"
    assert asked["parts"][0]["content"].startswith("Book a table")
    assert "gen_ai.output.messages" not in first.attributes  # it answered with a tool call
    user, call, response = json.loads(second.attributes["gen_ai.input.messages"])
    assert user == asked
    assert call == {
        "role": "assistant",
        "parts": [
            {
                "type": "tool_call",
                "id": "call-1",
                "name": "find_slots",
                "arguments": {"restaurant": "Luigi's", "party": 2, "day": "tomorrow"},
            }
        ],
    }
    assert response == {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "call-1", "response": '["19:00", "20:30"]'}],
    }
    [answer] = json.loads(second.attributes["gen_ai.output.messages"])
    assert answer["role"] == "assistant" and answer["finish_reason"] == "stop"
    assert answer["parts"][0]["content"].startswith("Luigi's has 19:00")
    [root] = [s for s in spans if s.parent_span_id is None]
    assert root.attributes["session.id"] == "sess-alice"  # under full, ids travel as they are
    assert json.loads(root.attributes["gen_ai.output.messages"])[0]["role"] == "assistant"
    removed = {"gen_ai.prompt", "gen_ai.completion"}  # no longer in the conventions
    assert not any(removed & set(s.attributes) for s in spans)


async def test_full_content_outside_the_conventions_goes_under_agentdeck(
    receiver: OTLPReceiver,
) -> None:
    await sent(receiver, workflow_with_interrupt().events, capture="full")

    spans = exported_spans(receiver)
    [approval] = [s for s in spans if s.name == "approval"]
    assert "agentdeck.input" in approval.attributes
    assert "agentdeck.output" in approval.attributes
    [root] = [s for s in spans if s.parent_span_id is None]
    assert "agentdeck.input" in root.attributes  # a workflow's input is data, not a message


async def test_full_masks_credentials_inside_a_tool_argument(receiver: OTLPReceiver) -> None:
    payload = await sent(receiver, tool_call_with_secrets().events, capture="full")

    for secret in SECRETS:
        assert secret.encode() not in payload
    [tool] = [s for s in exported_spans(receiver) if s.name == "execute_tool deploy"]
    arguments = tool.attributes["gen_ai.tool.call.arguments"]
    assert "sk-[REDACTED]" in arguments
    assert "Bearer [REDACTED]" in arguments
    assert "[REDACTED PRIVATE KEY]" in arguments
    assert '"target":"staging"' in arguments  # the rest of the arguments still goes


def long_agent_turn() -> list[Event]:
    log = RunLog("run-long", ManualClock(EPOCH), origin="talker")
    log.add(RunStarted(name="talker", invocable_kind="agent", input=[TextBlock(text="ask " * 50)]))
    log.add(MessageCompleted(message_id="m", text="answer " * 50), after=0.5)
    log.add(UsageReported(model="m-1", usage=Usage(input_tokens=9, output_tokens=9)))
    log.add(RunCompleted(output=[TextBlock(text="answer " * 50)]))
    return log.events


async def test_full_values_are_cut_to_max_bytes(receiver: OTLPReceiver) -> None:
    await sent(receiver, long_agent_turn(), capture="full", max_bytes=64)

    values = [
        part["content"]
        for span in exported_spans(receiver)
        for key, value in span.attributes.items()
        if key in ("gen_ai.input.messages", "gen_ai.output.messages")
        for message in json.loads(value)
        for part in message["parts"]
        if part["type"] == "text"
    ]
    assert values
    assert all(len(v.encode()) <= 64 for v in values)
    assert any("[truncated" in v for v in values)
