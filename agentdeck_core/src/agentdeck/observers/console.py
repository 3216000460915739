"""``ConsoleObserver``: one readable line per event, for watching a deck work locally."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    AgentChanged,
    AnswerRecorded,
    AnswerRefused,
    ApprovalDecided,
    ArtifactCreated,
    ControlObserved,
    ControlRequested,
    Custom,
    InputAppended,
    MessageCompleted,
    NodeUpdated,
    PlanUpdated,
    Report,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunPaused,
    RunResumed,
    RunStarted,
    StepCompleted,
    TextDelta,
    ThoughtDelta,
    ToolCallCompleted,
    ToolCallStarted,
    UnknownEvent,
    UsageReported,
)
from agentdeck.observing.capture import blocks_text
from agentdeck.ports import Observer

__all__ = ["ConsoleObserver", "format_event"]

_EXCERPT = 120
"""Characters of any one piece of text a line shows; a line is for reading, not for records."""


class ConsoleObserver(Observer):
    """Prints one line per event: time, run, sequence number, kind and the gist of the payload.

    ``stream`` defaults to whatever ``sys.stdout`` is when a line is printed (so output capture
    and redirection work). Each line is written and flushed as its event arrives. There are no
    formatting options by design; write your own observer for anything else.
    """

    def __init__(
        self, view: Callable[[Event], bool] | None = None, stream: TextIO | None = None
    ) -> None:
        self.view = view
        self._stream = stream

    async def emit(self, event: Event) -> None:
        stream = self._stream if self._stream is not None else sys.stdout
        stream.write(format_event(event) + "\n")
        stream.flush()

    def __repr__(self) -> str:
        return f"ConsoleObserver(view={self.view!r})"


def format_event(event: Event) -> str:
    """The one line :class:`ConsoleObserver` prints for ``event`` (no newline inside)."""
    when = event.ts.strftime("%H:%M:%S.%f")[:-3]
    head = f"{when} {event.run_id[:8]} #{event.seq:<3} {event.kind}"
    gist = _gist(event)
    return f"{head}  {gist}" if gist else head


def _gist(event: Event) -> str:
    match event.payload:
        case RunStarted() as p:
            return f"{p.name} ({p.invocable_kind}) {_text(blocks_text(p.input))}".rstrip()
        case RunCompleted() as p:
            tokens = f" [{p.usage.total_tokens} tokens]" if p.usage.total_tokens else ""
            return _text(blocks_text(p.output)) + tokens
        case RunFailed() as p:
            where = f" in {p.where}" if p.where else ""
            return f"{p.error_code}{where}: {_text(p.message)}"
        case RunCancelled() as p:
            return _text(p.reason or "")
        case RunPaused() as p:
            wake = f" until {p.wake_at.isoformat()}" if p.wake_at else ""
            return _text(p.reason or "") + wake
        case RunResumed() as p:
            return f"answered {p.interrupt_id}" if p.interrupt_id else _text(p.reason or "")
        case RunInterrupted() as p:
            return f"{p.interrupt_id} ({p.reason}) {_data(p.payload)}".rstrip()
        case AnswerRecorded() as p:
            return f"{p.interrupt_id} by {p.origin}: {_data(p.value)}"
        case AnswerRefused() as p:
            return f"{p.interrupt_id}: {_text(p.reason)}"
        case ApprovalDecided() as p:
            verdict = "approved" if p.approved else "rejected"
            return f"{p.tool} {verdict} by {p.origin}"
        case ControlRequested() as p:
            return f"{p.verb}" + (f": {_text(p.reason)}" if p.reason else "")
        case ControlObserved() as p:
            return f"{p.verb} at {p.safe_point}"
        case TextDelta() | ThoughtDelta() as p:
            return _quoted(p.text)
        case MessageCompleted() as p:
            return (f"{p.agent}: " if p.agent else "") + _quoted(p.text)
        case AgentChanged() as p:
            return f"{p.previous or '-'} -> {p.next}"
        case ToolCallStarted() as p:
            return f"{p.tool}({_data(p.args)})"
        case ToolCallCompleted() as p:
            if p.error is not None:
                return f"{p.tool} raised: {_text(p.error)}"
            return f"{p.tool} -> {_text(p.result_preview)}"
        case UsageReported() as p:
            model = f"{p.model} " if p.model else ""
            return f"{model}{p.usage.input_tokens} in / {p.usage.output_tokens} out"
        case Report() as p:
            fields = f" {_data(p.fields)}" if p.fields else ""
            return f"[{p.level}] {_text(p.message)}{fields}"
        case ArtifactCreated() as p:
            return f"{p.artifact_id} {p.media_type}" + (f" {p.uri}" if p.uri else "")
        case InputAppended() as p:
            return _text(blocks_text(p.input))
        case StepCompleted() as p:
            return f"{p.index} {p.name} -> {_data(p.result)}"
        case NodeUpdated() as p:
            return f"{p.node} -> {_data(p.update)}"
        case PlanUpdated() as p:
            return "; ".join(f"[{item.status}] {item.title}" for item in p.items)
        case Custom() as p:
            return f"{p.name} {_data(p.data)}"
        case UnknownEvent() as p:
            return _data(p.data)
    return ""


def _text(text: str) -> str:
    """One line, at most :data:`_EXCERPT` characters, newlines shown as ``\\n``."""
    flat = text.replace("\r", "").replace("\n", "\\n")
    return flat if len(flat) <= _EXCERPT else flat[: _EXCERPT - 1] + "…"


def _quoted(text: str) -> str:
    return '"' + _text(text) + '"'


def _data(value: Any) -> str:
    if value is None:
        return ""
    return _text(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
