"""OTLP metrics OTelObserver exports: the GenAI conventions' model-call duration and token usage,
AgentDeck's runs by outcome, run durations and dropped events -- with vocabulary labels only."""

from __future__ import annotations

from typing import Any

from otlp_trees import exported_metrics, point_attributes

from agentdeck.testing.otlp import OTLPReceiver
from agentdeck.testing.trace_scenarios import agent_turn_with_tool, failed_run
from agentdeck_otel import OTelObserver


async def run_both(receiver: OTLPReceiver, **options: Any) -> dict[str, Any]:
    observer = OTelObserver(receiver.url, signals=("metrics",), **options)
    await observer.start()
    for event in [*agent_turn_with_tool().events, *failed_run().events]:
        await observer.emit(event)
    observer.count_dropped("ConsoleObserver()", 3)
    await observer.close()
    assert receiver.requests("/v1/traces") == []  # only the chosen signal is exported
    return exported_metrics(receiver)


async def test_runs_are_counted_by_outcome(receiver: OTLPReceiver) -> None:
    metrics = await run_both(receiver)

    [runs] = metrics["agentdeck.deck.runs"]
    counted = {
        point_attributes(p)["agentdeck.run.status"]: (p.as_int, point_attributes(p))
        for p in runs.sum.data_points
    }
    assert counted["completed"][0] == 1
    assert counted["failed"][0] == 1
    assert counted["failed"][1]["agentdeck.error.code"] == "tool_error"
    assert counted["failed"][1]["agentdeck.invocable.kind"] == "agent"


async def test_run_and_model_call_durations_are_histograms_in_seconds(
    receiver: OTLPReceiver,
) -> None:
    metrics = await run_both(receiver)

    [runs] = metrics["agentdeck.run.duration"]
    assert runs.unit == "s"
    assert sum(p.count for p in runs.histogram.data_points) == 2
    assert round(sum(p.sum for p in runs.histogram.data_points), 6) == 1.5 + 0.55
    [calls] = metrics["gen_ai.client.operation.duration"]
    assert calls.unit == "s"
    assert sum(p.count for p in calls.histogram.data_points) == 3
    assert round(sum(p.sum for p in calls.histogram.data_points), 6) == 0.8 + 0.45 + 0.5
    assert {
        (point_attributes(p)["gen_ai.operation.name"], point_attributes(p)["gen_ai.provider.name"])
        for p in calls.histogram.data_points
    } == {("chat", "openai")}
    assert list(calls.histogram.data_points[0].explicit_bounds)[:3] == [0.01, 0.02, 0.04]


async def test_token_usage_is_a_histogram_by_token_type(receiver: OTLPReceiver) -> None:
    metrics = await run_both(receiver)

    [tokens] = metrics["gen_ai.client.token.usage"]
    assert tokens.unit == "{token}"
    totals: dict[str, tuple[int, float]] = {}
    for point in tokens.histogram.data_points:
        kind = point_attributes(point)["gen_ai.token.type"]
        count, summed = totals.get(kind, (0, 0.0))
        totals[kind] = (count + point.count, summed + point.sum)
    assert totals == {"input": (3, 412 + 480 + 120), "output": (3, 31 + 22 + 12)}
    assert list(tokens.histogram.data_points[0].explicit_bounds)[:4] == [1, 4, 16, 64]
    assert "agentdeck.tokens" not in metrics and "agentdeck.model_call.duration" not in metrics


async def test_events_another_observer_dropped_are_counted(receiver: OTLPReceiver) -> None:
    metrics = await run_both(receiver)

    [dropped] = metrics["agentdeck.observer.dropped"]
    [point] = dropped.sum.data_points
    assert point.as_int == 3
    assert point_attributes(point) == {"agentdeck.observer": "ConsoleObserver()"}


async def test_model_names_label_metrics_only_when_names_are_captured(
    receiver: OTLPReceiver,
) -> None:
    metrics = await run_both(receiver)  # capture="off"
    assert all(
        "gen_ai.request.model" not in point_attributes(p)
        for p in metrics["gen_ai.client.token.usage"][0].histogram.data_points
    )

    receiver.clear()
    metrics = await run_both(receiver, capture="metadata")
    assert {
        point_attributes(p)["gen_ai.request.model"]
        for p in metrics["gen_ai.client.token.usage"][0].histogram.data_points
    } == {"gpt-5-mini"}
