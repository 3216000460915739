"""What the Agents SDK streams, as AgentDeck's canonical payloads.

One :class:`Translator` per play turns each SDK stream event into zero or more payloads:

=============================================  ====================================================
SDK stream event                               payload
=============================================  ====================================================
raw ``response.output_text.delta``             ``text.delta`` (``message_id``: the output item id)
raw reasoning text / summary deltas            ``thought.delta``
raw ``response.completed``                     ``usage.reported`` for that one model call
``tool_called`` (a function call)              ``tool.call.started`` (arguments parsed; text that
                                               is not JSON kept raw, with ``args_error``)
``tool_output``                                ``tool.call.completed`` (preview, size, SHA-256 of
                                               the exact text the model received; ``error`` when
                                               that text is an error message instead of a result)
``message_output_created``                     ``message.completed``
``handoff_occured``                            ``agent.changed``
=============================================  ====================================================

Everything else (lifecycle chatter, the SDK's own handoff call item) yields nothing. The run's
final ``run.completed`` is assembled by the engine from the SDK result, never passed through.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agents.items import (
    HandoffOutputItem,
    ItemHelpers,
    MessageOutputItem,
    ToolCallItem,
    ToolCallOutputItem,
)
from agents.models.fake_id import FAKE_RESPONSES_ID
from agents.stream_events import RawResponsesStreamEvent, RunItemStreamEvent, StreamEvent

from agentdeck.events import (
    AgentChanged,
    Event,
    MessageCompleted,
    Payload,
    RunResumed,
    TextDelta,
    ThoughtDelta,
    ToolCallCompleted,
    ToolCallStarted,
    Usage,
    UsageReported,
)
from agentdeck_openai.scope import RunScope
from agentdeck_openai.tool_results import completed_event, output_text, started_event

__all__ = ["Translator", "usage_of"]

_THOUGHT_DELTAS = frozenset(
    {"response.reasoning_text.delta", "response.reasoning_summary_text.delta"}
)


def usage_of(raw: Any) -> Usage:
    """One model call's usage from a Responses ``usage`` object (missing numbers count 0)."""

    def count(name: str) -> int:
        value = getattr(raw, name, None) if raw is not None else None
        return value if isinstance(value, int) else 0

    return Usage(
        requests=1,
        input_tokens=count("input_tokens"),
        output_tokens=count("output_tokens"),
        total_tokens=count("total_tokens"),
    )


