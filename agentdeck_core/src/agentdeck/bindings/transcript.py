"""Canonical events rendered for a person at a terminal: the chat binding's and the CLI's view.

A :class:`Transcript` turns a run's events, as they arrive, into what someone watching wants to
read: an agent's text streamed inline as it is generated, each tool call on one line with its
result, questions, answers, reports, control and the run's outcome. It reads the canonical events
and nothing else, so a terminal chat, ``agentdeck run`` and ``agentdeck runs tail`` show any
engine's runs the same way.

:class:`Style` decides how it looks: colours and Unicode symbols on a terminal, plain text with
ASCII markers when the output is piped or redirected (or ``NO_COLOR`` is set; ``FORCE_COLOR``
forces colour), so what a script captures never holds escape codes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from agentdeck.model.content import DataBlock
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
    MessageCompleted,
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
    UsageReported,
)
from agentdeck.observers.console import format_event
from agentdeck.observing.capture import blocks_text

__all__ = ["Style", "Transcript", "describe_question", "expected_hint", "is_approval", "one_line"]

_CODES = {
    "bold": "1",
    "dim": "2",
    "italic": "3",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
}

_STATUS_COLOURS = {
    "running": "cyan",
    "paused": "yellow",
    "waiting_answer": "magenta",
    "completed": "green",
    "failed": "red",
    "cancelled": "yellow",
}

# name -> (on a terminal, plain)
_GLYPHS = {
    "tool": ("⚙", "*"),
    "result": ("→", "->"),
    "ask": ("?", "?"),
    "ok": ("✓", "+"),
    "no": ("✗", "x"),
    "info": ("•", "-"),
    "pause": ("⏸", "||"),
    "play": ("▶", ">"),
    "step": ("·", "."),
    "branch": ("├─", "|-"),
    "last": ("└─", "`-"),
    "pipe": ("│ ", "| "),
}

EXCERPT = 200
"""Characters of one value (tool arguments, a result preview) a transcript line shows."""


@dataclass(frozen=True, slots=True)
class Style:
    """How terminal output looks: ANSI colour and Unicode symbols, or plain text."""

    color: bool = False

    @classmethod
    def for_stream(cls, stream: TextIO, env: Mapping[str, str] | None = None) -> Style:
        """Colour for a terminal; plain when piped, for ``NO_COLOR``, or ``TERM=dumb``."""
        environ = os.environ if env is None else env
        if environ.get("NO_COLOR"):
            return cls(color=False)
        if environ.get("FORCE_COLOR"):
            return cls(color=True)
        if environ.get("TERM") == "dumb":
            return cls(color=False)
        isatty = getattr(stream, "isatty", None)
        return cls(color=bool(isatty and isatty()))

    def paint(self, text: str, *styles: str) -> str:
        if not self.color or not styles or not text:
            return text
        codes = ";".join(_CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"

    def glyph(self, name: str) -> str:
        fancy, plain = _GLYPHS[name]
        return fancy if self.color else plain

    def status(self, status: object) -> str:
        """A run status, coloured by what it means."""
        text = str(status) if status is not None else "-"
        colour = _STATUS_COLOURS.get(text)
        return self.paint(text, colour) if colour else text


def one_line(value: Any, limit: int = EXCERPT) -> str:
    """``value`` (text or JSON data) on one line, at most ``limit`` characters."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    flat = text.replace("\r", "").replace("\n", " ")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(slots=True)
class _Tool:
    tool: str
    args: str


