"""Content blocks: the one shape input and output take at every boundary.

A turn's input, a run's output and the data a workflow node reports are lists of blocks. A string
given as input is coerced to one :class:`TextBlock` before any engine sees it, so every engine
meets the same thing.

Inline bytes (images, audio) and inline text are capped at :data:`INLINE_CAP_BYTES` when the
block is *constructed*: a block lives in an append-only log and is replayed down every stream of
its run, so the cap has to hold before anything can be recorded. Bigger payloads belong in a
:class:`ResourceBlock` that points at bytes held elsewhere.

The cap raises :class:`~agentdeck.errors.ContentTooLargeError` -- never a pydantic
``ValidationError`` and never an ``EventSchemaError`` -- whichever way the block comes into being:
a constructor call, a dict validated by :func:`content_blocks` or inside a payload, or JSON parsed
by ``Event.from_json``. Exactly :data:`INLINE_CAP_BYTES` is accepted; one byte more is refused.

Block types this release does not know (written by a newer one) parse as :class:`UnknownBlock`
and serialize back unchanged.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticSerializationError, from_json, to_json

from agentdeck.errors import ContentTooLargeError, InvalidInputError

__all__ = [
    "INLINE_CAP_BYTES",
    "AudioBlock",
    "ContentBlock",
    "DataBlock",
    "ImageBlock",
    "ResourceBlock",
    "TextBlock",
    "UnknownBlock",
    "content_blocks",
]

INLINE_CAP_BYTES = 8 * 1024 * 1024
"""Largest decoded size of one inline block, in bytes (8 MB)."""


def is_plain_json_scalar(value: Any) -> bool:
    """Whether ``value`` is a JSON scalar that normalizing to JSON would return unchanged.

    Exact types only (an ``IntEnum`` member becomes a plain ``int`` in JSON); non-ASCII text may
    hold lone surrogates, which JSON cannot carry, so only the round trip can judge it.
    """
    kind = type(value)
    if value is None or kind is bool or kind is int:
        return True
    if kind is float:
        return math.isfinite(value)
    return kind is str and value.isascii()


def _as_json_data(value: Any, info: ValidationInfo) -> Any:
    """``value`` as a JSON reader would get it back: what is recorded is what is read.

    Events are replayed from durable stores as JSON, so a value is normalized to its JSON form
    when the event (or block) is built -- tuples and sets become lists, models and dataclasses
    dicts, times ISO strings, non-string keys strings -- and the in-process event equals the one
    every store hands back. What JSON cannot carry at all (NaN, infinity, bytes that are not
    UTF-8, arbitrary objects) is refused here rather than silently changed by a later write.
    """
    if info.mode == "json" or is_plain_json_scalar(value):
        return value  # parsed from JSON text, or a scalar the round trip would give back as is
    try:
        return from_json(to_json(value, inf_nan_mode="constants"), allow_inf_nan=False)
    except PydanticSerializationError as exc:
        raise ValueError(f"value is not JSON data: {exc}") from None
    except ValueError:
        raise ValueError("value is not JSON data: NaN and infinity have no JSON form") from None


_JsonData = Annotated[Any, AfterValidator(_as_json_data)]
"""Any JSON value; Python values are normalized to their JSON form (see :func:`_as_json_data`)."""


def _decoded_base64_size(data_b64: str) -> int:
    """Size of the bytes ``data_b64`` decodes to, computed without decoding them.

    Exact for canonical base64, padded or not. Anything else (embedded newlines, junk) is
    over-estimated, never under-estimated: at most two trailing ``=`` count as padding, so a string
    of ``=`` cannot talk its way under the cap.
    """
    padding = min(2, len(data_b64) - len(data_b64.rstrip("=")))
    return (len(data_b64) * 3) // 4 - padding


def _require_type(schema: dict[str, Any]) -> None:
    # ``type`` has a default in Python but is always written, and it is what tells blocks apart:
    # required in the JSON Schema, so a non-Python reader's ``oneOf`` matches exactly one block.
    required = schema.setdefault("required", [])
    if "type" not in required:
        required.insert(0, "type")


class _Block(BaseModel):
    # Validators and serializers are built on first use, not at import: every command that reads
    # a store imports the models (through the ports), and most never validate a block.
    model_config = ConfigDict(
        frozen=True, extra="ignore", json_schema_extra=_require_type, defer_build=True
    )


class TextBlock(_Block):
    """Prose."""

    type: Literal["text"] = "text"
    text: str

    @model_validator(mode="after")
    def _cap(self) -> TextBlock:
        # len() bounds the UTF-8 size from below and 4*len() from above; encode only near the cap.
        if len(self.text) * 4 > INLINE_CAP_BYTES:
            size = len(self.text.encode("utf-8"))
            if size > INLINE_CAP_BYTES:
                raise ContentTooLargeError(block_type="text", size=size, limit=INLINE_CAP_BYTES)
        return self


class _InlineBytes(_Block):
    media_type: str
    data_b64: str

    @model_validator(mode="after")
    def _cap(self) -> _InlineBytes:
        size = _decoded_base64_size(self.data_b64)
        if size > INLINE_CAP_BYTES:
            raise ContentTooLargeError(
                block_type=str(self.type),  # type: ignore[attr-defined]
                size=size,
                limit=INLINE_CAP_BYTES,
            )
        return self


class ImageBlock(_InlineBytes):
    """An image carried inline as base64."""

    type: Literal["image"] = "image"


class AudioBlock(_InlineBytes):
    """Audio carried inline as base64: a voice note, a recorded call."""

    type: Literal["audio"] = "audio"


class ResourceBlock(_Block):
    """Bytes held elsewhere, referenced by ``uri`` rather than carried.

    Engines never fetch a resource themselves: one that cannot send the bytes refuses the block
    rather than sending only the pointer.
    """

    type: Literal["resource"] = "resource"
    uri: str
    media_type: str | None = None
    size: int | None = None


class DataBlock(_Block):
    """JSON as content: a structured result, a workflow's input or state."""

    type: Literal["data"] = "data"
    data: _JsonData


