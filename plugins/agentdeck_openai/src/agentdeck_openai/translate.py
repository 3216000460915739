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

A quiet play (``Runner.run``, see :mod:`agentdeck_openai.quiet`) has no stream: the same
payloads come from the SDK's run hooks instead. :meth:`Translator.model_response` turns a whole
model reply into its ``usage.reported`` then, item by item, ``message.completed`` and
``tool.call.started`` (in the order a stream reports them); :meth:`Translator.tool_ended` a
tool's end into ``tool.call.completed``; :meth:`Translator.outputs_sent` and
:meth:`Translator.outputs_kept` complete the calls whose output no tool reported (a rejected
approval, a call whose output ends the run).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agents.handoffs import Handoff
from agents.items import (
    HandoffOutputItem,
    ItemHelpers,
    MessageOutputItem,
    ModelResponse,
    ToolCallItem,
    ToolCallOutputItem,
)
from agents.models.fake_id import FAKE_RESPONSES_ID
from agents.stream_events import RawResponsesStreamEvent, RunItemStreamEvent, StreamEvent

from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    AgentChanged,
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
_TEXT_DELTA = "response.output_text.delta"
_NOTHING: Sequence[Payload] = ()
"""What most stream events translate to."""
_validate_text_delta = TextDelta.__pydantic_validator__.validate_python
"""``TextDelta(**fields)`` without the model's ``__init__`` frame around the same validation
(what ``TextDelta.model_validate`` does): a turn builds one per token."""


def usage_of(raw: Any) -> Usage:
    """One model call's usage from a Responses ``usage`` object (missing numbers count 0)."""
    return Usage(
        requests=1,
        input_tokens=_count(raw, "input_tokens"),
        output_tokens=_count(raw, "output_tokens"),
        total_tokens=_count(raw, "total_tokens"),
    )


