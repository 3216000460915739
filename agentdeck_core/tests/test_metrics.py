"""Run metrics counted from recorded events, rendered in the Prometheus text format."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agentdeck import (
    Event,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunStarted,
    Usage,
    UsageReported,
)
from agentdeck.observing.metrics import RunMetrics

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def event(payload: object, seq: int, seconds: float = 0.0, run_id: str = "r1") -> Event:
    return Event.record(payload, seq=seq, run_id=run_id, ts=T0 + timedelta(seconds=seconds))  # type: ignore[arg-type]


def test_runs_tokens_and_durations_are_counted_and_rendered() -> None:
    metrics = RunMetrics()
    metrics.observe(
        [
            event(RunStarted(name="bot", invocable_kind="agent"), 0),
            event(UsageReported(model="m-1", usage=Usage(input_tokens=10, output_tokens=5)), 1, 1),
            event(RunCompleted(), 2, 2.5),
            event(RunStarted(name='we"ird', invocable_kind="workflow"), 0, run_id="r2"),
            event(RunInterrupted(interrupt_id="q"), 1, 1, run_id="r2"),
        ]
    )
    metrics.observer_drops["SlowObserver"] += 3

    text = metrics.render()

    assert 'agentdeck_runs_started_total{name="bot"} 1' in text
    assert 'agentdeck_runs_finished_total{name="bot",status="completed"} 1' in text
    assert 'agentdeck_run_duration_seconds_sum{name="bot",status="completed"} 2.5' in text
    assert 'agentdeck_tokens_total{model="m-1",direction="input"} 10' in text
    assert 'agentdeck_model_calls_total{model="m-1"} 1' in text
    assert 'agentdeck_run_suspensions_total{name="we\\"ird",status="waiting_answer"} 1' in text
    assert 'agentdeck_observer_dropped_events_total{observer="SlowObserver"} 3' in text
    assert text.count("# TYPE") == 7


async def test_a_deck_counts_what_it_records() -> None:
    from agentdeck import Deck, workflow
    from agentdeck.settings import Settings

    @workflow
    async def add(a: int, b: int) -> int:
        return a + b

    async with Deck(workflows=[add], settings=Settings(), observers=()) as deck:
        for i in range(3):
            await deck.run("add", {"a": i, "b": 1})
    assert deck.metrics.finished[("add", "completed")] == 3
    assert deck.metrics.started["add"] == 3


def test_counts_are_kept_per_name_and_status_and_only_runs_seen_starting_are_timed() -> None:
    metrics = RunMetrics()
    metrics.observe(
        [
            event(RunStarted(name="a", invocable_kind="workflow"), 0, run_id="r1"),
            event(RunStarted(name="a", invocable_kind="workflow"), 0, 1, run_id="r2"),
            event(RunStarted(name="b", invocable_kind="workflow"), 0, run_id="r3"),
            event(RunInterrupted(interrupt_id="q"), 1, 2, run_id="r2"),
        ]
    )
    metrics.observe([event(RunCompleted(), 1, 3, run_id="r1")])
    metrics.observe([event(RunFailed(error_code="x", message="m"), 1, 0.5, run_id="r3")])
    # a run started before this process counted: counted by its origin, but not timed
    elsewhere = Event.record(RunCompleted(), seq=4, run_id="r9", ts=T0, origin="a")
    metrics.observe([elsewhere])

    assert metrics.started == {"a": 2, "b": 1}
    assert metrics.finished == {("a", "completed"): 2, ("b", "failed"): 1}
    assert metrics.suspended == {("a", "waiting_answer"): 1}
    assert metrics.duration_count == {("a", "completed"): 1, ("b", "failed"): 1}
    assert metrics.duration_sum == {("a", "completed"): 3.0, ("b", "failed"): 0.5}
    text = metrics.render()
    assert 'agentdeck_run_duration_seconds_count{name="a",status="completed"} 1' in text
    assert 'agentdeck_runs_finished_total{name="a",status="completed"} 2' in text


def test_a_sink_is_told_every_increment_as_it_is_counted() -> None:
    told: list[tuple[object, ...]] = []

    class Sink:
        def run_started(self, name: str) -> None:
            told.append(("started", name))

        def run_finished(self, name: str, status: str, seconds: float | None) -> None:
            told.append(("finished", name, status, seconds))

        def run_suspended(self, name: str, status: str) -> None:
            told.append(("suspended", name, status))

        def model_called(self, model: str, input_tokens: int, output_tokens: int) -> None:
            told.append(("model", model, input_tokens, output_tokens))

        def events_dropped(self, observer: str, count: int) -> None:
            told.append(("dropped", observer, count))

    metrics = RunMetrics()
    metrics.add_sink(Sink())
    metrics.observe(
        [
            event(RunStarted(name="bot", invocable_kind="agent"), 0),
            event(UsageReported(model="m-1", usage=Usage(input_tokens=10, output_tokens=5)), 1, 1),
            event(RunInterrupted(interrupt_id="q"), 2, 1.5),
            event(RunCompleted(), 3, 2.5),
        ]
    )
    metrics.observe([Event.record(RunCompleted(), seq=4, run_id="r9", ts=T0, origin="a")])
    metrics.count_dropped("SlowObserver", 2)

    assert told == [
        ("started", "bot"),
        ("model", "m-1", 10, 5),
        ("suspended", "bot", "waiting_answer"),
        ("finished", "bot", "completed", 2.5),
        ("finished", "a", "completed", None),  # started elsewhere: counted, not timed
        ("dropped", "SlowObserver", 2),
    ]