@dataclass(slots=True)
class Transcript:
    """Writes one run's events to ``out`` the way a person follows a conversation.

    Text deltas are written inline as they arrive and the message is closed by its
    ``message.completed`` (whose text is printed whole if no delta was seen). Each tool call is
    one line: on a terminal it is printed when the call starts and completed in place when its
    result arrives (if nothing was printed in between); piped, it is printed once, complete.
    ``lifecycle=False`` leaves out the start and resume lines (a chat shows the person's own
    message instead). Nothing here blocks or reads input: asking questions is the caller's job.
    """

    out: TextIO
    style: Style = field(default_factory=Style)
    lifecycle: bool = True
    terminal: bool = False
    """Whether ``out`` is a terminal that can rewrite its last line (tool results in place)."""
    _mid_line: bool = False
    _streamed: set[str] = field(default_factory=set)
    _tools: dict[str, _Tool] = field(default_factory=dict)
    _last_line_tool: str | None = None
    _said_text: bool = False

    # ------------------------------------------------------------------------------- writing

    def write(self, event: Event) -> None:
        """Render one event (and flush, so a follower sees it at once)."""
        self._render(event)
        self.out.flush()

    def line(self, text: str) -> None:
        """Write a line of the caller's own, starting on a fresh line."""
        self.end_line()
        self.out.write(text + "\n")
        self._last_line_tool = None
        self.out.flush()

    def end_line(self) -> None:
        """Finish a partly written line (streamed text) so the next output starts clean."""
        if self._mid_line:
            self.out.write("\n")
            self._mid_line = False
            self._last_line_tool = None

    def reset(self) -> None:
        """Forget per-turn state (a new turn starts)."""
        self.end_line()
        self._streamed.clear()
        self._tools.clear()
        self._last_line_tool = None
        self._said_text = False

    # ------------------------------------------------------------------------------- rendering

    def _render(self, event: Event) -> None:
        s = self.style
        match event.payload:
            case TextDelta() as p:
                self._stream(p.message_id, p.text)
            case ThoughtDelta() as p:
                self._stream(p.message_id, s.paint(p.text, "dim", "italic"))
            case MessageCompleted() as p:
                if p.message_id in self._streamed:
                    self.end_line()
                elif p.text:
                    self.line(p.text)
                    self._said_text = True
            case ToolCallStarted() as p:
                args = one_line(p.args) if p.args_error is None else one_line(p.args_error)
                self._tools[p.call_id] = _Tool(p.tool, args)
                if self.terminal:
                    self.line(self._tool_text(p.tool, args))
                    self._last_line_tool = p.call_id
            case ToolCallCompleted() as p:
                self._tool_done(p)
            case RunInterrupted() as p:
                self.line(self._question(p))
            case AnswerRecorded() as p:
                who = "" if p.origin == "human" else f" ({p.origin})"
                self.line(s.paint(f"{s.glyph('ok')} answered: {one_line(p.value)}{who}", "green"))
            case AnswerRefused() as p:
                self.line(s.paint(f"{s.glyph('no')} answer refused: {p.reason}", "red"))
            case ApprovalDecided() as p:
                verdict = "approved" if p.approved else "rejected"
                mark = s.glyph("ok") if p.approved else s.glyph("no")
                note = f": {p.message}" if p.message else ""
                self.line(s.paint(f"{mark} {p.tool} {verdict} by {p.origin}{note}", "dim"))
            case AgentChanged() as p:
                self.line(s.paint(f"{s.glyph('play')} handed off to {p.next}", "cyan"))
            case Report() as p:
                colour = {"warning": "yellow", "error": "red"}.get(str(p.level), "blue")
                fields = f" {one_line(p.fields)}" if p.fields else ""
                level = s.paint(f"[{p.level}]", colour)
                self.line(f"{s.glyph('info')} {level} {p.message}{s.paint(fields, 'dim')}")
            case StepCompleted() as p:
                text = f"{s.glyph('step')} step {p.name} {s.glyph('result')} {one_line(p.result)}"
                self.line(s.paint(text, "dim"))
            case Custom() as p:
                self.line(s.paint(f"{s.glyph('step')} {p.name} {one_line(p.data)}", "dim"))
            case ArtifactCreated() as p:
                self.line(
                    s.paint(f"{s.glyph('info')} artifact {p.artifact_id} ({p.media_type})", "dim")
                )
            case ControlRequested() as p:
                why = f": {p.reason}" if p.reason else ""
                self.line(s.paint(f"{s.glyph('pause')} {p.verb} requested{why}", "yellow"))
            case ControlObserved() as p:
                self.line(s.paint(f"{s.glyph('pause')} {p.verb} taken at {p.safe_point}", "dim"))
            case UsageReported():
                pass  # the total arrives with run.completed
            case RunStarted() as p:
                if self.lifecycle:
                    text = f"{s.glyph('play')} {p.name} ({p.invocable_kind}) run {event.run_id}"
                    self.line(s.paint(text, "dim"))
            case RunResumed() as p:
                if self.lifecycle:
                    why = f"answered {p.interrupt_id}" if p.interrupt_id else (p.reason or "")
                    self.line(s.paint(f"{s.glyph('play')} resumed {why}".rstrip(), "dim"))
            case RunPaused() as p:
                until = f" until {p.wake_at.isoformat()}" if p.wake_at else ""
                why = f": {p.reason}" if p.reason else ""
                self.line(s.paint(f"{s.glyph('pause')} paused{why}{until}", "yellow"))
            case RunCompleted() as p:
                self._completed(p)
            case RunFailed() as p:
                where = f" in {p.where}" if p.where else ""
                text = f"{s.glyph('no')} failed ({p.error_code}{where}): {p.message}"
                self.line(s.paint(text, "red", "bold"))
            case RunCancelled() as p:
                why = f": {p.reason}" if p.reason else ""
                self.line(s.paint(f"{s.glyph('no')} cancelled{why}", "yellow", "bold"))
            case _:
                self.line(s.paint(format_event(event), "dim"))

    def _stream(self, message_id: str, text: str) -> None:
        self._streamed.add(message_id)
        self._said_text = True
        self._last_line_tool = None
        if text:
            self.out.write(text)
            self._mid_line = not text.endswith("\n")

    def _tool_text(self, tool: str, args: str, result: str | None = None) -> str:
        s = self.style
        head = f"{s.paint(s.glyph('tool'), 'cyan')} {s.paint(tool, 'bold')}({args})"
        return head if result is None else f"{head} {s.glyph('result')} {result}"

    def _tool_done(self, done: ToolCallCompleted) -> None:
        s = self.style
        started = self._tools.pop(done.call_id, None)
        args = started.args if started is not None else ""
        if done.error is not None:
            result = s.paint(f"{s.glyph('no')} {one_line(done.error)}", "red")
        else:
            result = s.paint(one_line(done.result_preview), "dim")
        text = self._tool_text(done.tool, args, result)
        if self.terminal and self._last_line_tool == done.call_id and not self._mid_line:
            # The start line is the last thing on screen: complete it in place.
            self.out.write(f"\x1b[1A\r\x1b[2K{text}\n")
            self._last_line_tool = None
        else:
            self.line(text)

    def _question(self, asked: RunInterrupted) -> str:
        s = self.style
        text = f"{s.glyph('ask')} {describe_question(asked.payload)}"
        hint = expected_hint(asked)
        if hint:
            text += s.paint(f"  [{hint}]", "dim")
        return s.paint(text, "magenta", "bold")

    def _completed(self, completed: RunCompleted) -> None:
        s = self.style
        blocks = completed.output
        if blocks and not self._said_text:
            if len(blocks) == 1 and isinstance(blocks[0], DataBlock):
                self.line(f"{s.glyph('result')} {one_line(blocks[0].data, 2000)}")
            else:
                self.line(blocks_text(blocks))
        self.end_line()
        tokens = completed.usage.total_tokens
        if self.lifecycle or tokens:
            used = f" ({tokens} tokens)" if tokens else ""
            self.line(s.paint(f"{s.glyph('ok')} completed{used}", "green"))


