"""One run's spans while the renderer tracks it, and how a finished span becomes a record.

:class:`RunSpans` is everything the renderer remembers about one open run: its place in the trace
(trace id, parent span, trace name, session), its root span, the spans still open under it (tool
calls, questions, a pause), the conversation the next generation's prompt shows (as text items and
as messages), and the usage so far. :func:`record` turns one of its spans into the
:class:`~.spans.SpanRecord` an exporter receives; it is the only place records are made, so every
record carries the run's id, its trace and its place under the root the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType

from agentdeck.model.payloads import Usage
from agentdeck.observing.capture import ContentPolicy
from agentdeck.observing.tracing.attributes import (
    LANGFUSE_OBSERVATION_TYPE,
    RUN_ID,
    SPAN_UNFINISHED,
)
from agentdeck.observing.tracing.spans import (
    AttributeValue,
    ChatMessage,
    MessagePart,
    Rendered,
    SpanLevel,
    SpanRecord,
    SpanStarted,
    SpanType,
)

__all__ = [
    "PROMPT_ITEMS",
    "OpenSpan",
    "RunSpans",
    "announce_root",
    "close_children",
    "record",
    "remember",
    "text_message",
]

PROMPT_ITEMS = 20
"""How many of the latest conversation items a generation's captured prompt keeps."""


@dataclass(slots=True)
class OpenSpan:
    """A span that has started and not ended yet."""

    span_id: str
    name: str
    type: SpanType
    start: datetime
    attributes: dict[str, AttributeValue] = field(default_factory=dict)
    input: str | None = None


@dataclass(slots=True)
class RunSpans:
    """One run the renderer has seen start (or continue) and not yet end."""

    run_id: str
    trace_id: str
    parent_span_id: str | None
    trace_name: str
    session_id: str | None
    root: OpenSpan
    """The run's root span, or -- when this process first saw the run mid-way (it was resumed
    after a restart) -- a continuation span under the root another process exported."""
    continued: bool
    boundary: datetime
    """Where the next model call (or workflow step) is taken to start: the end of the last one,
    of the last tool call, or the (re)start of the run."""
    last_ts: datetime
    provider: str = "_OTHER"
    """The ``gen_ai.provider.name`` of the run's model calls."""
    trace_state: str | None = None
    """The W3C ``tracestate`` the run's trace carries, if it was started under one."""
    status: str = "running"
    prompt: list[str] = field(default_factory=list)
    messages: list[ChatMessage] = field(default_factory=list)
    """The same conversation as :attr:`prompt`, as messages (the latest few, ``full`` only)."""
    completion: list[str] = field(default_factory=list)
    tools: dict[str, OpenSpan] = field(default_factory=dict)
    interrupts: dict[str, OpenSpan] = field(default_factory=dict)
    pause: OpenSpan | None = None
    usage: Usage = field(default_factory=Usage)


def record(
    policy: ContentPolicy,
    run: RunSpans,
    span: OpenSpan,
    *,
    end: datetime,
    level: SpanLevel = SpanLevel.DEFAULT,
    status_message: str | None = None,
    input: str | None = None,
    output: str | None = None,
    model: str | None = None,
    usage: Usage | None = None,
    attributes: Mapping[str, AttributeValue] | None = None,
    parent_span_id: str | None = None,
    run_root: bool = False,
    input_messages: tuple[ChatMessage, ...] | None = None,
    output_messages: tuple[ChatMessage, ...] | None = None,
) -> SpanRecord:
    """The finished record of ``span``, one of ``run``'s, ending at ``end`` (never before it
    started). ``attributes`` replace the span's own; ``parent_span_id`` is used only for the
    run's root (or continuation), every other span hangs under that root."""
    merged: dict[str, AttributeValue] = {
        RUN_ID: policy.identifier(run.run_id),
        **(attributes if attributes is not None else span.attributes),
    }
    if policy.names:
        merged[LANGFUSE_OBSERVATION_TYPE] = span.type.value
    is_root_or_continuation = span is run.root
    return SpanRecord(
        trace_id=run.trace_id,
        span_id=span.span_id,
        parent_span_id=parent_span_id if is_root_or_continuation else run.root.span_id,
        name=span.name,
        type=span.type,
        start=span.start,
        end=max(end, span.start),
        level=level,
        status_message=status_message,
        attributes=MappingProxyType(merged),
        model=model,
        usage=usage,
        input=input if input is not None else span.input,
        output=output,
        session_id=run.session_id,
        trace_name=run.trace_name,
        run_root=run_root,
        input_messages=input_messages,
        output_messages=output_messages,
        trace_state=run.trace_state,
    )


def close_children(
    policy: ContentPolicy, run: RunSpans, end: datetime, out: list[Rendered]
) -> None:
    """Finish every span still open under ``run``'s root as unfinished."""
    opened = [*run.tools.values(), *run.interrupts.values()]
    if run.pause is not None:
        opened.append(run.pause)
    for span in opened:
        attributes = {**span.attributes, SPAN_UNFINISHED: True}
        out.append(record(policy, run, span, end=max(end, span.start), attributes=attributes))
    run.tools.clear()
    run.interrupts.clear()
    run.pause = None


def announce_root(run: RunSpans) -> SpanStarted:
    """The announcement of ``run``'s root (or continuation) span."""
    return SpanStarted(
        trace_id=run.trace_id,
        span_id=run.root.span_id,
        parent_span_id=run.parent_span_id,
        name=run.root.name,
        type=run.root.type,
        start=run.root.start,
        session_id=run.session_id,
        trace_name=run.trace_name,
    )


def remember(run: RunSpans, item: str | None, message: ChatMessage | None = None) -> None:
    """Keep a captured conversation item for the next generation's prompt (the latest few):
    ``item`` as text, ``message`` (default: ``item`` as a user's text) as a message."""
    if item is not None:
        run.prompt.append(item)
        del run.prompt[:-PROMPT_ITEMS]
    if message is None and item is not None:
        message = text_message("user", item)
    if message is not None:
        run.messages.append(message)
        del run.messages[:-PROMPT_ITEMS]


def text_message(role: str, text: str, *, finish_reason: str | None = None) -> ChatMessage:
    """One message of one text part."""
    return ChatMessage(
        role=role, parts=(MessagePart(type="text", content=text),), finish_reason=finish_reason
    )
