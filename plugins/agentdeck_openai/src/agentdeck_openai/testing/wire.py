"""How one scripted :class:`~agentdeck_openai.testing.script.Turn` looks on the wire.

Both OpenAI APIs, streamed and not: Chat Completions (a ``chat.completion`` body, or
``chat.completion.chunk`` SSE lines ending in ``data: [DONE]``) and Responses (a ``response``
body, or the full typed event sequence a token UI reads: ``response.created`` →
``output_item.added`` → ``content_part.added`` → ``output_text.delta``\\* → ``output_text.done``
→ ``content_part.done`` → ``output_item.done`` → ``response.completed``, with reasoning summary
and function-call argument events in the same pattern).

A stream is a sequence of :class:`Frame` objects; ``paced`` marks the deltas before which a slow
turn waits. Ids are derived from the request's number, so they are unique per server and the same
on every run of a test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agentdeck_openai.testing.script import ToolCall, Turn, Usage

__all__ = ["Frame", "Rendering", "chat_body", "chat_stream", "responses_body", "responses_stream"]


@dataclass(frozen=True, slots=True)
class Frame:
    data: bytes
    paced: bool = False
    """A delta: a slow turn waits before sending it."""


@dataclass(frozen=True, slots=True)
class Rendering:
    """What a rendering needs besides the turn: ids, the model echoed, the request body."""

    number: int
    """1-based request number; every id in the answer derives from it."""
    model: str
    created: int
    request: dict[str, Any]

    def call_id(self, position: int, call: ToolCall) -> str:
        return call.call_id or f"call_{self.number}_{position}"


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""Built once: ``json.dumps`` with options builds an encoder per call, a third of the cost of
rendering a small stream event."""


def _json(value: Any) -> str:
    return _ENCODER.encode(value)


# =========================================================================== Chat Completions


def _chat_usage(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }


def _finish_reason(turn: Turn) -> str:
    return "tool_calls" if turn.calls else "stop"