def describe_question(payload: Any) -> str:
    """The human-readable text of an interrupt's payload."""
    if isinstance(payload, str):
        return payload
    if isinstance(payload, Mapping):
        for key in ("question", "prompt", "message", "text"):
            value = payload.get(key)
            if isinstance(value, str):
                return value
        tool = payload.get("tool")
        if isinstance(tool, str):
            args = payload.get("arguments", payload.get("args"))
            return f"approve {tool}({one_line(args)})?"
    return one_line(payload)


def expected_hint(asked: RunInterrupted) -> str:
    """What kind of answer the question takes, briefly (``y/n``, ``one of: a, b``, ``JSON``)."""
    expected = asked.expected
    if is_approval(asked):
        return "y/n"
    if expected is None:
        return ""
    if expected.options is not None:
        return "/".join(one_line(option, 40) for option in expected.options)
    if expected.json_schema is not None:
        kind = expected.json_schema.get("type")
        return f"{kind}" if isinstance(kind, str) else "JSON"
    return ""


def is_approval(asked: RunInterrupted) -> bool:
    """Whether the question is a tool approval answered ``{"approved": bool, ...}``."""
    if str(asked.reason) != "approval" or asked.expected is None:
        return False
    schema = asked.expected.json_schema or {}
    properties = schema.get("properties")
    return isinstance(properties, Mapping) and "approved" in properties
