"""In-process run metrics, counted from the events this deck records, scrapeable as text.

Every event the runtime appends passes through :meth:`RunMetrics.observe` (plain counter
arithmetic, no I/O), and :meth:`RunMetrics.render` writes the Prometheus text exposition format,
which the HTTP binding serves at ``/metrics``. The numbers cover the runs this process played;
the event log remains the record (an OTLP exporter, ``agentdeck-otel``, sends the same measures
to a collector).

A server of several worker processes needs every worker's counts in one scrape. A
:class:`MetricsSink` added with :meth:`RunMetrics.add_sink` is told each increment as it is
counted -- the HTTP binding adds one writing to prometheus-client's multiprocess files when
``PROMETHEUS_MULTIPROC_DIR`` is set, and renders the sum of every worker's files instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from agentdeck.model.events import Event
from agentdeck.model.payloads import RunStarted, UsageReported

__all__ = ["COUNTED_KINDS", "MetricsSink", "RunMetrics"]

_FINISHED = {"run.completed": "completed", "run.failed": "failed", "run.cancelled": "cancelled"}
_SUSPENDED = {"run.paused": "paused", "run.interrupted": "waiting_answer"}
COUNTED_KINDS = frozenset({"run.started", *_FINISHED, *_SUSPENDED, "usage.reported"})
"""The kinds any counter reads; every other event (deltas, tool calls...) costs one lookup."""


class MetricsSink(Protocol):
    """Told every increment a :class:`RunMetrics` counts, as it counts it (never blocks)."""

    def run_started(self, name: str) -> None:
        """A run of ``name`` started."""

    def run_finished(self, name: str, status: str, seconds: float | None) -> None:
        """A run of ``name`` ended with ``status``, after ``seconds`` (``None``: it started in
        another process, so it is counted but not timed)."""

    def run_suspended(self, name: str, status: str) -> None:
        """A run of ``name`` parked (``paused`` or ``waiting_answer``)."""

    def model_called(self, model: str, input_tokens: int, output_tokens: int) -> None:
        """A model call reported its usage."""

    def events_dropped(self, observer: str, count: int) -> None:
        """``count`` more events did not reach the observer named ``observer``."""


@dataclass(slots=True, eq=False)
class _Tally:
    """One invocable's counts. Kept per name, so that counting a run's start and its end each
    touch one small object rather than several counters keyed by ``(name, status)`` tuples."""

    started: int = 0
    ended: dict[str, list[float]] = field(default_factory=dict)
    """status -> ``[runs, seconds summed, runs timed]`` (a run started elsewhere is untimed)."""
    suspended: dict[str, int] = field(default_factory=dict)


@dataclass
class RunMetrics:
    """Counters and duration sums for the runs one deck recorded.

    ``started``, ``finished``, ``suspended``, ``duration_sum`` and ``duration_count`` are read
    from per-invocable tallies when asked for (each read builds them afresh).
    """

    model_calls: Counter[str] = field(default_factory=Counter)
    tokens: Counter[tuple[str, str]] = field(default_factory=Counter)
    _tallies: dict[str, _Tally] = field(default_factory=dict, repr=False)
    _open: dict[str, tuple[_Tally, datetime, str]] = field(default_factory=dict, repr=False)
    _observer_drops: Counter[str] = field(default_factory=Counter, repr=False)
    _drop_sources: list[Callable[[], None]] = field(default_factory=list, repr=False)
    _sinks: list[MetricsSink] = field(default_factory=list, repr=False)

    @property
    def started(self) -> Counter[str]:
        """Runs started, by invocable name."""
        return Counter({name: t.started for name, t in self._tallies.items() if t.started})

    @property
    def finished(self) -> Counter[tuple[str, str]]:
        """Runs ended, by ``(name, status)``."""
        return Counter(
            {
                (name, status): int(end[0])
                for name, tally in self._tallies.items()
                for status, end in tally.ended.items()
            }
        )

    @property
    def suspended(self) -> Counter[tuple[str, str]]:
        """Runs parked, by ``(name, status)``."""
        return Counter(
            {
                (name, status): count
                for name, tally in self._tallies.items()
                for status, count in tally.suspended.items()
            }
        )

    @property
    def duration_sum(self) -> dict[tuple[str, str], float]:
        """Seconds from ``run.started`` to the terminal event, summed by ``(name, status)``, over
        the runs started here."""
        return {
            (name, status): end[1]
            for name, tally in self._tallies.items()
            for status, end in tally.ended.items()
            if end[2]
        }

    @property
    def duration_count(self) -> Counter[tuple[str, str]]:
        """How many runs :attr:`duration_sum` sums, by ``(name, status)``."""
        return Counter(
            {
                (name, status): int(end[2])
                for name, tally in self._tallies.items()
                for status, end in tally.ended.items()
                if end[2]
            }
        )

    @property
    def observer_drops(self) -> Counter[str]:
        """Events each observer's queue dropped, by observer class name; brought up to date
        first (an observer hub counts what a skipped observer missed only when asked)."""
        for bring_up_to_date in self._drop_sources:
            bring_up_to_date()
        return self._observer_drops

    def count_dropped(self, observer: str, count: int) -> None:
        """``count`` more events the observer named ``observer`` did not get."""
        self._observer_drops[observer] += count
        for sink in self._sinks:
            sink.events_dropped(observer, count)

    def add_sink(self, sink: MetricsSink) -> None:
        """Tell ``sink`` every increment from now on (what was counted before is not replayed)."""
        self._sinks.append(sink)

    def add_drop_source(self, bring_up_to_date: Callable[[], None]) -> None:
        """Call ``bring_up_to_date`` (which counts through :meth:`count_dropped`) before the
        drop counts are read."""
        self._drop_sources.append(bring_up_to_date)

    def _tally(self, name: str) -> _Tally:
        tally = self._tallies.get(name)
        if tally is None:
            tally = self._tallies[name] = _Tally()
        return tally

    def observe(self, events: Iterable[Event]) -> None:
        """Count recorded events (called for every batch the runtime appends)."""
        for event in events:
            kind = event.kind
            if kind not in COUNTED_KINDS:
                continue
            sinks = self._sinks
            if kind == "run.started":
                payload = event.payload
                name = payload.name if isinstance(payload, RunStarted) else "?"
                tally = self._tally(name)
                tally.started += 1
                self._open[event.run_id] = (tally, event.ts, name)
                for sink in sinks:
                    sink.run_started(name)
            elif kind in _FINISHED:
                opened = self._open.pop(event.run_id, None)
                name = opened[2] if opened is not None else event.origin or "?"
                tally = opened[0] if opened is not None else self._tally(name)
                status = _FINISHED[kind]
                end = tally.ended.get(status)
                if end is None:
                    end = tally.ended[status] = [0, 0.0, 0]
                end[0] += 1
                seconds = None
                if opened is not None:
                    seconds = (event.ts - opened[1]).total_seconds()
                    end[1] += seconds
                    end[2] += 1
                for sink in sinks:
                    sink.run_finished(name, status, seconds)
            elif kind in _SUSPENDED:
                opened = self._open.get(event.run_id)
                name = opened[2] if opened is not None else event.origin or "?"
                tally = opened[0] if opened is not None else self._tally(name)
                status = _SUSPENDED[kind]
                tally.suspended[status] = tally.suspended.get(status, 0) + 1
                for sink in sinks:
                    sink.run_suspended(name, status)
            elif isinstance(event.payload, UsageReported):
                model = event.payload.model or "unknown"
                usage = event.payload.usage
                self.model_calls[model] += 1
                self.tokens[(model, "input")] += usage.input_tokens
                self.tokens[(model, "output")] += usage.output_tokens
                for sink in sinks:
                    sink.model_called(model, usage.input_tokens, usage.output_tokens)

    def render(self) -> str:
        """The Prometheus text exposition (format 0.0.4) of every counter."""
        lines: list[str] = []

        def family(name: str, kind: str, help_text: str) -> None:
            lines.append(f"# HELP {name} {help_text}")
            lines.append(f"# TYPE {name} {kind}")

        family("agentdeck_runs_started_total", "counter", "Runs started, by invocable name.")
        for name, value in sorted(self.started.items()):
            lines.append(f"agentdeck_runs_started_total{{name={_q(name)}}} {value}")
        family("agentdeck_runs_finished_total", "counter", "Runs ended, by name and status.")
        for (name, status), value in sorted(self.finished.items()):
            lines.append(
                f"agentdeck_runs_finished_total{{name={_q(name)},status={_q(status)}}} {value}"
            )
        family("agentdeck_run_suspensions_total", "counter", "Runs parked, by name and status.")
        for (name, status), value in sorted(self.suspended.items()):
            lines.append(
                f"agentdeck_run_suspensions_total{{name={_q(name)},status={_q(status)}}} {value}"
            )
        family(
            "agentdeck_run_duration_seconds",
            "summary",
            "Wall time from run.started to the terminal event, for runs started here.",
        )
        duration_sum, duration_count = self.duration_sum, self.duration_count
        for key in sorted(duration_count):
            labels = f"name={_q(key[0])},status={_q(key[1])}"
            lines.append(f"agentdeck_run_duration_seconds_sum{{{labels}}} {duration_sum[key]}")
            lines.append(f"agentdeck_run_duration_seconds_count{{{labels}}} {duration_count[key]}")
        family("agentdeck_model_calls_total", "counter", "Model calls reported, by model.")
        for model, value in sorted(self.model_calls.items()):
            lines.append(f"agentdeck_model_calls_total{{model={_q(model)}}} {value}")
        family("agentdeck_tokens_total", "counter", "Tokens reported, by model and direction.")
        for (model, direction), value in sorted(self.tokens.items()):
            lines.append(
                f"agentdeck_tokens_total{{model={_q(model)},direction={_q(direction)}}} {value}"
            )
        family(
            "agentdeck_observer_dropped_events_total",
            "counter",
            "Events an observer's bounded queue dropped (slow, failing or disabled observer).",
        )
        for observer, value in sorted(self.observer_drops.items()):
            lines.append(
                f"agentdeck_observer_dropped_events_total{{observer={_q(observer)}}} {value}"
            )
        return "\n".join(lines) + "\n"


def _q(value: str) -> str:
    """A label value, quoted and escaped as the exposition format requires."""
    escaped = value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
    return f'"{escaped}"'