class Translator:
    """Stateful translation of one play's stream (see the module doc).

    ``history`` is the run's log so far: tool calls started before a pause or an approval park
    are still open, so their completion is reported under the right tool name.
    """

    def __init__(self, scope: RunScope, history: Sequence[Event] = ()) -> None:
        self._scope = scope
        self.open_calls: dict[str, str] = {}
        """call id -> tool name, for calls started and not yet completed."""
        self.usage: list[Usage] = []
        """Per model call, this play."""
        self._fake_ids: dict[str, str] = {}
        self._responses = 0
        """Model calls begun this play (made-up message ids differ between calls)."""
        self._in_call = False
        """A model call has begun and not completed yet."""
        self._play = 0
        """How many plays came before this one (made-up message ids differ between plays)."""
        for event in history:
            payload = event.payload
            if isinstance(payload, RunResumed):
                self._play += 1
            elif isinstance(payload, ToolCallStarted):
                self.open_calls[payload.call_id] = payload.tool
            elif isinstance(payload, ToolCallCompleted):
                self.open_calls.pop(payload.call_id, None)

    def translate(self, event: StreamEvent) -> list[Payload]:
        if isinstance(event, RawResponsesStreamEvent):
            return self._raw(event.data)
        if isinstance(event, RunItemStreamEvent):
            return self._item(event)
        return []

    # ------------------------------------------------------------------ raw model events

    def _raw(self, data: Any) -> list[Payload]:
        kind = getattr(data, "type", None)
        if kind == "response.created":
            self._begin_call()
            return []
        if kind == "response.output_text.delta":
            delta = getattr(data, "delta", "")
            if not delta:
                return []
            if not self._in_call:
                self._begin_call()
            return [TextDelta(message_id=self._message_id(data.item_id), text=delta)]
        if kind in _THOUGHT_DELTAS:
            delta = getattr(data, "delta", "")
            if not delta:
                return []
            if not self._in_call:
                self._begin_call()
            return [ThoughtDelta(message_id=self._message_id(data.item_id), text=delta)]
        if kind == "response.completed":
            if not self._in_call:  # a reply given whole has no other event
                self._begin_call()
            self._in_call = False
            response = data.response
            usage = usage_of(getattr(response, "usage", None))
            self.usage.append(usage)
            model = getattr(response, "model", None)
            return [UsageReported(model=model if isinstance(model, str) else None, usage=usage)]
        return []

    def _begin_call(self) -> None:
        """A model call begins: at ``response.created``, else at its first delta (a stream
        without one), else at ``response.completed`` (a reply given whole)."""
        self._responses += 1
        self._fake_ids.clear()
        self._in_call = True

    def _message_id(self, item_id: str | None) -> str:
        """The item id, or one made up per response for endpoints (Chat Completions) whose
        items all carry the SDK's placeholder id."""
        if item_id and item_id != FAKE_RESPONSES_ID:
            return item_id
        key = item_id or ""
        if key not in self._fake_ids:
            run_id = self._scope.invocation.run_id
            self._fake_ids[key] = f"msg-{run_id}-{self._play}-{self._responses}"
        return self._fake_ids[key]

    # ------------------------------------------------------------------ run items

    def _item(self, event: RunItemStreamEvent) -> list[Payload]:
        item = event.item
        if event.name == "tool_called" and isinstance(item, ToolCallItem):
            return self._started(item)
        if event.name == "tool_output" and isinstance(item, ToolCallOutputItem):
            return self._completed(item)
        if event.name == "message_output_created" and isinstance(item, MessageOutputItem):
            agent = getattr(item, "agent", None)
            return [
                MessageCompleted(
                    message_id=self._message_id(getattr(item.raw_item, "id", None)),
                    text=ItemHelpers.text_message_output(item),
                    agent=getattr(agent, "name", None),
                )
            ]
        if event.name == "handoff_occured" and isinstance(item, HandoffOutputItem):
            return [AgentChanged(previous=item.source_agent.name, next=item.target_agent.name)]
        return []

    def _started(self, item: ToolCallItem) -> list[Payload]:
        raw = item.raw_item
        call_id = _field(raw, "call_id") or _field(raw, "id")
        if not call_id:
            return []
        tool = _field(raw, "name") or _field(raw, "type") or "tool"
        arguments = _field(raw, "arguments")
        self.open_calls[call_id] = tool
        return [started_event(call_id, tool, arguments)]

    def _completed(self, item: ToolCallOutputItem) -> list[Payload]:
        raw = item.raw_item
        call_id = _field(raw, "call_id") or _field(raw, "id")
        if not call_id:
            return []
        tool = self.open_calls.pop(call_id, None) or "tool"
        emitted = self._scope.take_emitted(call_id)
        note = self._scope.notes.pop(call_id, None)
        if note is not None:
            return [*emitted, completed_event(call_id, tool, note.text, error=note.error)]
        sent = raw.get("output") if isinstance(raw, Mapping) else getattr(raw, "output", None)
        text = output_text(sent if sent is not None else item.output)
        return [*emitted, completed_event(call_id, tool, text)]

    def close_open_call(self, call_id: str | None, error: str) -> list[Payload]:
        """``tool.call.completed`` with ``error`` for a call that will never complete (its tool
        raised), or for every open call when the failing call is not one of them (it ran inside
        a subagent)."""
        if call_id and call_id in self.open_calls:
            closing = {call_id: self.open_calls.pop(call_id)}
        else:
            closing, self.open_calls = self.open_calls, {}
        return [
            ToolCallCompleted(call_id=cid, tool=tool, error=error) for cid, tool in closing.items()
        ]


def _field(raw: Any, name: str) -> str | None:
    value = raw.get(name) if isinstance(raw, Mapping) else getattr(raw, name, None)
    return value if isinstance(value, str) else None
