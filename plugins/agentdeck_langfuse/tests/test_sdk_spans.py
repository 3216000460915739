"""sdk_spans=True adds the OpenAI Agents SDK's raw spans (via OpenInference) as separate traces.

A real ``agents.Runner.run`` with the SDK's own ``ScriptedModel`` produces the SDK spans; the
Langfuse SDK ships them to the loopback receiver with the semantic trace.
"""

from __future__ import annotations

from agents import Agent, Runner, function_tool
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from otlp_trees import exported_spans

from agentdeck.observing.tracing.ids import trace_id_for
from agentdeck.settings import Settings
from agentdeck.testing.otlp import OTLPReceiver
from agentdeck.testing.trace_scenarios import agent_turn_with_tool
from agentdeck_langfuse import LangfuseObserver

OPENINFERENCE_SCOPE = "openinference.instrumentation.openai_agents"


@function_tool
def find_slots(restaurant: str) -> str:
    """Free tables at a restaurant."""
    return f"{restaurant}: 19:00, 20:30"


def scripted_agent() -> Agent:
    model = ScriptedModel(
        [
            ModelStep(output=[function_call("find_slots", {"restaurant": "Luigi"}, call_id="c1")]),
            ModelStep(output=[assistant_message("19:00 is free")]),
        ]
    )
    return Agent(name="booking", instructions="Book tables.", model=model, tools=[find_slots])


async def test_the_sdk_spans_arrive_as_a_separate_trace(
    receiver: OTLPReceiver, settings: Settings
) -> None:
    observer = LangfuseObserver(sdk_spans=True, settings=settings)
    await observer.start()
    try:
        result = await Runner.run(scripted_agent(), "a table at Luigi's")
        for event in agent_turn_with_tool().events:
            await observer.emit(event)
    finally:
        await observer.close()

    assert result.final_output == "19:00 is free"
    spans = exported_spans(receiver, "/api/public/otel/v1/traces")
    raw = [s for s in spans if s.scope == OPENINFERENCE_SCOPE]
    semantic = [s for s in spans if s.scope == "agentdeck"]
    assert {s.trace_id for s in semantic} == {trace_id_for("run-agent-1")}
    assert raw, "the Agents SDK's spans were exported"
    assert trace_id_for("run-agent-1") not in {s.trace_id for s in raw}
    assert {"booking", "find_slots"} <= {s.name for s in raw}
    [tool] = [s for s in raw if s.name == "find_slots"]
    assert "Luigi" in str(tool.attributes)  # the raw layer carries what the tool received


async def test_without_sdk_spans_only_the_semantic_trace_is_sent(
    receiver: OTLPReceiver, settings: Settings
) -> None:
    observer = LangfuseObserver(settings=settings)
    await observer.start()
    try:
        await Runner.run(scripted_agent(), "a table at Luigi's")
        for event in agent_turn_with_tool().events:
            await observer.emit(event)
    finally:
        await observer.close()

    spans = exported_spans(receiver, "/api/public/otel/v1/traces")
    assert {s.scope for s in spans} == {"agentdeck"}


async def test_closing_removes_the_instrumentation(
    receiver: OTLPReceiver, settings: Settings
) -> None:
    observer = LangfuseObserver(sdk_spans=True, settings=settings)
    await observer.start()
    await observer.close()
    receiver.clear()

    await Runner.run(scripted_agent(), "a table at Luigi's")
    after = LangfuseObserver(settings=settings)  # flushes the same key's pipeline
    await after.start()
    await after.close()

    assert exported_spans(receiver, "/api/public/otel/v1/traces") == []
