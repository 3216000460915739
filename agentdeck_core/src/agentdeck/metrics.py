"""In-process run metrics, counted from the events this deck records, scrapeable as text.

Every event the runtime appends passes through :meth:`RunMetrics.observe` (plain counter
arithmetic, no I/O), and :meth:`RunMetrics.render` writes the Prometheus text exposition format,
which the HTTP binding serves at ``/metrics``. The numbers cover the runs this process played;
the event log remains the record (an OTLP exporter, ``agentdeck-otel``, sends the same measures
to a collector).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from agentdeck.events import Event, RunStarted, UsageReported

__all__ = ["RunMetrics"]

_FINISHED = {"run.completed": "completed", "run.failed": "failed", "run.cancelled": "cancelled"}
_SUSPENDED = {"run.paused": "paused", "run.interrupted": "waiting_answer"}
_COUNTED = frozenset({"run.started", *_FINISHED, *_SUSPENDED, "usage.reported"})
"""The kinds any counter reads; every other event (deltas, tool calls...) costs one lookup."""


@dataclass
class RunMetrics:
    """Counters and duration sums for the runs one deck recorded."""

    started: Counter[str] = field(default_factory=Counter)
    finished: Counter[tuple[str, str]] = field(default_factory=Counter)
    suspended: Counter[tuple[str, str]] = field(default_factory=Counter)
    duration_sum: dict[tuple[str, str], float] = field(default_factory=dict)
    duration_count: Counter[tuple[str, str]] = field(default_factory=Counter)
    model_calls: Counter[str] = field(default_factory=Counter)
    tokens: Counter[tuple[str, str]] = field(default_factory=Counter)
    observer_drops: Counter[str] = field(default_factory=Counter)
    _open: dict[str, tuple[str, datetime]] = field(default_factory=dict, repr=False)

    def observe(self, events: Iterable[Event]) -> None:
        """Count recorded events (called for every batch the runtime appends)."""
        for event in events:
            kind = event.kind
            if kind not in _COUNTED:
                continue
            if kind == "run.started":
                name = event.payload.name if isinstance(event.payload, RunStarted) else "?"
                self.started[name] += 1
                self._open[event.run_id] = (name, event.ts)
            elif kind in _FINISHED:
                name, since = self._open.pop(event.run_id, (event.origin or "?", None))
                status = _FINISHED[kind]
                self.finished[(name, status)] += 1
                if since is not None:
                    elapsed = (event.ts - since).total_seconds()
                    key = (name, status)
                    self.duration_sum[key] = self.duration_sum.get(key, 0.0) + elapsed
                    self.duration_count[(name, status)] += 1
            elif kind in _SUSPENDED:
                name = self._open.get(event.run_id, (event.origin or "?", None))[0]
                self.suspended[(name, _SUSPENDED[kind])] += 1
            elif isinstance(event.payload, UsageReported):
                model = event.payload.model or "unknown"
                self.model_calls[model] += 1
                self.tokens[(model, "input")] += event.payload.usage.input_tokens
                self.tokens[(model, "output")] += event.payload.usage.output_tokens

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
        for key in sorted(self.duration_count):
            labels = f"name={_q(key[0])},status={_q(key[1])}"
            lines.append(f"agentdeck_run_duration_seconds_sum{{{labels}}} {self.duration_sum[key]}")
            lines.append(
                f"agentdeck_run_duration_seconds_count{{{labels}}} {self.duration_count[key]}"
            )
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