_KNOWN_BLOCKS = frozenset({"text", "image", "audio", "resource", "data"})


def _unknown_block_schema(schema: dict[str, Any]) -> None:
    _require_type(schema)
    schema["properties"]["type"]["not"] = {"enum": sorted(_KNOWN_BLOCKS)}


class UnknownBlock(_Block):
    """A block type this release does not know; kept whole so it round-trips unchanged.

    Only for types this release does not know: an ``UnknownBlock(type="text")`` would serialize
    as a text block and read back as a :class:`TextBlock`, so it is refused.
    """

    model_config = ConfigDict(frozen=True, extra="allow", json_schema_extra=_unknown_block_schema)

    type: str

    @field_validator("type")
    @classmethod
    def _not_a_known_type(cls, type_: str) -> str:
        if type_ in _KNOWN_BLOCKS:
            raise ValueError(f"{type_!r} is a known block type; build that block instead")
        return type_

    @model_serializer(mode="wrap")
    def _keep_everything(self, handler: Any) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        out.update(self.model_extra or {})
        return out


def _block_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    if isinstance(value, UnknownBlock):
        return "unknown"
    return kind if kind in _KNOWN_BLOCKS else "unknown"


ContentBlock = Annotated[
    Annotated[TextBlock, Tag("text")]
    | Annotated[ImageBlock, Tag("image")]
    | Annotated[AudioBlock, Tag("audio")]
    | Annotated[ResourceBlock, Tag("resource")]
    | Annotated[DataBlock, Tag("data")]
    | Annotated[UnknownBlock, Tag("unknown")],
    Discriminator(_block_tag),
]
"""Any content block, discriminated on ``type``; unknown types parse as :class:`UnknownBlock`."""

ContentBlocks = Annotated[list[ContentBlock], Field(default_factory=list)]

_blocks_adapter: TypeAdapter[list[ContentBlock]] = TypeAdapter(
    list[ContentBlock], config=ConfigDict(defer_build=True)
)
"""Built on its first use, like the blocks (built now, it would build every block at import)."""


def content_blocks(value: str | BaseModel | list[Any] | tuple[Any, ...]) -> list[ContentBlock]:
    """Coerce turn input to a list of blocks: a string becomes one :class:`TextBlock`.

    Dicts in the list are validated as blocks, so JSON from a wire reaches the same types. Input
    that is not a block raises :class:`~agentdeck.errors.InvalidInputError` naming the offending
    item; an inline block over the cap raises :class:`~agentdeck.errors.ContentTooLargeError`.
    """
    if isinstance(value, str):
        return [TextBlock(text=value)]
    items = [value] if isinstance(value, BaseModel) else list(value)
    try:
        return _blocks_adapter.validate_python(items)
    except ValidationError as exc:
        raise _invalid_input(exc, items) from None


def _invalid_input(exc: ValidationError, items: list[Any]) -> InvalidInputError:
    first = exc.errors()[0]
    loc = first.get("loc", ())
    index = loc[0] if loc and isinstance(loc[0], int) else 0
    where = f"input[{index}]"
    item = items[index] if index < len(items) else None
    if not isinstance(item, dict | BaseModel):
        problem = f"{where} ({type(item).__name__}) is not a content block"
    else:
        block = ".".join(str(p) for p in loc[1:2]) or "content"
        field = ".".join(str(p) for p in loc[2:]) or "type"
        problem = f"{where} is not a valid {block} block: {field}: {first.get('msg', 'invalid')}"
    return InvalidInputError(
        f"{problem}; pass a string, or a list of text/image/audio/resource/data blocks "
        "(TextBlock, ImageBlock, ... or dicts of their JSON form)",
        field=where,
    )
