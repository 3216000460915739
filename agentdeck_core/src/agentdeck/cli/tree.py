"""A run as a tree, for ``agentdeck runs show``: its events, child runs, questions and control.

:func:`load_tree` reads a run's record, its log, its pending control requests and, recursively,
the runs it started (``parent_run_id``), from the store and the control port alone; nothing is
inferred beyond the fold. :func:`render_tree` draws it: one line per meaningful event, streamed
text gathered into its message, each tool call on one line with its result, every question with
its answers and refusals beneath it, child runs nested where they started.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agentdeck.bindings.transcript import (
    Style,
    Transcript,
    describe_question,
    expected_hint,
)
from agentdeck.cli.common import interrupt_dict, record_dict
from agentdeck.model.content import DataBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    AnswerRecorded,
    AnswerRefused,
    ControlRequested,
    MessageCompleted,
    NodeUpdated,
    RunCompleted,
    RunInterrupted,
    RunStarted,
    TextDelta,
    ThoughtDelta,
    ToolCallCompleted,
    ToolCallStarted,
    UsageReported,
)
from agentdeck.model.status import RunState, fold
from agentdeck.observing.capture import blocks_text
from agentdeck.ports import ControlPort, ControlSignal, EventStore, RunQuery, RunRecord
from agentdeck.vocabulary import ControlVerb, RunStatus

__all__ = ["RunNode", "load_tree", "node_dict", "render_tree", "waiting_note"]

MAX_DEPTH = 16
"""How deep child runs are followed (a cycle is impossible, but a runaway tree is not)."""


@dataclass(slots=True)
class RunNode:
    """One run with everything ``runs show`` draws for it."""

    record: RunRecord
    events: list[Event]
    state: RunState
    control: tuple[ControlSignal, ...] = ()
    children: list[RunNode] = field(default_factory=list)


async def load_tree(
    store: EventStore, control: ControlPort, record: RunRecord, *, depth: int = 0
) -> RunNode:
    events = await store.read(record.run_id)
    node = RunNode(
        record=record,
        events=events,
        state=fold(events),
        control=await control.pending(record.run_id),
    )
    if depth >= MAX_DEPTH:
        return node
    cursor: str | None = None
    while True:
        page = await store.list_runs(
            RunQuery(all_namespaces=True, parent_run_id=record.run_id, limit=200, cursor=cursor)
        )
        for child in page.runs:
            node.children.append(await load_tree(store, control, child, depth=depth + 1))
        if page.next_cursor is None:
            return node
        cursor = page.next_cursor


def waiting_note(node: RunNode) -> str | None:
    """What a suspended run is waiting for, when its log alone does not say it plainly."""
    state, last = node.state, node.events[-1] if node.events else None
    if state.status is RunStatus.WAITING_ANSWER and not state.interrupts:
        return (
            f"answered; a deck that has {node.record.name!r} continues it at its next sweep "
            "(or answer with --project to continue it here)"
        )
    if (
        state.status is RunStatus.PAUSED
        and last is not None
        and isinstance(last.payload, ControlRequested)
        and last.payload.verb == ControlVerb.RESUME
    ):
        return (
            f"resume requested; a deck that has {node.record.name!r} continues it at its next sweep"
        )
    return None


# =========================================================================== JSON


def node_dict(node: RunNode) -> dict[str, Any]:
    """The tree as JSON data: the record, open questions, pending control, events, children."""
    return {
        "run": record_dict(node.record),
        "pending": [interrupt_dict(i) for i in node.state.interrupts],
        "pending_control": [
            {"verb": str(s.verb), "reason": s.reason, "requested_at": s.requested_at.isoformat()}
            for s in node.control
        ],
        "note": waiting_note(node),
        "events": [event.model_dump(mode="json") for event in node.events],
        "children": [node_dict(child) for child in node.children],
    }


# =========================================================================== drawing


@dataclass(slots=True)
class _Item:
    at: datetime
    head: str
    body: list[str] = field(default_factory=list)


def render_tree(node: RunNode, style: Style) -> list[str]:
    """The lines ``runs show`` prints for ``node`` and everything beneath it."""
    lines = [_title(node, style)]
    lines.extend("  " + line for line in _facts(node, style))
    items = _items(node, style)
    for index, item in enumerate(items):
        last = index == len(items) - 1
        lines.append(f"{style.glyph('last' if last else 'branch')} {item.head}")
        indent = "   " if last else style.glyph("pipe") + " "
        lines.extend(indent + line for line in item.body)
    return lines


def _title(node: RunNode, style: Style) -> str:
    record = node.record
    name = style.paint(record.name, "bold")
    return f"{name} ({record.invocable_kind})  {style.status(record.status)}  run {record.run_id}"


def _facts(node: RunNode, style: Style) -> Iterator[str]:
    record = node.record
    facts = [
        ("namespace", record.namespace),
        ("session", record.session_id),
        ("key", record.key),
        ("parent", record.parent_run_id),
        ("created", _when(record.created_at)),
        ("updated", _when(record.updated_at)),
        ("wakes", _when(record.wake_at) if record.wake_at else None),
    ]
    yield style.paint(" · ".join(f"{k} {v}" for k, v in facts if v), "dim")
    started = node.events[0].payload if node.events else None
    if isinstance(started, RunStarted) and started.input:
        yield f"input: {_blocks(started.input)}"
    if isinstance(started, RunStarted) and started.retry_of is not None:
        yield f"retry of run {started.retry_of}"
    if isinstance(started, RunStarted) and started.forked_from is not None:
        origin = started.forked_from
        yield f"forked from run {origin.run_id} at step {origin.at}"
    for signal in node.control:
        why = f": {signal.reason}" if signal.reason else ""
        yield style.paint(
            f"{style.glyph('pause')} {signal.verb} requested at {_when(signal.requested_at)}"
            f"{why} (not yet acted on)",
            "yellow",
        )
    note = waiting_note(node)
    if note is not None:
        yield style.paint(note, "magenta")


def _items(node: RunNode, style: Style) -> list[_Item]:
    """The run's events worth a line, and its children at the moment each started."""
    s = style
    items: list[_Item] = []
    tools: dict[str, tuple[_Item, str]] = {}
    questions: dict[str, _Item] = {}
    messages: dict[str, tuple[_Item, list[str]]] = {}
    usage_total = 0
    for event in node.events[1:]:
        payload = event.payload
        seq = s.paint(f"#{event.seq}", "dim")
        match payload:
            case TextDelta() | ThoughtDelta():
                if payload.message_id not in messages:
                    item = _Item(event.ts, "")
                    messages[payload.message_id] = (item, [])
                    items.append(item)
                item, parts = messages[payload.message_id]
                parts.append(payload.text)
                item.head = f"{seq} {_said(''.join(parts), s)}"
            case MessageCompleted():
                said = f"{payload.agent}: " if payload.agent else ""
                if payload.message_id in messages:
                    item, _ = messages[payload.message_id]
                    item.head = f"{seq} {said}{_said(payload.text, s)}"
                else:
                    items.append(_Item(event.ts, f"{seq} {said}{_said(payload.text, s)}"))
            case ToolCallStarted():
                args = clip(payload.args, 80)
                item = _Item(event.ts, f"{seq} {s.glyph('tool')} {payload.tool}({args}) …")
                tools[payload.call_id] = (item, f"{s.glyph('tool')} {payload.tool}({args})")
                items.append(item)
            case ToolCallCompleted():
                if payload.error is not None:
                    result = s.paint(f"{s.glyph('no')} {clip(payload.error, 80)}", "red")
                else:
                    result = clip(payload.result_preview, 80)
                if payload.call_id in tools:
                    item, text = tools.pop(payload.call_id)
                    item.head = f"{item.head.split(' ', 1)[0]} {text} {s.glyph('result')} {result}"
                else:
                    items.append(
                        _Item(event.ts, f"{seq} {payload.tool} {s.glyph('result')} {result}")
                    )
            case NodeUpdated():
                step = f" (step {payload.step})" if payload.step is not None else ""
                update = clip(payload.update, 160)
                items.append(
                    _Item(
                        event.ts,
                        f"{seq} {s.glyph('play')} node {s.paint(payload.node, 'bold')}{step}"
                        + (f" {s.glyph('result')} {update}" if update else ""),
                    )
                )
            case RunInterrupted():
                hint = expected_hint(payload)
                question = f"{s.glyph('ask')} {clip(describe_question(payload.payload), 200)}"
                head = (
                    f"{seq} {s.paint(question, 'magenta')}"
                    + (s.paint(f"  [{hint}]", "dim") if hint else "")
                    + s.paint(f"  {payload.interrupt_id} ({payload.reason})", "dim")
                )
                item = _Item(event.ts, head)
                questions[payload.interrupt_id] = item
                items.append(item)
            case AnswerRecorded():
                line = s.paint(
                    f"{s.glyph('ok')} answered {clip(payload.value, 80)} by {payload.origin}",
                    "green",
                ) + s.paint(f"  #{event.seq}", "dim")
                _under(questions, payload.interrupt_id, line, items, event)
            case AnswerRefused():
                line = s.paint(f"{s.glyph('no')} refused: {payload.reason}", "red") + s.paint(
                    f"  #{event.seq}", "dim"
                )
                _under(questions, payload.interrupt_id, line, items, event)
            case UsageReported():
                usage_total += payload.usage.total_tokens
            case RunCompleted():
                tokens = payload.usage.total_tokens or usage_total
                used = f" ({tokens} tokens)" if tokens else ""
                output = f" {s.glyph('result')} {_blocks(payload.output)}" if payload.output else ""
                items.append(
                    _Item(
                        event.ts,
                        f"{seq} {s.paint(s.glyph('ok') + ' completed', 'green')}{used}{output}",
                    )
                )
            case _:
                items.append(_Item(event.ts, f"{seq} {_line_for(event, s)}"))
    open_ids = {i.interrupt_id for i in node.state.interrupts}
    for interrupt_id, item in questions.items():
        if interrupt_id in open_ids:
            item.body.append(s.paint("open: waiting for an answer", "magenta"))
    for child in node.children:
        child_item = _Item(child.record.created_at, "", render_tree(child, style)[1:])
        child_item.head = s.paint("child ", "dim") + _title(child, style)
        _insert_by_time(items, child_item)
    return items


