"""What a model receives from a tool, and what the log records about it.

A tool may return anything. The model receives text: a string as it is, JSON data as its JSON
text, an image block as an image. A value JSON cannot carry is *not* coerced with ``repr()``
(whose memory address would reach both the prompt and the log, and make two identical results
hash differently): the model receives a plain error text naming the value's type, and the
``tool.call.completed`` event says the same in ``error``.

The log never stores a result in full: a capped preview, its size and the SHA-256 of the exact
text the model received. An image a tool returns is also an *artifact* of the run: it opens
``run.completed.output``, and ``artifact.created`` records it when the tool returns it
(:func:`artifact_event`).

A tool that raises is recorded by :func:`error_text`: the exception's type and message, with
anything shaped like a credential masked (:func:`agentdeck.observing.capture.mask_secrets`) and
capped like a preview. Exporters carry it further only under ``full`` content capture.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agents.tool import ToolOutputImage, ToolOutputText
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, from_json, to_json

from agentdeck.model.content import (
    AudioBlock,
    ContentBlock,
    DataBlock,
    ImageBlock,
    ResourceBlock,
    TextBlock,
    UnknownBlock,
)
from agentdeck.model.payloads import ArtifactCreated, ToolCallCompleted, ToolCallStarted
from agentdeck.observing.capture import mask_secrets
from agentdeck_openai.inputs import data_url

__all__ = [
    "PREVIEW_CHARS",
    "ParsedArguments",
    "RenderedResult",
    "artifact_event",
    "completed_event",
    "error_text",
    "json_text",
    "output_text",
    "parse_arguments",
    "render_result",
    "started_event",
]

PREVIEW_CHARS = 2000
"""Characters of a tool result kept in ``tool.call.completed.result_preview``."""

_BLOCKS = (TextBlock, ImageBlock, AudioBlock, ResourceBlock, DataBlock, UnknownBlock)


# --------------------------------------------------------------------------- arguments


@dataclass(frozen=True, slots=True)
class ParsedArguments:
    """The model's argument text, parsed. ``error`` set: ``value`` is the raw text, unparsed."""

    value: Any
    error: str | None = None


def parse_arguments(text: str | None) -> ParsedArguments:
    """Parse a tool call's JSON argument text; empty text is no arguments (``{}``)."""
    if text is None or not text.strip():
        return ParsedArguments({})
    try:
        value = json.loads(text)
    except json.JSONDecodeError as bad:
        return ParsedArguments(text, f"the arguments are not valid JSON ({bad.msg} at {bad.pos})")
    if not isinstance(value, dict):
        return ParsedArguments(
            text, f"the arguments are a JSON {type(value).__name__}, not an object"
        )
    return ParsedArguments(value)


def started_event(call_id: str, tool: str, arguments: str | None) -> ToolCallStarted:
    parsed = parse_arguments(arguments)
    return ToolCallStarted(call_id=call_id, tool=tool, args=parsed.value, args_error=parsed.error)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class RenderedResult:
    """A tool's return value as the model receives it.

    ``output`` is what the tool function handed to the SDK returns (text, or SDK output objects
    for images); ``text`` is the exact text the model receives, which the log hashes.
    """

    output: Any
    text: str
    error: str | None = None
    artifacts: tuple[ContentBlock, ...] = field(default=())