def chat_body(turn: Turn, rendering: Rendering) -> dict[str, Any]:
    """A non-streamed ``chat.completion``."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": turn.reply_text,
        "refusal": None,
    }
    if turn.reasoning:
        message["reasoning_content"] = turn.reasoning_text
    if turn.calls:
        message["tool_calls"] = [
            {
                "id": rendering.call_id(i, c),
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for i, c in enumerate(turn.calls)
        ]
    body: dict[str, Any] = {
        "id": f"chatcmpl-{rendering.number}",
        "object": "chat.completion",
        "created": rendering.created,
        "model": rendering.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _finish_reason(turn),
                "logprobs": None,
            }
        ],
    }
    if turn.usage is not None:
        body["usage"] = _chat_usage(turn.usage)
    return body


def chat_stream(turn: Turn, rendering: Rendering) -> Iterator[Frame]:
    """``chat.completion.chunk`` lines: role, reasoning deltas, text deltas, each call's header
    then its argument deltas, the finish reason, a usage chunk, ``[DONE]``.

    The usage chunk is sent whether or not the request asked for ``stream_options``: the Agents
    SDK only asks when talking to OpenAI itself, yet counts usage it is sent.
    """
    head = {
        "id": f"chatcmpl-{rendering.number}",
        "object": "chat.completion.chunk",
        "created": rendering.created,
        "model": rendering.model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None, *, paced: bool = False) -> Frame:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return Frame(f"data: {_json({**head, 'choices': [choice]})}\n\n".encode(), paced)

    yield chunk({"role": "assistant"})
    for piece in turn.reasoning:
        yield chunk({"reasoning_content": piece}, paced=True)
    for piece in turn.text or ():
        yield chunk({"content": piece}, paced=True)
    for i, c in enumerate(turn.calls):
        opening = {
            "index": i,
            "id": rendering.call_id(i, c),
            "type": "function",
            "function": {"name": c.name, "arguments": ""},
        }
        yield chunk({"tool_calls": [opening]})
        for piece in c.argument_deltas:
            yield chunk(
                {"tool_calls": [{"index": i, "function": {"arguments": piece}}]}, paced=True
            )
    yield chunk({}, _finish_reason(turn))
    if turn.usage is not None:
        usage_chunk = {**head, "choices": [], "usage": _chat_usage(turn.usage)}
        yield Frame(f"data: {_json(usage_chunk)}\n\n".encode())
    yield Frame(b"data: [DONE]\n\n")


# =========================================================================== Responses


def _responses_usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens, "cache_write_tokens": 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.total_tokens,
    }


def _reasoning_item(rendering: Rendering, index: int, text: str | None) -> dict[str, Any]:
    summary = [] if text is None else [{"type": "summary_text", "text": text}]
    return {"id": f"rs_{rendering.number}_{index}", "type": "reasoning", "summary": summary}


def _output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _message_item(rendering: Rendering, index: int, text: str | None) -> dict[str, Any]:
    return {
        "id": f"msg_{rendering.number}_{index}",
        "type": "message",
        "role": "assistant",
        "status": "in_progress" if text is None else "completed",
        "content": [] if text is None else [_output_text(text)],
    }


def _call_item(rendering: Rendering, index: int, position: int, c: ToolCall) -> dict[str, Any]:
    """A completed function call: ``index`` in the output, ``position`` among the calls."""
    return {
        "id": f"fc_{rendering.number}_{index}",
        "type": "function_call",
        "call_id": rendering.call_id(position, c),
        "name": c.name,
        "arguments": c.arguments,
        "status": "completed",
    }


def _output(turn: Turn, rendering: Rendering) -> list[dict[str, Any]]:
    """The ``output`` items: reasoning, then the message, then the calls (output order)."""
    items: list[dict[str, Any]] = []
    if turn.reasoning:
        items.append(_reasoning_item(rendering, len(items), turn.reasoning_text))
    if turn.text is not None or not turn.calls:
        items.append(_message_item(rendering, len(items), turn.reply_text or ""))
    offset = len(items)
    items.extend(
        _call_item(rendering, offset + position, position, c)
        for position, c in enumerate(turn.calls)
    )
    return items


def _response(
    turn: Turn, rendering: Rendering, *, output: list[dict[str, Any]] | None
) -> dict[str, Any]:
    request = rendering.request
    done = output is not None
    return {
        "id": f"resp_{rendering.number}",
        "object": "response",
        "created_at": rendering.created,
        "status": "completed" if done else "in_progress",
        "model": rendering.model,
        "output": output if done else [],
        "usage": _responses_usage(turn.usage) if done and turn.usage is not None else None,
        "error": None,
        "incomplete_details": None,
        "instructions": request.get("instructions"),
        "metadata": {},
        "parallel_tool_calls": bool(request.get("parallel_tool_calls", True)),
        "temperature": request.get("temperature"),
        "top_p": request.get("top_p"),
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools", []),
        "text": request.get("text", {"format": {"type": "text"}}),
    }


def responses_body(turn: Turn, rendering: Rendering) -> dict[str, Any]:
    """A non-streamed ``response`` object."""
    return _response(turn, rendering, output=_output(turn, rendering))


def responses_stream(turn: Turn, rendering: Rendering) -> Iterator[Frame]:
    """The typed event sequence of one response (``event:`` and ``data:`` lines, no ``[DONE]``)."""
    sequence = 0

    def event(kind: str, fields: dict[str, Any], *, paced: bool = False) -> Frame:
        nonlocal sequence
        payload = {"type": kind, "sequence_number": sequence, **fields}
        sequence += 1
        return Frame(f"event: {kind}\ndata: {_json(payload)}\n\n".encode(), paced)

    output = _output(turn, rendering)
    yield event("response.created", {"response": _response(turn, rendering, output=None)})
    yield event("response.in_progress", {"response": _response(turn, rendering, output=None)})
    for index, item in enumerate(output):
        where = {"item_id": item["id"], "output_index": index}
        if item["type"] == "reasoning":
            yield event(
                "response.output_item.added",
                {"output_index": index, "item": {**item, "summary": []}},
            )
            part = {"type": "summary_text", "text": ""}
            yield event(
                "response.reasoning_summary_part.added", {**where, "summary_index": 0, "part": part}
            )
            for piece in turn.reasoning:
                yield event(
                    "response.reasoning_summary_text.delta",
                    {**where, "summary_index": 0, "delta": piece},
                    paced=True,
                )
            text = turn.reasoning_text
            yield event(
                "response.reasoning_summary_text.done", {**where, "summary_index": 0, "text": text}
            )
            done_part = {"type": "summary_text", "text": text}
            yield event(
                "response.reasoning_summary_part.done",
                {**where, "summary_index": 0, "part": done_part},
            )
        elif item["type"] == "message":
            opened = {**item, "status": "in_progress", "content": []}
            yield event("response.output_item.added", {"output_index": index, "item": opened})
            located = {**where, "content_index": 0}
            yield event("response.content_part.added", {**located, "part": _output_text("")})
            for piece in turn.text or ():
                yield event(
                    "response.output_text.delta",
                    {**located, "delta": piece, "logprobs": []},
                    paced=True,
                )
            text = turn.reply_text or ""
            yield event("response.output_text.done", {**located, "text": text, "logprobs": []})
            yield event("response.content_part.done", {**located, "part": _output_text(text)})
        else:
            c = turn.calls[index - (len(output) - len(turn.calls))]
            opened = {**item, "arguments": "", "status": "in_progress"}
            yield event("response.output_item.added", {"output_index": index, "item": opened})
            for piece in c.argument_deltas:
                yield event(
                    "response.function_call_arguments.delta", {**where, "delta": piece}, paced=True
                )
            yield event(
                "response.function_call_arguments.done",
                {**where, "name": c.name, "arguments": c.arguments},
            )
        yield event("response.output_item.done", {"output_index": index, "item": item})
    yield event("response.completed", {"response": _response(turn, rendering, output=output)})