def _under(
    questions: dict[str, _Item], interrupt_id: str, line: str, items: list[_Item], event: Event
) -> None:
    item = questions.get(interrupt_id)
    if item is not None:
        item.body.append(line)
    else:
        items.append(_Item(event.ts, f"{interrupt_id}: {line}"))


def _insert_by_time(items: list[_Item], item: _Item) -> None:
    for index, other in enumerate(items):
        if other.at > item.at:
            items.insert(index, item)
            return
    items.append(item)


def _line_for(event: Event, style: Style) -> str:
    """Every other event as the live transcript shows it (one line, no trailing newline)."""
    buffer = io.StringIO()
    Transcript(buffer, style, lifecycle=True).write(event)
    return buffer.getvalue().strip().replace("\n", " ")


def clip(value: Any, limit: int) -> str:
    """``value`` on one line, cut at ``limit`` characters with a note saying how long it was,
    so a 5 MB question or state update is a line of the tree and the reader knows more exists
    (``runs show --json`` has every event whole)."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    flat = text.replace("\r", "").replace("\n", " ")
    if len(flat) <= limit:
        return flat
    return f"{flat[: limit - 1]}… [{len(flat):,} characters; --json shows it whole]"


def _said(text: str, style: Style) -> str:
    return style.paint('"' + clip(text, 120) + '"', "italic")


def _blocks(blocks: list[Any]) -> str:
    if len(blocks) == 1 and isinstance(blocks[0], DataBlock):
        return clip(blocks[0].data, 160)
    return clip(blocks_text(blocks), 160)


def _when(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.strftime("%Y-%m-%d %H:%M:%S") + "Z"