def json_text(value: Any) -> str:
    """JSON text of ``value`` after normalizing it to JSON data; raises ``ValueError`` when it
    has no JSON form (an arbitrary object, NaN)."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    try:
        data = from_json(to_json(value, inf_nan_mode="constants"), allow_inf_nan=False)
    except PydanticSerializationError as unserializable:
        raise ValueError("no JSON form") from unserializable
    return json.dumps(data, ensure_ascii=False)


def render_result(tool: str, value: Any) -> RenderedResult:
    """What the model receives for ``value``, returned by the tool named ``tool``."""
    if isinstance(value, str):
        return RenderedResult(value, value)
    if isinstance(value, _BLOCKS):
        return _render_blocks(tool, [value])
    if isinstance(value, list | tuple) and value and all(isinstance(v, _BLOCKS) for v in value):
        return _render_blocks(tool, list(value))
    try:
        text = json_text(value)
    except ValueError:
        return _refused(tool, value)
    return RenderedResult(text, text)


def _render_blocks(tool: str, blocks: list[ContentBlock]) -> RenderedResult:
    if len(blocks) == 1 and isinstance(blocks[0], TextBlock | DataBlock):
        text = blocks[0].text if isinstance(blocks[0], TextBlock) else json_text(blocks[0].data)
        return RenderedResult(text, text)
    parts: list[ToolOutputText | ToolOutputImage] = []
    shown: list[dict[str, Any]] = []
    artifacts: list[ContentBlock] = []
    for block in blocks:
        if isinstance(block, TextBlock | DataBlock):
            text = block.text if isinstance(block, TextBlock) else json_text(block.data)
            parts.append(ToolOutputText(text=text))
            shown.append({"type": "text", "text": text})
        elif isinstance(block, ImageBlock):
            url = data_url(block)
            parts.append(ToolOutputImage(image_url=url))
            shown.append({"type": "image", "image_url": url})
            artifacts.append(block)
        else:
            error = (
                f"returned a {block.type} block, which the openai engine cannot give a model as "
                "a tool result (it takes text, data and image blocks)"
            )
            message = f"Error: the tool '{tool}' {error}; its result is not available."
            return RenderedResult(message, message, error=error)
    return RenderedResult(parts, json.dumps(shown, ensure_ascii=False), artifacts=tuple(artifacts))


def _refused(tool: str, value: Any) -> RenderedResult:
    kind = type(value).__name__
    error = f"returned a {kind} value, which JSON cannot carry"
    message = (
        f"Error: the tool '{tool}' ran but returned a {kind} value that cannot be represented as "
        "JSON, so its result is not available. Do not assume what it contained."
    )
    return RenderedResult(message, message, error=error)


def error_text(error: BaseException) -> str:
    """What ``tool.call.completed.error`` records of an exception a tool raised: ``Type: message``
    (the type alone when it has no message), credentials masked, capped at
    :data:`PREVIEW_CHARS`."""
    message = str(error).strip()
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    text = mask_secrets(text)
    if len(text) > PREVIEW_CHARS:
        text = text[: PREVIEW_CHARS - 1] + "…"
    return text


def output_text(output: Any) -> str:
    """The text of a tool output item as the model received it (SDK output shapes included)."""
    if isinstance(output, str):
        return output
    if isinstance(output, BaseModel):
        return json.dumps(output.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
    if isinstance(output, Mapping | list):
        try:
            return json_text(output)
        except ValueError:
            pass
    return f"<{type(output).__name__}>"


def completed_event(
    call_id: str, tool: str, text: str, *, error: str | None = None
) -> ToolCallCompleted:
    """``tool.call.completed`` for ``text``: capped preview, exact size and hash."""
    encoded = text.encode("utf-8")
    return ToolCallCompleted(
        call_id=call_id,
        tool=tool,
        result_preview=text[:PREVIEW_CHARS],
        result_size=len(encoded),
        result_sha256=hashlib.sha256(encoded).hexdigest(),
        error=error,
    )


def artifact_event(call_id: str | None, index: int, block: ContentBlock) -> ArtifactCreated:
    """``artifact.created`` for the ``index``-th artifact a call's result carried.

    The artifact's id is ``<call id>/<index>``, unique in the run and the same on a replay. The
    bytes are inline, in the block that ``run.completed.output`` carries, so there is no ``uri``;
    ``size`` is their decoded length.
    """
    media_type = getattr(block, "media_type", None) or "application/octet-stream"
    data_b64 = getattr(block, "data_b64", None)
    size: int | None = None
    if isinstance(data_b64, str):
        try:
            size = len(base64.b64decode(data_b64))
        except (binascii.Error, ValueError):
            size = None  # not canonical base64: the model got it as sent, the log says no size
    return ArtifactCreated(
        artifact_id=f"{call_id or 'call'}/{index}", media_type=media_type, uri=None, size=size
    )
