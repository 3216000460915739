"""OTLP metrics derived from the rendered spans: the GenAI conventions' model-call metrics, and
AgentDeck's own runs by outcome, run durations and dropped events.

Model calls are measured as the GenAI semantic conventions define:
``gen_ai.client.token.usage`` (a histogram of tokens per call, ``gen_ai.token.type`` ``input`` or
``output``) and ``gen_ai.client.operation.duration`` (seconds per call), each labelled with
``gen_ai.operation.name``, ``gen_ai.provider.name``, ``gen_ai.request.model`` (when the content
policy lets names out) and ``error.type`` (a failed call). What the conventions do not cover
keeps its ``agentdeck.*`` name: ``agentdeck.deck.runs``, ``agentdeck.run.duration`` and
``agentdeck.observer.dropped``.

Metric attributes (labels) are vocabulary only. Content never becomes a label: labels are
indexed and kept far longer than spans.
"""

from __future__ import annotations

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.semconv._incubating.metrics.gen_ai_metrics import (
    GEN_AI_CLIENT_OPERATION_DURATION,
    GEN_AI_CLIENT_TOKEN_USAGE,
)
from opentelemetry.semconv.attributes.error_attributes import ERROR_TYPE

from agentdeck.observing.tracing import attributes as vocabulary
from agentdeck.observing.tracing.spans import AttributeValue, SpanLevel, SpanRecord, SpanType
from agentdeck_otel.config import ExportConfig

__all__ = ["MetricExport"]

_TERMINAL = frozenset({"completed", "failed", "cancelled"})
_DURATION_BUCKETS = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
    163.84, 327.68, 655.36,
)  # fmt: skip
"""Seconds, doubling: the OpenTelemetry GenAI buckets, extended for long agent runs."""
_CALL_DURATION_BUCKETS = _DURATION_BUCKETS[:14]
"""Seconds: the buckets the GenAI conventions advise for ``gen_ai.client.operation.duration``."""
_TOKEN_BUCKETS = tuple(4**power for power in range(14))
"""Tokens, 1 to 4**13: the buckets the conventions advise for ``gen_ai.client.token.usage``."""


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
        self._call_duration = meter.create_histogram(
            GEN_AI_CLIENT_OPERATION_DURATION,
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=_CALL_DURATION_BUCKETS,
        )
        self._tokens = meter.create_histogram(
            GEN_AI_CLIENT_TOKEN_USAGE,
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )
        self._dropped = meter.create_counter(
            "agentdeck.observer.dropped",
            unit="{event}",
            description="Events an observer's queue dropped (slow, failing or closing)",
        )

    def record(self, record: SpanRecord) -> None:
        """Count what ``record`` tells: a run's outcome, or a model call's duration and tokens."""
        status = record.attributes.get(vocabulary.RUN_STATUS)
        if status in _TERMINAL and not record.attributes.get(vocabulary.SPAN_UNFINISHED):
            labels = _labels(
                record, vocabulary.RUN_STATUS, vocabulary.INVOCABLE_KIND, vocabulary.ERROR_CODE
            )
            self._runs.add(1, labels)
            if record.run_root:
                self._run_duration.record(_seconds(record), labels)
        if record.type is SpanType.GENERATION:
            labels = _labels(
                record,
                gen_ai.GEN_AI_OPERATION_NAME,
                gen_ai.GEN_AI_PROVIDER_NAME,
                gen_ai.GEN_AI_REQUEST_MODEL,
            )
            if record.level is SpanLevel.ERROR:
                labels[ERROR_TYPE] = "_OTHER"
            self._call_duration.record(_seconds(record), labels)
            if record.usage is not None:
                self._tokens.record(
                    record.usage.input_tokens, {**labels, gen_ai.GEN_AI_TOKEN_TYPE: "input"}
                )
                self._tokens.record(
                    record.usage.output_tokens, {**labels, gen_ai.GEN_AI_TOKEN_TYPE: "output"}
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
