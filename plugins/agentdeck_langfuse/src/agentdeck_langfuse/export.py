"""Map rendered spans onto Langfuse observations, through the Langfuse SDK.

Imported only when a :class:`~agentdeck_langfuse.LangfuseObserver` starts, so building a deck
never imports the SDK.

Each :class:`~agentdeck.observing.tracing.spans.SpanRecord` becomes one observation of the SDK's
own wrapper class (``LangfuseAgent``, ``LangfuseGeneration``, ``LangfuseTool``, ...), which sets
Langfuse's attributes (type, input, output, model, usage, level, environment) exactly as the SDK's
own tracing does. The OpenTelemetry span underneath is started by us, on a ``TracerProvider`` owned
by this plugin and never installed globally, with the record's start time and parent and with
the ids the renderer derived from the run ids -- so a child exported before its parent, or by
another process, still lands in the right place.

Langfuse keeps one set of client resources per public key per process (a second
``Langfuse(public_key=...)`` silently reuses the first one's exporter). This module mirrors that:
one provider per public key, created on first use and kept for the life of the process, so a
deck opened, closed and opened again keeps exporting.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from langfuse import (
    Langfuse,
    LangfuseAgent,
    LangfuseChain,
    LangfuseEvent,
    LangfuseGeneration,
    LangfuseSpan,
    LangfuseTool,
    propagate_attributes,
)
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, Sampler, TraceIdRatioBased
from opentelemetry.trace import Span

from agentdeck.errors import ConfigError
from agentdeck.observing.tracing.spans import Rendered, SpanRecord, SpanStarted, SpanType
from agentdeck_langfuse import __version__
from agentdeck_langfuse.settings import LangfuseSettings

__all__ = ["LangfuseExport"]

_WRAPPERS: dict[SpanType, Any] = {
    SpanType.AGENT: LangfuseAgent,
    SpanType.CHAIN: LangfuseChain,
    SpanType.GENERATION: LangfuseGeneration,
    SpanType.TOOL: LangfuseTool,
    SpanType.SPAN: LangfuseSpan,
    SpanType.EVENT: LangfuseEvent,
}


class _PresetIds(IdGenerator):
    """Gives the next span started on this thread the ids the renderer chose.

    Spans started without a preset (the Agents SDK's raw spans, with ``sdk_spans=True``) get
    random ids as usual. Thread-local, so a raw span started on another thread at the same
    moment can never take a preset meant for a rendered one.
    """

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


_IDS = _PresetIds()
_PROVIDERS: dict[str, tuple[TracerProvider, str]] = {}
_PROVIDERS_LOCK = threading.Lock()


def _provider_for(settings: LangfuseSettings) -> TracerProvider:
    """This process's provider for ``settings.public_key``, created on first use."""
    with _PROVIDERS_LOCK:
        known = _PROVIDERS.get(settings.public_key)
        if known is not None:
            provider, base_url = known
            if base_url != settings.base_url:
                raise ConfigError(
                    f"Langfuse public key {settings.public_key!r} already exports to {base_url} "
                    f"in this process; the Langfuse SDK keeps one client per public key, so it "
                    f"cannot also export to {settings.base_url}. Use one AGENTDECK_LANGFUSE_"
                    "BASE_URL per key.",
                    setting="AGENTDECK_LANGFUSE_BASE_URL",
                )
            return provider
        sampler: Sampler = (
            ALWAYS_ON if settings.sample_rate >= 1.0 else TraceIdRatioBased(settings.sample_rate)
        )
        provider = TracerProvider(
            resource=Resource.create({"service.name": settings.service_name}),
            sampler=sampler,
            id_generator=_IDS,
        )
        _PROVIDERS[settings.public_key] = (provider, settings.base_url)
        return provider


def _export_everything(span: ReadableSpan) -> bool:
    """The provider is private to this plugin: whatever was started on it is meant for export."""
    return True


def _nanoseconds(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000) * 1_000


class LangfuseExport:
    """One observer's connection to Langfuse: the client, and the mapping of records onto it.

    Constructing it contacts nothing (the SDK's exporter connects when it first flushes).
    """

    def __init__(self, settings: LangfuseSettings) -> None:
        self.provider = _provider_for(settings)
        self._client = Langfuse(
            public_key=settings.public_key,
            secret_key=settings.secret_key,
            base_url=settings.base_url,
            environment=settings.environment,
            debug=settings.debug,
            sample_rate=settings.sample_rate,
            tracer_provider=self.provider,
            should_export_span=_export_everything,
        )
        self._tracer = self.provider.get_tracer("agentdeck", __version__)
        self._live: dict[str, Span] = {}
        """Run roots started and not yet finished, by span id."""

    def export(self, rendered: Rendered) -> None:
        """Apply one rendered item (in memory; the SDK's batch exporter sends it later).

        A run's root is started live at its :class:`SpanStarted` and finished by its record, so
        while the run is going the SDK knows its children's parent is in this process.
        """
        with propagate_attributes(session_id=rendered.session_id, trace_name=rendered.trace_name):
            if isinstance(rendered, SpanStarted):
                self._live[rendered.span_id] = self._start(rendered)
                return
            live = self._live.pop(rendered.span_id, None)
            self._finish(live if live is not None else self._start(rendered), rendered)

    def _start(self, record: SpanRecord | SpanStarted) -> Span:
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
        with _IDS.preset(span_id=record.span_id, trace_id=record.trace_id):
            return self._tracer.start_span(
                record.name, context=parent, start_time=_nanoseconds(record.start)
            )

    def _finish(self, span: Span, record: SpanRecord) -> None:
        options: dict[str, Any] = {
            "otel_span": span,
            "langfuse_client": self._client,
            "input": record.input,
            "output": record.output,
            "metadata": {
                key: value
                for key, value in record.attributes.items()
                if not key.startswith("langfuse.")
            }
            or None,
            "level": record.level.value,
            "status_message": record.status_message,
        }
        if record.type is SpanType.GENERATION:
            options["model"] = record.model
            if record.usage is not None:
                options["usage_details"] = {
                    "input": record.usage.input_tokens,
                    "output": record.usage.output_tokens,
                    "total": record.usage.total_tokens,
                }
        observation = _WRAPPERS[record.type](**options)
        observation.end(end_time=_nanoseconds(record.end))

    def flush(self, timeout_seconds: float) -> bool:
        """Export what is buffered, waiting at most ``timeout_seconds``; whether it finished.

        Blocking: call it from a worker thread. The provider stays up for the next observer
        with the same key (see the module docstring).
        """
        return self.provider.force_flush(timeout_millis=max(1, int(timeout_seconds * 1000)))
