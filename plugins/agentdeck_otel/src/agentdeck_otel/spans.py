"""Write rendered spans to OTLP/HTTP through the OpenTelemetry SDK, on a private provider.

Each :class:`~agentdeck.observing.tracing.spans.SpanRecord` becomes one OpenTelemetry span with
the record's start and end times, its parent, and the ids the renderer derived from the run ids (so
spans a child run or another process exported line up). The provider belongs to the observer and is
never installed as the global one: an application's own OpenTelemetry setup is left alone.

The span is shaped as the GenAI semantic conventions say (attribute names are the
``opentelemetry-semantic-conventions`` constants): named ``{gen_ai.operation.name} {target}`` --
``chat gpt-5-mini``, ``execute_tool find_slots``, ``invoke_agent booking``, ``invoke_workflow
refund`` (the operation alone when names are not captured) -- a model call is a ``CLIENT`` span,
everything else ``INTERNAL``; the session is ``gen_ai.conversation.id`` (and ``session.id``); a
failure carries ``error.type``. Content, only under ``full`` capture, goes where the conventions
put it: ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (JSON) on model calls and agent
turns, ``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result`` on tool calls, and
``agentdeck.input`` / ``agentdeck.output`` on everything the conventions do not cover (workflow
roots, questions, reports, steps).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.semconv.attributes.error_attributes import ERROR_TYPE
from opentelemetry.trace import SpanKind, Status, StatusCode

from agentdeck.observing.tracing import attributes as vocabulary
from agentdeck.observing.tracing.spans import (
    AttributeValue,
    ChatMessage,
    SpanLevel,
    SpanRecord,
    SpanType,
)
from agentdeck_otel.config import ExportConfig

__all__ = ["SpanExport", "span_name"]

INPUT = "agentdeck.input"
"""Captured input of a span the conventions give no content attribute (``full`` only)."""
OUTPUT = "agentdeck.output"
"""Captured output of such a span (``full`` only)."""
SESSION_ID = "session.id"
"""The session, under the name Langfuse and other OTLP backends group traces by."""

_TARGETS = {
    vocabulary.OPERATION_CHAT: gen_ai.GEN_AI_REQUEST_MODEL,
    vocabulary.OPERATION_EXECUTE_TOOL: gen_ai.GEN_AI_TOOL_NAME,
    vocabulary.OPERATION_INVOKE_AGENT: gen_ai.GEN_AI_AGENT_NAME,
    vocabulary.OPERATION_INVOKE_WORKFLOW: gen_ai.GEN_AI_WORKFLOW_NAME,
}
"""Operation -> the attribute its span name is completed with."""


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
                        trace_state=_trace_state(record.trace_state),
                    )
                ),
                current,
            )
        with self._ids.preset(span_id=record.span_id, trace_id=record.trace_id):
            span = self._tracer.start_span(
                span_name(record),
                context=parent,
                kind=SpanKind.CLIENT if record.type is SpanType.GENERATION else SpanKind.INTERNAL,
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


def _trace_state(header: str | None) -> trace.TraceState | None:
    """The W3C ``tracestate`` of the caller's trace the run was started under, if any."""
    return trace.TraceState.from_header([header]) if header else None


def span_name(record: SpanRecord) -> str:
    """The conventions' span name: ``{gen_ai.operation.name} {target}`` for an operation they
    define (the operation alone when the target's name was not captured), else the record's."""
    operation = record.attributes.get(gen_ai.GEN_AI_OPERATION_NAME)
    if not isinstance(operation, str):
        return record.name
    target = record.attributes.get(_TARGETS.get(operation, ""))
    return f"{operation} {target}" if isinstance(target, str) and target else operation


def _attributes(record: SpanRecord) -> dict[str, AttributeValue]:
    attributes = dict(record.attributes)
    if record.session_id is not None:
        attributes[SESSION_ID] = record.session_id
        attributes[gen_ai.GEN_AI_CONVERSATION_ID] = record.session_id
    if record.level not in (SpanLevel.DEFAULT, SpanLevel.ERROR):
        attributes["agentdeck.level"] = record.level.value
    if record.status_message is not None and record.level is not SpanLevel.ERROR:
        attributes["agentdeck.status_message"] = record.status_message
    if record.level is SpanLevel.ERROR:
        code = record.attributes.get(vocabulary.ERROR_CODE)
        tool_error = record.attributes.get(vocabulary.TOOL_ERROR)
        attributes[ERROR_TYPE] = (
            code if isinstance(code, str) else "tool_error" if tool_error else "_OTHER"
        )
    if record.type is SpanType.TOOL:
        _put(attributes, gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS, record.input)
        _put(attributes, gen_ai.GEN_AI_TOOL_CALL_RESULT, record.output)
    elif record.input_messages is not None or record.output_messages is not None:
        _put(attributes, gen_ai.GEN_AI_INPUT_MESSAGES, _messages_json(record.input_messages))
        _put(attributes, gen_ai.GEN_AI_OUTPUT_MESSAGES, _messages_json(record.output_messages))
    else:
        _put(attributes, INPUT, record.input)
        _put(attributes, OUTPUT, record.output)
    return attributes


def _put(attributes: dict[str, AttributeValue], key: str, value: str | None) -> None:
    if value is not None:
        attributes[key] = value


def _messages_json(messages: Sequence[ChatMessage] | None) -> str | None:
    """Messages as the JSON the conventions define for ``gen_ai.input.messages`` and
    ``gen_ai.output.messages``: ``[{"role", "parts": [{"type", ...}], "finish_reason"?}]``."""
    if not messages:
        return None
    shaped: list[dict[str, Any]] = []
    for message in messages:
        parts: list[dict[str, Any]] = []
        for part in message.parts:
            if part.type == "tool_call":
                parts.append(
                    {
                        "type": "tool_call",
                        "id": part.id,
                        "name": part.name,
                        "arguments": _json_or_text(part.content),
                    }
                )
            elif part.type == "tool_call_response":
                parts.append(
                    {"type": "tool_call_response", "id": part.id, "response": part.content}
                )
            else:
                parts.append({"type": part.type, "content": part.content})
        item: dict[str, Any] = {"role": message.role, "parts": parts}
        if message.finish_reason is not None:
            item["finish_reason"] = message.finish_reason
        shaped.append(item)
    return json.dumps(shaped, ensure_ascii=False, separators=(",", ":"))


def _json_or_text(text: str | None) -> Any:
    """Tool call arguments as the JSON object they were, or the text when capping cut it."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text
