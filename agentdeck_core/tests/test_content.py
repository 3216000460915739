"""Content blocks: the shape input and output take, and the 8 MB inline cap.

The cap is a :class:`ContentTooLargeError` (with ``size`` and ``limit``) however a block comes into
being: a constructor call, a dict, a list coerced by ``content_blocks``, a payload, or JSON read by
``Event.from_json``. Exactly 8 MiB decoded is accepted; one byte more is refused.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from agentdeck import ContentTooLargeError
from agentdeck.errors import AgentDeckError, InvalidInputError
from agentdeck.model.content import (
    INLINE_CAP_BYTES,
    AudioBlock,
    ContentBlock,
    DataBlock,
    ImageBlock,
    ResourceBlock,
    TextBlock,
    UnknownBlock,
    content_blocks,
)
from agentdeck.model.events import Event, parse_payload
from agentdeck.model.payloads import InputAppended, RunCompleted, RunStarted

MIB = 1024 * 1024
TS = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)
blocks_adapter: TypeAdapter[list[ContentBlock]] = TypeAdapter(list[ContentBlock])

EXAMPLES: list[ContentBlock] = [
    TextBlock(text="Hello, ✓ world"),
    ImageBlock(media_type="image/png", data_b64=base64.b64encode(b"\x89PNG\r\n").decode()),
    AudioBlock(media_type="audio/ogg", data_b64=base64.b64encode(b"OggS").decode()),
    ResourceBlock(uri="s3://bucket/receipt.pdf", media_type="application/pdf", size=52_113),
    DataBlock(data={"order_id": "A-1003", "lines": [1, 2.5, None, True]}),
    UnknownBlock.model_validate({"type": "video", "uri": "s3://b/c.mp4", "frames": 24}),
]
UNKNOWN_BLOCK_JSON = (
    '{"type":"hologram","depth":3,"layers":[{"name":"base","alpha":0.5}],"note":null,"ünï":"ç"}'
)


def _b64_of_size(size: int, *, padded: bool = True) -> str:
    encoded = base64.b64encode(b"\x00" * size).decode()
    return encoded if padded else encoded.rstrip("=")


def _started_json(block: dict[str, Any]) -> str:
    return json.dumps(
        {
            "v": {"major": 1, "minor": 0},
            "kind": "run.started",
            "seq": 0,
            "run_id": "r-1",
            "ts": "2025-03-04T05:06:07Z",
            "payload": {
                "kind": "run.started",
                "name": "Intake",
                "invocable_kind": "agent",
                "input": [block],
            },
        }
    )


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("block", EXAMPLES, ids=lambda b: str(b.type))
def test_every_block_type_round_trips(block: ContentBlock) -> None:
    text = blocks_adapter.dump_json([block]).decode()
    back = blocks_adapter.validate_json(text)
    assert back == [block]
    assert type(back[0]) is type(block)
    assert blocks_adapter.dump_json(back).decode() == text
    assert blocks_adapter.validate_python(json.loads(text)) == [block]


def test_every_known_block_type_has_an_example() -> None:
    assert {str(b.type) for b in EXAMPLES} >= {"text", "image", "audio", "resource", "data"}


@pytest.mark.parametrize("block", EXAMPLES, ids=lambda b: str(b.type))
def test_every_block_type_round_trips_inside_an_event(block: ContentBlock) -> None:
    event = Event.record(
        RunStarted(name="Intake", invocable_kind="agent", input=[block]), seq=0, run_id="r", ts=TS
    )
    assert Event.from_json(event.to_json()) == event
    assert Event.from_json(event.to_json()).to_json() == event.to_json()


def test_blocks_are_frozen() -> None:
    block = TextBlock(text="hi")
    with pytest.raises(ValidationError):
        block.text = "bye"  # type: ignore[misc]


def test_a_data_block_holds_json_data() -> None:
    assert DataBlock(data=(1, {2: "b"})).data == [1, {"2": "b"}]
    with pytest.raises(ValidationError, match="not JSON data"):
        DataBlock(data=float("nan"))


# --------------------------------------------------------------------------- content_blocks


def test_a_string_is_one_text_block() -> None:
    assert content_blocks("hi") == [TextBlock(text="hi")]
    assert content_blocks("") == [TextBlock(text="")]


def test_a_list_of_blocks_is_kept() -> None:
    assert content_blocks(list(EXAMPLES)) == EXAMPLES
    assert content_blocks(tuple(EXAMPLES)) == EXAMPLES


def test_a_single_block_becomes_a_list() -> None:
    assert content_blocks(TextBlock(text="hi")) == [TextBlock(text="hi")]


def test_dicts_from_a_wire_become_the_same_blocks() -> None:
    wire = [json.loads(blocks_adapter.dump_json([b]))[0] for b in EXAMPLES]
    assert content_blocks(wire) == EXAMPLES
    assert [type(b) for b in content_blocks(wire)] == [type(b) for b in EXAMPLES]


@pytest.mark.parametrize(
    ("value", "field", "fragment"),
    [
        ([{"type": "text"}], "input[0]", "text"),
        (
            [TextBlock(text="a"), {"type": "image", "media_type": "image/png"}],
            "input[1]",
            "data_b64",
        ),
        ([{"text": "no type"}], "input[0]", "type"),
        ([42], "input[0]", "int"),
        (["a string inside a list"], "input[0]", "str"),
    ],
)
def test_input_that_is_not_a_block_is_invalid_input(value: Any, field: str, fragment: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        content_blocks(value)
    assert refused.value.field == field
    assert field in str(refused.value) and fragment in str(refused.value)


# --------------------------------------------------------------------------- unknown block types


def test_an_unknown_block_type_round_trips_unchanged() -> None:
    (block,) = blocks_adapter.validate_json(f"[{UNKNOWN_BLOCK_JSON}]")
    assert isinstance(block, UnknownBlock)
    assert block.type == "hologram"
    assert block.model_dump() == json.loads(UNKNOWN_BLOCK_JSON)
    assert blocks_adapter.dump_json([block]).decode() == f"[{UNKNOWN_BLOCK_JSON}]"


def test_an_unknown_block_inside_run_started_input_round_trips_unchanged() -> None:
    text = _started_json(json.loads(UNKNOWN_BLOCK_JSON))
    event = Event.from_json(text)
    assert isinstance(event.payload, RunStarted)
    (block,) = event.payload.input
    assert isinstance(block, UnknownBlock)
    assert json.loads(event.to_json())["payload"]["input"] == [json.loads(UNKNOWN_BLOCK_JSON)]
    assert Event.from_json(event.to_json()).to_json() == event.to_json()
    assert UNKNOWN_BLOCK_JSON in event.to_json()


def test_an_unknown_block_inside_an_unknown_event_is_kept_as_data() -> None:
    text = json.dumps(
        {
            "kind": "run.narrated",
            "seq": 0,
            "run_id": "r",
            "ts": "2025-03-04T05:06:07Z",
            "payload": {"kind": "run.narrated", "blocks": [json.loads(UNKNOWN_BLOCK_JSON)]},
        }
    )
    event = Event.from_json(text)
    assert Event.from_json(event.to_json()) == event
    assert json.loads(event.to_json())["payload"]["blocks"] == [json.loads(UNKNOWN_BLOCK_JSON)]


@pytest.mark.parametrize("known", ["text", "image", "audio", "resource", "data"])
def test_an_unknown_block_of_a_known_type_is_refused(known: str) -> None:
    with pytest.raises(ValidationError, match="known block type"):
        UnknownBlock(type=known)


# --------------------------------------------------------------------------- the inline cap


def test_the_cap_is_8_mib() -> None:
    assert INLINE_CAP_BYTES == 8 * MIB


@pytest.mark.parametrize("block_cls", [ImageBlock, AudioBlock], ids=["image", "audio"])
@pytest.mark.parametrize("padded", [True, False], ids=["padded", "unpadded"])
def test_inline_bytes_of_exactly_the_cap_are_accepted(
    block_cls: type[ImageBlock | AudioBlock], padded: bool
) -> None:
    block = block_cls(
        media_type="application/octet-stream", data_b64=_b64_of_size(8 * MIB, padded=padded)
    )
    assert len(base64.b64decode(block.data_b64 + "=" * (-len(block.data_b64) % 4))) == 8 * MIB


@pytest.mark.parametrize("block_cls", [ImageBlock, AudioBlock], ids=["image", "audio"])
@pytest.mark.parametrize("padded", [True, False], ids=["padded", "unpadded"])
def test_inline_bytes_one_over_the_cap_are_refused(
    block_cls: type[ImageBlock | AudioBlock], padded: bool
) -> None:
    with pytest.raises(ContentTooLargeError) as refused:
        block_cls(
            media_type="application/octet-stream", data_b64=_b64_of_size(8 * MIB + 1, padded=padded)
        )
    error = refused.value
    assert not isinstance(error, ValidationError)
    assert isinstance(error, AgentDeckError)
    assert (error.size, error.limit) == (8 * MIB + 1, 8 * MIB)
    assert error.block_type == block_cls.model_fields["type"].default
    assert "ResourceBlock" in str(error) and str(8 * MIB + 1) in str(error)


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 5, 100, 1001])
def test_the_decoded_size_is_exact_for_small_payloads(size: int) -> None:
    # The cap is measured without decoding; measured exactly, padded or not.
    from agentdeck.model.content import _decoded_base64_size

    assert _decoded_base64_size(_b64_of_size(size)) == size
    assert _decoded_base64_size(_b64_of_size(size, padded=False)) == size


def test_padding_cannot_talk_a_block_under_the_cap() -> None:
    # A string of "=" decodes to nothing, but it still occupies the log: never counted negative.
    with pytest.raises(ContentTooLargeError):
        ImageBlock(media_type="image/png", data_b64="=" * (12 * MIB))


def test_text_of_exactly_the_cap_is_accepted() -> None:
    assert len(TextBlock(text="a" * (8 * MIB)).text) == 8 * MIB
    assert len(TextBlock(text="é" * (4 * MIB)).text.encode()) == 8 * MIB


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("a" * (8 * MIB + 1), 8 * MIB + 1),
        ("é" * (4 * MIB) + "a", 8 * MIB + 1),
        ("€" * (3 * MIB), 9 * MIB),
    ],
    ids=["ascii", "two-byte", "three-byte"],
)
def test_text_over_the_cap_is_refused_by_utf8_size(text: str, size: int) -> None:
    with pytest.raises(ContentTooLargeError) as refused:
        TextBlock(text=text)
    assert (refused.value.size, refused.value.limit, refused.value.block_type) == (
        size,
        8 * MIB,
        "text",
    )


OVER_CAP_BLOCKS = {
    "image": {"type": "image", "media_type": "image/png", "data_b64": _b64_of_size(8 * MIB + 1)},
    "audio": {"type": "audio", "media_type": "audio/ogg", "data_b64": _b64_of_size(8 * MIB + 1)},
    "text": {"type": "text", "text": "a" * (8 * MIB + 1)},
}


@pytest.mark.parametrize("block_type", list(OVER_CAP_BLOCKS))
def test_over_the_cap_from_a_dict_is_content_too_large(block_type: str) -> None:
    block = OVER_CAP_BLOCKS[block_type]
    with pytest.raises(ContentTooLargeError) as via_coercion:
        content_blocks([block])
    with pytest.raises(ContentTooLargeError):
        blocks_adapter.validate_python([block])
    assert via_coercion.value.size == 8 * MIB + 1


@pytest.mark.parametrize("block_type", list(OVER_CAP_BLOCKS))
def test_over_the_cap_from_json_is_content_too_large(block_type: str) -> None:
    with pytest.raises(ContentTooLargeError) as refused:
        blocks_adapter.validate_json(json.dumps([OVER_CAP_BLOCKS[block_type]]))
    assert refused.value.block_type == block_type


@pytest.mark.parametrize("block_type", list(OVER_CAP_BLOCKS))
def test_an_event_carrying_a_block_over_the_cap_is_content_too_large(block_type: str) -> None:
    """Documented choice: the cap is the same typed error on every path, reading included."""
    text = _started_json(OVER_CAP_BLOCKS[block_type])
    with pytest.raises(ContentTooLargeError) as from_json:
        Event.from_json(text)
    with pytest.raises(ContentTooLargeError):
        Event.from_dict(json.loads(text))
    assert isinstance(from_json.value, AgentDeckError)
    assert (from_json.value.size, from_json.value.limit) == (8 * MIB + 1, 8 * MIB)


@pytest.mark.parametrize("kind", ["input.appended", "run.completed"])
def test_every_payload_carrying_blocks_enforces_the_cap(kind: str) -> None:
    field = "input" if kind == "input.appended" else "output"
    with pytest.raises(ContentTooLargeError):
        parse_payload({"kind": kind, field: [OVER_CAP_BLOCKS["image"]]})
    with pytest.raises(ContentTooLargeError):
        Event.from_dict(
            {
                "kind": kind,
                "seq": 1,
                "run_id": "r",
                "ts": "2025-03-04T05:06:07Z",
                "payload": {"kind": kind, field: [OVER_CAP_BLOCKS["text"]]},
            }
        )
    payload_cls = InputAppended if kind == "input.appended" else RunCompleted
    assert kind == payload_cls.KIND
