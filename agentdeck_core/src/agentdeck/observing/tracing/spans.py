"""What the trace renderer hands an exporter: finished span records, and run roots as they start.

A :class:`SpanRecord` is a finished span — names, ids, parent ids, times, attributes, usage and
(under ``full`` capture) content, already filtered by the content policy: as text
(``input``/``output``) and, for model calls and agent turns, as the conversation's messages
(:class:`ChatMessage`, the shape of the GenAI conventions' ``gen_ai.input.messages``). A run's root
is also announced with a :class:`SpanStarted` when the run starts (it finishes only with the run),
for exporters whose SDK wants a parent to be live while its children are recorded; an exporter that
writes each span whole can ignore those.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from agentdeck.model.payloads import Usage

__all__ = [
    "AttributeValue",
    "ChatMessage",
    "MessagePart",
    "Rendered",
    "SpanLevel",
    "SpanRecord",
    "SpanStarted",
    "SpanType",
]

AttributeValue = str | bool | int | float
"""What an attribute may hold: the scalar types every OTLP backend accepts."""


class SpanType(StrEnum):
    """What a span stands for; the Langfuse observation types, which OTLP carries as an
    attribute."""

    AGENT = "agent"
    CHAIN = "chain"
    """A workflow (or any run that is not an agent turn)."""
    GENERATION = "generation"
    TOOL = "tool"
    SPAN = "span"
    EVENT = "event"
    """Instantaneous: ``start == end``."""


class SpanLevel(StrEnum):
    """How much a span matters; ``ERROR`` is what exporters turn into an error status."""

    DEBUG = "DEBUG"
    DEFAULT = "DEFAULT"
    WARNING = "WARNING"
    ERROR = "ERROR"


@dataclass(frozen=True, slots=True)
class MessagePart:
    """One part of a conversation message: text, a tool call the model asked for, or a tool's
    response. Every string is already capped and masked by the content policy."""

    type: str
    """``text``, ``tool_call`` or ``tool_call_response`` (the conventions' part types)."""
    content: str | None = None
    """The text; a tool call's arguments (JSON text); a tool response's result."""
    id: str | None = None
    """The tool call's id (``tool_call``, ``tool_call_response``)."""
    name: str | None = None
    """The tool's name (``tool_call``)."""


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message of a conversation as a model call saw it (or as it answered)."""

    role: str
    """``user``, ``assistant`` or ``tool``."""
    parts: tuple[MessagePart, ...]
    finish_reason: str | None = None
    """On a model's output message: why it stopped (``stop``)."""


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """One finished span, ready to hand to an exporter.

    ``trace_id`` is 32 and ``span_id``/``parent_span_id`` 16 lower-case hex digits (the W3C
    sizes). ``parent_span_id`` is ``None`` only for the root of a top-level run. ``model``,
    ``input``, ``output`` and ``session_id`` are already filtered by the content policy: an
    exporter puts them where its backend expects them and adds nothing else.
    """

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    type: SpanType
    start: datetime
    end: datetime
    level: SpanLevel = SpanLevel.DEFAULT
    status_message: str | None = None
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    model: str | None = None
    usage: Usage | None = None
    input: str | None = None
    output: str | None = None
    session_id: str | None = None
    """The run's session as the policy lets it out (hashed, raw, or ``None``)."""
    trace_name: str = "agentdeck"
    """The name of the trace: its top-level run's (generic under ``off``)."""
    run_root: bool = False
    """Whether this is a run's own root span (carrying its outcome and total usage)."""
    input_messages: tuple[ChatMessage, ...] | None = None
    """Under ``full`` capture, on a generation: the latest conversation messages it saw; on an
    agent turn's root: the turn's input as a user message."""
    output_messages: tuple[ChatMessage, ...] | None = None
    """Under ``full`` capture, on a generation or an agent turn's root: what it answered."""
    trace_state: str | None = None
    """The W3C ``tracestate`` of the trace context the run was started under, if any."""


@dataclass(frozen=True, slots=True)
class SpanStarted:
    """A run's root span has started; its :class:`SpanRecord` (same ``span_id``) comes when the
    run ends, or when the renderer is closed first."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    type: SpanType
    start: datetime
    session_id: str | None
    trace_name: str


Rendered = SpanRecord | SpanStarted
"""What :meth:`TraceRenderer.feed` returns, in the order an exporter should apply it."""
