"""OTLP metrics derived from the rendered spans: runs by outcome, durations, tokens, drops.

Metric attributes (labels) are vocabulary only -- outcome, invocable kind, error code, token
type, and the model name when the content policy lets names out. Content never becomes a label:
labels are indexed and kept far longer than spans.
"""

from __future__ import annotations

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource

from agentdeck.observing.tracing.spans import AttributeValue, SpanRecord, SpanType
from agentdeck_otel.config import ExportConfig

__all__ = ["MetricExport"]

_TERMINAL = frozenset({"completed", "failed", "cancelled"})
_DURATION_BUCKETS = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
    163.84, 327.68, 655.36,
)  # fmt: skip
"""Seconds, doubling: the OpenTelemetry GenAI buckets, extended for long agent runs."""


class MetricExport:
    """One observer's meter provider and its instruments; exports periodically and at close."""

    def __init__(
        self, config: ExportConfig, resource: Resource, *, timeout: float, interval: float
    ) -> None:
        from agentdeck_otel import __version__

        reader = PeriodicExportingMetricReader(
            OTLPMetricExporter(
                endpoint=config.url("metrics"),
                headers=config.headers_for("metrics"),
                timeout=timeout,
                compression=Compression.Gzip,
            ),
            export_interval_millis=interval * 1000,
            export_timeout_millis=timeout * 1000,
        )
        self.provider = MeterProvider(resource=resource, metric_readers=[reader])
        meter = self.provider.get_meter("agentdeck", __version__)
        self._runs = meter.create_counter(
            "agentdeck.deck.runs", unit="{run}", description="Runs that ended, by outcome"
        )
        self._run_duration = meter.create_histogram(
            "agentdeck.run.duration",
            unit="s",
            description="Wall time from a run's start to its end, waits included",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self._model_duration = meter.create_histogram(
            "agentdeck.model_call.duration",
            unit="s",
            description="Duration of one model call",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self._tokens = meter.create_counter(
            "agentdeck.tokens", unit="{token}", description="Tokens used by model calls"
        )
        self._dropped = meter.create_counter(
            "agentdeck.observer.dropped",
            unit="{event}",
            description="Events an observer's queue dropped (slow, failing or closing)",
        )

    def record(self, record: SpanRecord) -> None:
        """Count what ``record`` tells: a run's outcome, or a model call's duration and tokens."""
        status = record.attributes.get("agentdeck.run.status")
        if status in _TERMINAL and not record.attributes.get("agentdeck.span.unfinished"):
            labels = _labels(
                record, "agentdeck.run.status", "agentdeck.invocable.kind", "agentdeck.error.code"
            )
            self._runs.add(1, labels)
            if record.run_root:
                self._run_duration.record(_seconds(record), labels)
        if record.type is SpanType.GENERATION:
            labels = _labels(record, "gen_ai.request.model")
            self._model_duration.record(_seconds(record), labels)
            if record.usage is not None:
                self._tokens.add(
                    record.usage.input_tokens, {**labels, "gen_ai.token.type": "input"}
                )
                self._tokens.add(
                    record.usage.output_tokens, {**labels, "gen_ai.token.type": "output"}
                )

    def count_dropped(self, observer: str, count: int) -> None:
        if count > 0:
            self._dropped.add(count, {"agentdeck.observer": observer})

    def flush(self, timeout_seconds: float) -> bool:
        return self.provider.force_flush(timeout_millis=max(1.0, timeout_seconds * 1000))

    def shutdown(self, timeout_seconds: float) -> None:
        self.provider.shutdown(timeout_millis=max(1.0, timeout_seconds * 1000))


def _labels(record: SpanRecord, *keys: str) -> dict[str, AttributeValue]:
    return {key: record.attributes[key] for key in keys if key in record.attributes}


def _seconds(record: SpanRecord) -> float:
    return (record.end - record.start).total_seconds()
