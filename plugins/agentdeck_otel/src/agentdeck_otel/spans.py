"""Write rendered spans to OTLP/HTTP through the OpenTelemetry SDK, on a private provider.

Each :class:`~agentdeck.observing.tracing.spans.SpanRecord` becomes one OpenTelemetry span with
the record's start and end times, its parent, and the ids the renderer derived from the run ids (so
spans a child run or another process exported line up). The provider belongs to the observer and is
never installed as the global one: an application's own OpenTelemetry setup is left alone.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.trace import Status, StatusCode

from agentdeck.observing.tracing.spans import AttributeValue, SpanLevel, SpanRecord, SpanType
from agentdeck_otel.config import ExportConfig

__all__ = ["SpanExport"]

_CONTENT_KEYS = {
    SpanType.TOOL: ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result"),
}
_DEFAULT_CONTENT_KEYS = ("gen_ai.prompt", "gen_ai.completion")


class _PresetIds(IdGenerator):
    """Gives the next span started on this thread the ids the renderer chose."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._random = RandomIdGenerator()

    @contextmanager
    def preset(self, *, span_id: str, trace_id: str) -> Iterator[None]:
        self._local.span_id = int(span_id, 16)
        self._local.trace_id = int(trace_id, 16)
        try:
            yield
        finally:
            self._local.span_id = None
            self._local.trace_id = None

    def generate_span_id(self) -> int:
        preset: int | None = getattr(self._local, "span_id", None)
        if preset is None:
            return self._random.generate_span_id()
        self._local.span_id = None
        return preset

    def generate_trace_id(self) -> int:
        preset: int | None = getattr(self._local, "trace_id", None)
        if preset is None:
            return self._random.generate_trace_id()
        self._local.trace_id = None
        return preset


def _nanoseconds(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000) * 1_000


class SpanExport:
    """One observer's trace pipeline: provider, batch processor and OTLP exporter."""

    def __init__(self, config: ExportConfig, resource: Resource, *, timeout: float) -> None:
        self._ids = _PresetIds()
        self.provider = TracerProvider(resource=resource, id_generator=self._ids)
        self.provider.add_span_processor(
            BatchSpanProcessor(
                OTLPSpanExporter(
                    endpoint=config.url("traces"),
                    headers=config.headers_for("traces"),
                    timeout=timeout,
                    compression=Compression.Gzip,
                )
            )
        )
        from agentdeck_otel import __version__

        self._tracer = self.provider.get_tracer("agentdeck", __version__)

    def export(self, record: SpanRecord) -> None:
        """Queue one finished span for export (in memory; a background thread sends it)."""
        current = otel_context.get_current()
        if record.parent_span_id is None:
            parent = trace.set_span_in_context(trace.INVALID_SPAN, current)
        else:
            parent = trace.set_span_in_context(
                trace.NonRecordingSpan(
                    trace.SpanContext(
                        trace_id=int(record.trace_id, 16),
                        span_id=int(record.parent_span_id, 16),
                        is_remote=False,
                        trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
                    )
                ),
                current,
            )
        with self._ids.preset(span_id=record.span_id, trace_id=record.trace_id):
            span = self._tracer.start_span(
                record.name,
                context=parent,
                attributes=_attributes(record),
                start_time=_nanoseconds(record.start),
            )
        if record.level is SpanLevel.ERROR:
            span.set_status(Status(StatusCode.ERROR, record.status_message))
        elif record.run_root and record.attributes.get("agentdeck.run.status") == "completed":
            span.set_status(Status(StatusCode.OK))
        span.end(end_time=_nanoseconds(record.end))

    def flush(self, timeout_seconds: float) -> bool:
        return self.provider.force_flush(timeout_millis=max(1, int(timeout_seconds * 1000)))

    def shutdown(self) -> None:
        self.provider.shutdown()


def _attributes(record: SpanRecord) -> dict[str, AttributeValue]:
    attributes = dict(record.attributes)
    if record.session_id is not None:
        attributes["session.id"] = record.session_id
    if record.level not in (SpanLevel.DEFAULT, SpanLevel.ERROR):
        attributes["agentdeck.level"] = record.level.value
    if record.status_message is not None and record.level is not SpanLevel.ERROR:
        attributes["agentdeck.status_message"] = record.status_message
    input_key, output_key = _CONTENT_KEYS.get(record.type, _DEFAULT_CONTENT_KEYS)
    if record.input is not None:
        attributes[input_key] = record.input
    if record.output is not None:
        attributes[output_key] = record.output
    return attributes