def _count(raw: Any, name: str) -> int:
    value = getattr(raw, name, None) if raw is not None else None
    return value if isinstance(value, int) else 0


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

    def translate(self, event: StreamEvent) -> Sequence[Payload]:
        """The payloads of one stream event, in order (often none)."""
        if isinstance(event, RawResponsesStreamEvent):
            data = event.data
            if getattr(data, "type", None) != _TEXT_DELTA:
                return self._raw(data)
            # Most of a turn's stream is text deltas: one is translated here, in as few calls as
            # it takes (every other raw event goes through _raw).
            delta = getattr(data, "delta", "")
            if not delta:
                return _NOTHING
            if not self._in_call:
                self._begin_call()
            item_id = data.item_id
            if not item_id or item_id == FAKE_RESPONSES_ID:
                item_id = self._message_id(item_id)
            text_delta: TextDelta = _validate_text_delta({"message_id": item_id, "text": delta})
            return [text_delta]
        if isinstance(event, RunItemStreamEvent):
            return self._item(event)
        return _NOTHING

    # ------------------------------------------------------------------ raw model events

    def _raw(self, data: Any) -> Sequence[Payload]:
        """Any raw model event but a text delta (see :meth:`translate`)."""
        kind = getattr(data, "type", None)
        if kind == "response.created":
            self._begin_call()
            return _NOTHING
        if kind in _THOUGHT_DELTAS:
            delta = getattr(data, "delta", "")
            if not delta:
                return _NOTHING
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
        return _NOTHING

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
        return self._started_call(item.raw_item)

    def _completed(self, item: ToolCallOutputItem) -> list[Payload]:
        raw = item.raw_item
        call_id = _field(raw, "call_id") or _field(raw, "id")
        if not call_id:
            return []
        sent = raw.get("output") if isinstance(raw, Mapping) else getattr(raw, "output", None)
        return self._completion(call_id, sent if sent is not None else item.output)

    # ------------------------------------------------------------------ run hooks (quiet plays)

    def model_response(self, agent: Any, response: ModelResponse) -> list[Payload]:
        """One model call's payloads from its whole reply: what a stream reports for it."""
        self._begin_call()
        self._in_call = False
        usage = usage_of(response.usage)
        self.usage.append(usage)
        model = getattr(agent, "model", None)
        payloads: list[Payload] = [
            UsageReported(model=model if isinstance(model, str) else None, usage=usage)
        ]
        handoffs: frozenset[str] | None = None
        for item in response.output:
            kind = getattr(item, "type", None)
            if kind == "message":
                text = "".join(
                    part.text or ""
                    for part in getattr(item, "content", ())
                    if getattr(part, "type", None) == "output_text"
                )
                payloads.append(
                    MessageCompleted(
                        message_id=self._message_id(getattr(item, "id", None)),
                        text=text,
                        agent=getattr(agent, "name", None),
                    )
                )
            elif kind == "function_call":
                if handoffs is None:
                    handoffs = _handoff_tools(agent)
                if _field(item, "name") not in handoffs:
                    payloads.extend(self._started_call(item))
            elif isinstance(kind, str) and kind.endswith("_call"):
                payloads.extend(self._started_call(item))
        return payloads

    def tool_ended(self, call_id: str | None, result: Any, tool_call: Any = None) -> list[Payload]:
        """``tool.call.completed`` for a call a tool just served (``on_tool_end``)."""
        if not call_id or call_id not in self.open_calls:
            return []
        if call_id not in self._scope.notes and tool_call is not None:
            # What the model receives: the SDK's own rendering of the result.
            result = ItemHelpers.tool_call_output_item(tool_call, result).get("output", result)
        return self._completion(call_id, result)

    def outputs_sent(self, items: Iterable[Any]) -> list[Payload]:
        """Completions for open calls whose output is among a model call's input items: calls
        no tool served (a rejected approval)."""
        if not self.open_calls:
            return []
        payloads: list[Payload] = []
        for item in items:
            if isinstance(item, Mapping) and item.get("type") == "function_call_output":
                call_id = item.get("call_id")
                if isinstance(call_id, str) and call_id in self.open_calls:
                    payloads.extend(self._completion(call_id, item.get("output")))
        return payloads

    def outputs_kept(self, items: Sequence[Any]) -> list[Payload]:
        """Completions for open calls whose output item a finished run holds but no hook
        reported (a call whose output ended the run, a rejection in its last step)."""
        if not self.open_calls:
            return []
        payloads: list[Payload] = []
        for item in items:
            if isinstance(item, ToolCallOutputItem):
                call_id = _field(item.raw_item, "call_id") or _field(item.raw_item, "id")
                if call_id and call_id in self.open_calls:
                    payloads.extend(self._completed(item))
        return payloads

    def _started_call(self, raw: Any) -> list[Payload]:
        call_id = _field(raw, "call_id") or _field(raw, "id")
        if not call_id:
            return []
        tool = _field(raw, "name") or _field(raw, "type") or "tool"
        self.open_calls[call_id] = tool
        return [started_event(call_id, tool, _field(raw, "arguments"))]

    def _completion(self, call_id: str, sent: Any) -> list[Payload]:
        tool = self.open_calls.pop(call_id, None) or "tool"
        emitted = self._scope.take_emitted(call_id)
        note = self._scope.notes.pop(call_id, None)
        if note is not None:
            return [*emitted, completed_event(call_id, tool, note.text, error=note.error)]
        return [*emitted, completed_event(call_id, tool, output_text(sent))]

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


def _handoff_tools(agent: Any) -> frozenset[str]:
    """The tool names under which ``agent`` offers its handoffs (their calls are no tool's)."""
    names = set()
    for target in getattr(agent, "handoffs", ()):
        if isinstance(target, Handoff):
            names.add(target.tool_name)
        else:
            names.add(Handoff.default_tool_name(target))
    return frozenset(names)


def _field(raw: Any, name: str) -> str | None:
    value = raw.get(name) if isinstance(raw, Mapping) else getattr(raw, name, None)
    return value if isinstance(value, str) else None
