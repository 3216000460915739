"""How the terminal renders canonical events (``agentdeck.bindings.transcript``), event by event."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any

import pytest

from agentdeck.bindings.transcript import Style, Transcript, describe_question, expected_hint
from agentdeck.model.content import DataBlock, TextBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    AnswerRecorded,
    AnswerShape,
    MessageCompleted,
    Payload,
    Report,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    TextDelta,
    ToolCallCompleted,
    ToolCallStarted,
    Usage,
)

TS = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def events(*payloads: Payload) -> list[Event]:
    return [
        Event(kind=p.kind, seq=i + 1, run_id="r" * 32, ts=TS, payload=p)
        for i, p in enumerate(payloads)
    ]


def render(*payloads: Payload, style: Style | None = None, terminal: bool = False) -> str:
    out = io.StringIO()
    transcript = Transcript(out, style or Style(), lifecycle=False, terminal=terminal)
    for event in events(*payloads):
        transcript.write(event)
    return out.getvalue()


def test_text_deltas_stream_inline_and_the_message_ends_the_line() -> None:
    text = render(
        TextDelta(message_id="m", text="It "),
        TextDelta(message_id="m", text="is sunny."),
        MessageCompleted(message_id="m", text="It is sunny."),
        Report(message="done"),
    )

    assert text == "It is sunny.\n- [info] done\n"


def test_a_message_without_deltas_is_printed_whole() -> None:
    assert render(MessageCompleted(message_id="m", text="Hello.")) == "Hello.\n"


def test_a_tool_call_is_one_line_with_its_result_when_piped() -> None:
    text = render(
        ToolCallStarted(call_id="c", tool="search", args={"q": "x"}),
        ToolCallCompleted(call_id="c", tool="search", result_preview="3 hits"),
        ToolCallStarted(call_id="d", tool="fetch", args="not json{"),
        ToolCallCompleted(call_id="d", tool="fetch", error="TimeoutError"),
    )

    assert text.splitlines() == [
        '* search({"q": "x"}) -> 3 hits',
        "* fetch(not json{) -> x TimeoutError",
    ]


def test_on_a_terminal_the_tool_line_is_completed_in_place() -> None:
    text = render(
        ToolCallStarted(call_id="c", tool="search", args={"q": "x"}),
        ToolCallCompleted(call_id="c", tool="search", result_preview="3 hits"),
        style=Style(color=True),
        terminal=True,
    )

    started, completed = text.split("\n")[:2]
    assert "search" in started and "3 hits" not in started
    assert completed.startswith("\x1b[1A\r\x1b[2K")  # up one line, rewrite it
    assert "3 hits" in completed


def test_questions_show_what_answer_they_take() -> None:
    text = render(
        RunInterrupted(
            interrupt_id="a",
            payload={"question": "Ship it?"},
            expected=AnswerShape(options=["y", "n"]),
        ),
        RunInterrupted(
            interrupt_id="b",
            reason="approval",
            payload={"tool": "delete", "args": {"path": "x"}},
            expected=AnswerShape(json_schema={"properties": {"approved": {"type": "boolean"}}}),
        ),
        AnswerRecorded(interrupt_id="a", value="y"),
    )

    assert text.splitlines() == [
        "? Ship it?  [y/n]",
        '? approve delete({"path": "x"})?  [y/n]',
        "+ answered: y",
    ]


def test_the_outcome_shows_a_workflow_result_and_a_failure() -> None:
    done = render(RunCompleted(output=[DataBlock(data={"ok": True})], usage=Usage(total_tokens=7)))
    failed = render(RunFailed(error_code="engine_error", message="ValueError", where="wf/step"))

    assert done.splitlines() == ['-> {"ok": true}', "+ completed (7 tokens)"]
    assert failed.strip() == "x failed (engine_error in wf/step): ValueError"


def test_an_agents_final_text_is_not_repeated_after_it_streamed() -> None:
    text = render(
        TextDelta(message_id="m", text="Hi."),
        RunCompleted(output=[TextBlock(text="Hi.")]),
    )

    assert text == "Hi.\n"


@pytest.mark.parametrize(
    ("env", "tty", "color"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": "1"}, True, False),
        ({"FORCE_COLOR": "1"}, False, True),
        ({"TERM": "dumb"}, True, False),
    ],
)
def test_colour_only_on_a_terminal_unless_told_otherwise(
    env: dict[str, str], tty: bool, color: bool
) -> None:
    class Stream(io.StringIO):
        def isatty(self) -> bool:
            return tty

    assert Style.for_stream(Stream(), env).color is color


@pytest.mark.parametrize(
    ("payload", "text"),
    [
        ("plain question?", "plain question?"),
        ({"prompt": "name?"}, "name?"),
        ({"tool": "rm", "arguments": {"p": 1}}, 'approve rm({"p": 1})?'),
        ([1, 2], "[1, 2]"),
    ],
)
def test_a_questions_text(payload: Any, text: str) -> None:
    assert describe_question(payload) == text


def test_a_typed_question_names_its_type() -> None:
    asked = RunInterrupted(interrupt_id="a", expected=AnswerShape(json_schema={"type": "integer"}))

    assert expected_hint(asked) == "integer"
