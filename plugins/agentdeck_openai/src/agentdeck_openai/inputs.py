"""A turn's content blocks as Agents SDK input, or a refusal naming the block.

* one text block is sent as the plain string (the conversation history then holds
  ``{"role": "user", "content": "<text>"}``, the shape the sessions page shows);
* anything else is one user message with one part per block: text as ``input_text``, an image as
  ``input_image`` with a ``data:`` URL, a data block as its own ``input_text`` part holding
  ``json.dumps(data, ensure_ascii=False)`` and nothing around it, audio as ``input_audio``.

An engine that cannot express a block refuses it with a ``ConfigError`` naming the block type
rather than dropping it: audio needs the Chat Completions path (``OPENAI_USE_RESPONSES=false``)
and only WAV or MP3; a ``ResourceBlock`` is a pointer, which this engine never fetches, so it is
refused rather than sent as a bare URI the model would never see the bytes of.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentdeck.errors import ConfigError
from agentdeck.model.content import (
    AudioBlock,
    ContentBlock,
    DataBlock,
    ImageBlock,
    ResourceBlock,
    TextBlock,
    content_blocks,
)

__all__ = ["AUDIO_FORMATS", "check_blocks", "data_url", "to_sdk_input", "turn_blocks"]

AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/vnd.wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}
"""Media types Chat Completions ``input_audio`` takes, and its format name for each."""


def data_url(block: ImageBlock | AudioBlock) -> str:
    """A block's bytes as a ``data:`` URL, the form the model APIs take inline media in."""
    return f"data:{block.media_type};base64,{block.data_b64}"


def turn_blocks(value: Any, *, use_responses: bool) -> list[ContentBlock]:
    """A caller's input (a string or content blocks) as the blocks ``run.started`` records,
    refusing (``ConfigError``) a block this engine cannot send -- before the run is opened."""
    blocks = content_blocks(value)
    check_blocks(blocks, use_responses=use_responses)
    return blocks


def check_blocks(blocks: Sequence[ContentBlock], *, use_responses: bool) -> None:
    """Refuse (``ConfigError``) any block this engine cannot send; see the module doc."""
    for index, block in enumerate(blocks):
        _part(block, index, use_responses=use_responses)


def to_sdk_input(blocks: Sequence[ContentBlock], *, use_responses: bool) -> str | list[Any]:
    """The SDK input for a turn of ``blocks``."""
    if len(blocks) == 1 and isinstance(blocks[0], TextBlock):
        return blocks[0].text
    parts = [_part(block, i, use_responses=use_responses) for i, block in enumerate(blocks)]
    return [{"role": "user", "content": parts}]


def _part(block: ContentBlock, index: int, *, use_responses: bool) -> dict[str, Any]:
    where = f"input[{index}]"
    if isinstance(block, TextBlock):
        return {"type": "input_text", "text": block.text}
    if isinstance(block, DataBlock):
        return {"type": "input_text", "text": json.dumps(block.data, ensure_ascii=False)}
    if isinstance(block, ImageBlock):
        return {"type": "input_image", "image_url": data_url(block), "detail": "auto"}
    if isinstance(block, AudioBlock):
        return _audio(block, where, use_responses=use_responses)
    if isinstance(block, ResourceBlock):
        raise ConfigError(
            f"{where} is a ResourceBlock ({block.uri!r}), which the openai engine refuses: a uri "
            "is a pointer, not content, and the engine never fetches it, so the model would not "
            "see the bytes. Read the resource and send its bytes as a text, image, audio or data "
            "block instead",
            setting="input",
            accepted=["text", "image", "audio", "data"],
        )
    kind = getattr(block, "type", type(block).__name__)
    raise ConfigError(
        f"{where} is a {kind!r} block, which the openai engine does not know how to send; it "
        "sends text, image, audio and data blocks",
        setting="input",
        accepted=["text", "image", "audio", "data"],
    )


def _audio(block: AudioBlock, where: str, *, use_responses: bool) -> dict[str, Any]:
    if use_responses:
        raise ConfigError(
            f"{where} is an AudioBlock, which the openai engine can only send through Chat "
            "Completions; set OPENAI_USE_RESPONSES=false to send audio",
            setting="OPENAI_USE_RESPONSES",
        )
    audio_format = AUDIO_FORMATS.get(block.media_type.lower())
    if audio_format is None:
        raise ConfigError(
            f"{where} is an AudioBlock of media type {block.media_type!r}; Chat Completions "
            f"takes audio as {', '.join(sorted(AUDIO_FORMATS))}",
            setting="input",
            accepted=sorted(AUDIO_FORMATS),
        )
    return {"type": "input_audio", "input_audio": {"data": block.data_b64, "format": audio_format}}
