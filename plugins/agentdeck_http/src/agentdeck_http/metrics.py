"""``GET /metrics`` across worker processes: prometheus-client's multiprocess mode.

A deck counts the runs its own process plays (:class:`agentdeck.observing.metrics.RunMetrics`).
Behind ``agentdeck serve --workers N`` (or ``uvicorn --workers``, gunicorn) a scrape reaches one
worker, so a per-process count is wrong. When ``PROMETHEUS_MULTIPROC_DIR`` names a directory --
the variable prometheus-client itself reads, set for every worker, empty when the server
starts -- each worker writes its counts there as it counts them (a :class:`MultiprocessSink` on
its deck's metrics) and ``/metrics`` renders the sum of every worker's files, the workers that
have exited included: one scrape counts every run. Without it, ``/metrics`` is the process's
own count, as before.

The families and labels are the same either way (``agentdeck_runs_started_total{name}``,
``agentdeck_runs_finished_total{name,status}``, ``agentdeck_run_suspensions_total``,
``agentdeck_run_duration_seconds`` (a summary: ``_sum``/``_count``), ``agentdeck_model_calls_total
{model}``, ``agentdeck_tokens_total{model,direction}``,
``agentdeck_observer_dropped_events_total{observer}``), so dashboards need not care.

prometheus-client keeps one file per metric kind and process id, and one in-process value per
metric and label set: the metric objects here are therefore created once per process and shared
by every deck in it (process-wide state, because the files it mirrors are per process).
"""

from __future__ import annotations

import os
import threading
import weakref
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Summary, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from agentdeck.observing.metrics import RunMetrics

__all__ = [
    "MULTIPROC_ENV",
    "MultiprocessSink",
    "attach",
    "multiprocess_dir",
    "render",
]

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
"""The directory prometheus-client's multiprocess mode writes each process's values to."""


def multiprocess_dir() -> str | None:
    """The multiprocess directory when the mode is on (prometheus-client reads the process
    environment, not a deck's settings: the mode is the process's)."""
    directory = os.environ.get(MULTIPROC_ENV, "").strip()
    return directory or None


@dataclass(frozen=True, slots=True)
class _Families:
    started: Counter
    finished: Counter
    suspended: Counter
    duration: Summary
    model_calls: Counter
    tokens: Counter
    dropped: Counter


_FAMILIES: _Families | None = None
_LOCK = threading.Lock()


def _families() -> _Families:
    global _FAMILIES
    with _LOCK:
        if _FAMILIES is None:
            # registry=None: the multiprocess collector reads the files, not a registry.
            _FAMILIES = _Families(
                started=Counter(
                    "agentdeck_runs_started",
                    "Runs started, by invocable name.",
                    ["name"],
                    registry=None,
                ),
                finished=Counter(
                    "agentdeck_runs_finished",
                    "Runs ended, by name and status.",
                    ["name", "status"],
                    registry=None,
                ),
                suspended=Counter(
                    "agentdeck_run_suspensions",
                    "Runs parked, by name and status.",
                    ["name", "status"],
                    registry=None,
                ),
                duration=Summary(
                    "agentdeck_run_duration_seconds",
                    "Wall time from run.started to the terminal event, for runs started here.",
                    ["name", "status"],
                    registry=None,
                ),
                model_calls=Counter(
                    "agentdeck_model_calls",
                    "Model calls reported, by model.",
                    ["model"],
                    registry=None,
                ),
                tokens=Counter(
                    "agentdeck_tokens",
                    "Tokens reported, by model and direction.",
                    ["model", "direction"],
                    registry=None,
                ),
                dropped=Counter(
                    "agentdeck_observer_dropped_events",
                    "Events an observer's bounded queue dropped (slow, failing or disabled "
                    "observer).",
                    ["observer"],
                    registry=None,
                ),
            )
        return _FAMILIES


class MultiprocessSink:
    """Writes a deck's increments to this process's multiprocess files as they are counted."""

    def __init__(self) -> None:
        self._families = _families()

    def run_started(self, name: str) -> None:
        self._families.started.labels(name=name).inc()

    def run_finished(self, name: str, status: str, seconds: float | None) -> None:
        self._families.finished.labels(name=name, status=status).inc()
        if seconds is not None:
            self._families.duration.labels(name=name, status=status).observe(seconds)

    def run_suspended(self, name: str, status: str) -> None:
        self._families.suspended.labels(name=name, status=status).inc()

    def model_called(self, model: str, input_tokens: int, output_tokens: int) -> None:
        families = self._families
        families.model_calls.labels(model=model).inc()
        families.tokens.labels(model=model, direction="input").inc(input_tokens)
        families.tokens.labels(model=model, direction="output").inc(output_tokens)

    def events_dropped(self, observer: str, count: int) -> None:
        self._families.dropped.labels(observer=observer).inc(count)


_ATTACHED: weakref.WeakValueDictionary[int, RunMetrics] = weakref.WeakValueDictionary()
"""The decks' metrics already writing to the files (a binding built twice adds one sink)."""


def attach(metrics: RunMetrics) -> None:
    """Mirror ``metrics`` into this process's multiprocess files, when the mode is on."""
    if multiprocess_dir() is None:
        return
    with _LOCK:
        if _ATTACHED.get(id(metrics)) is metrics:
            return
        _ATTACHED[id(metrics)] = metrics
    metrics.add_sink(MultiprocessSink())


def render(metrics: RunMetrics) -> str:
    """What ``GET /metrics`` answers: every worker's counts summed (multiprocess mode), else
    this process's."""
    directory = multiprocess_dir()
    if directory is None:
        return metrics.render()
    _ = metrics.observer_drops  # bring this worker's drop counts up to date in its files
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
    return generate_latest(registry).decode("utf-8")
