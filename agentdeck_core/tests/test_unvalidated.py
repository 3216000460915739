"""Models built without validation (`agentdeck.model.unvalidated`) are the validated ones.

Every path that builds models directly -- the generic builder, the stored-event codec, the
envelope shortcuts of `Event.record` and `record_unchecked`, and the payload builders of
`agentdeck.model.trusted` -- is held to what validation builds from the same values, for every
payload kind and the envelope: equal, the same `model_dump`, fields set, JSON (and what that JSON
reads back as) and repr. A model the builder cannot build safely is refused, naming why.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator
from pydantic_core import from_json

from agentdeck.model import events as events_module
from agentdeck.model import trusted
from agentdeck.model.content import (
    AudioBlock,
    DataBlock,
    ImageBlock,
    ResourceBlock,
    TextBlock,
    UnknownBlock,
)
from agentdeck.model.events import Event, parse_payload, record_unchecked
from agentdeck.model.payloads import (
    PAYLOAD_TYPES,
    Custom,
    RunCompleted,
    RunFailed,
    RunStarted,
    TextDelta,
    UnknownEvent,
)
from agentdeck.model.unvalidated import (
    UnsafeModelError,
    builder,
    indistinguishable,
    sharing_fields_set,
    unsafe_because,
)
from agentdeck.storage import codec
from agentdeck.storage.codec import payload_to_json, stored_event, stored_payload
from agentdeck.testing import event_examples as ex

_BLOCK_TYPES = (TextBlock, ImageBlock, AudioBlock, ResourceBlock, DataBlock, UnknownBlock)
REFUSED_KINDS = {"custom"}  # a validator of its own (the namespaced name): always validated


def _same(fast: Any, slow: Any) -> None:
    """Everything a caller, a store or a serializer can observe of the two is the same."""
    assert type(fast) is type(slow)
    assert fast == slow
    assert fast.model_dump() == slow.model_dump()
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.model_dump_json() == slow.model_dump_json()
    assert type(slow).model_validate_json(fast.model_dump_json()) == slow  # the JSON round trip
    assert repr(fast) == repr(slow)
    assert indistinguishable(fast, slow)


def _values(model: BaseModel) -> dict[str, Any]:
    """A model's field values, in declaration order: the values validation stored."""
    return {name: getattr(model, name) for name in type(model).model_fields}


def _holds_blocks(payload: BaseModel) -> bool:
    """Whether a field holds content blocks, which only validation reads back."""
    return any(
        isinstance(value, list) and any(isinstance(item, _BLOCK_TYPES) for item in value)
        for value in _values(payload).values()
    )


@pytest.mark.parametrize("payload_cls", PAYLOAD_TYPES, ids=lambda t: t.KIND)
@given(data=st.data(), envelope=ex.ENVELOPE_STRATEGY)
def test_every_unvalidated_path_builds_what_validation_builds(
    payload_cls: type[Any], data: st.DataObject, envelope: dict[str, Any]
) -> None:
    payload = data.draw(ex.payloads_of(payload_cls))

    # The generic builder, given the values validation stored (refused for a model it cannot
    # build safely: the codec and `Event.record` then validate it, below).
    if payload.KIND in REFUSED_KINDS:
        assert unsafe_because(payload_cls)
        with pytest.raises(UnsafeModelError, match=payload_cls.__name__):
            builder(payload_cls)
    else:
        build = builder(payload_cls, fields_set=payload.model_fields_set)
        _same(build(_values(payload)), payload)

    # The codec: a payload-only row, and a whole envelope row.
    payload_row = payload_to_json(payload)
    _same(stored_payload(payload_row), parse_payload(payload_row))
    event = Event.record(payload, **envelope)
    row = event.to_json()
    _same(stored_event(row), Event.from_json(row))
    if payload.KIND not in REFUSED_KINDS and not _holds_blocks(payload):
        # ...built directly, not by falling back to validation.
        _same(codec._direct_reader()(from_json(row)), Event.from_json(row))

    # The envelope: `Event.record` (any zone) and `record_unchecked` (a store's UTC time).
    validated = Event(kind=payload.kind, payload=payload, **envelope)
    _same(event, validated)
    utc = {**envelope, "ts": envelope["ts"].astimezone(UTC)}
    parts = [utc[name] for name in ("seq", "run_id", "ts")]
    ids = [utc[name] for name in ("session_id", "namespace", "parent_run_id", "origin")]
    _same(record_unchecked(payload, *parts, *ids), Event(kind=payload.kind, payload=payload, **utc))

    # The payload builders the runtime and the engines use.
    if isinstance(payload, RunStarted):
        arguments = _values(payload)
        del arguments["kind"]
        # The builder's trace_context=None (or no origin, no budget) means "none given", as
        # leaving it out of RunStarted.
        optional = ("trace_context", "forked_from", "retry_of", "budget")
        given = {k: v for k, v in arguments.items() if k not in optional or v is not None}
        _same(trusted.started(**arguments), RunStarted(**given))
    if isinstance(payload, RunCompleted):
        _same(trusted.completed(payload.output), RunCompleted(output=payload.output))


@given(value=ex.JSON_VALUES)
def test_a_data_block_built_without_validation_is_the_validated_one(value: Any) -> None:
    _same(trusted.data_block(value), DataBlock(data=value))


def test_every_shortcut_is_on_for_this_pydantic() -> None:
    assert events_module._direct() and events_module.record_unchecked is events_module._record_built
    assert trusted._ENABLED
    assert codec._reader() is not Event.from_json
    assert set(codec._payload_readers()) == {t.KIND for t in PAYLOAD_TYPES} - REFUSED_KINDS


# --------------------------------------------------------------------------- what is refused


class _Open(BaseModel):
    text: str


class _Private(BaseModel):
    model_config = ConfigDict(frozen=True)
    text: str
    _cache: int = PrivateAttr(default=0)


class _PostInit(BaseModel):
    model_config = ConfigDict(frozen=True)
    text: str

    def model_post_init(self, context: Any, /) -> None:
        pass


class _Aliased(BaseModel):
    model_config = ConfigDict(frozen=True)
    text: str = Field(alias="body")


class _Checked(BaseModel):
    model_config = ConfigDict(frozen=True)
    text: str

    @field_validator("text")
    @classmethod
    def _short(cls, text: str) -> str:
        if len(text) > 3:
            raise ValueError("too long")
        return text


class _Plain(BaseModel):
    model_config = ConfigDict(frozen=True)
    text: str


@pytest.mark.parametrize(
    ("cls", "vouched", "why"),
    [
        pytest.param(_Open, (), "not frozen", id="not-frozen"),
        pytest.param(UnknownEvent, (), "keeps extra fields", id="extra-allowed"),
        pytest.param(_Private, (), "private attributes", id="private-attributes"),
        pytest.param(_PostInit, (), "model_post_init", id="post-init"),
        pytest.param(_Aliased, (), "aliases", id="aliases"),
        pytest.param(_Checked, (), "_short would not run", id="a-validator"),
        pytest.param(Custom, (), "_namespaced would not run", id="a-payload-validator"),
        pytest.param(Event, (), "_consistent, _readable_major would not run", id="the-envelope"),
        pytest.param(Event, ("_consistent",), "_readable_major would not run", id="half-vouched"),
        pytest.param(_Plain, ("_gone",), "_gone is vouched for", id="stale-vouching"),
    ],
)
def test_a_model_that_is_unsafe_to_build_directly_is_refused_naming_why(
    cls: type[BaseModel], vouched: tuple[str, ...], why: str
) -> None:
    assert any(why in reason for reason in unsafe_because(cls, vouched=vouched))
    with pytest.raises(UnsafeModelError, match=why):
        builder(cls, vouched=vouched)


def test_a_validator_the_caller_vouches_for_lets_the_model_be_built() -> None:
    build = builder(_Checked, vouched=("_short",))
    assert build({"text": "abcdef"}).text == "abcdef"  # the caller's promise, not checked
    assert unsafe_because(Event, vouched=("_readable_major", "_consistent")) == []


def test_a_fields_set_naming_what_is_no_field_is_refused() -> None:
    with pytest.raises(UnsafeModelError, match="nope"):
        builder(_Plain, fields_set={"text", "nope"})


def test_models_a_builder_makes_share_one_fields_set_and_stay_frozen() -> None:
    build = builder(TextDelta)
    one = build({"kind": "text.delta", "message_id": "m", "text": "a"})
    two = build({"kind": "text.delta", "message_id": "m", "text": "b"})
    assert one.model_fields_set is two.model_fields_set
    with pytest.raises(ValidationError, match="frozen"):
        one.text = "c"  # type: ignore[misc]
    copied = one.model_copy(update={"text": "c"})
    assert copied.text == "c" and one.text == "a"
    assert copied.model_fields_set is not one.model_fields_set


def test_validated_models_with_every_field_set_share_one_set() -> None:
    read = sharing_fields_set(TextDelta, TextDelta.model_validate_json)
    one = read('{"kind": "text.delta", "message_id": "m", "text": "a"}')
    two = read('{"kind": "text.delta", "message_id": "m", "text": "b"}')
    assert one.model_fields_set is two.model_fields_set == set(TextDelta.model_fields)
    partial = read('{"message_id": "m", "text": "a"}')
    assert partial.model_fields_set == {"message_id", "text"}
    make = _Open.model_validate
    assert sharing_fields_set(_Open, make) is make  # not frozen: each keeps a set of its own


def test_indistinguishable_tells_a_plain_string_from_an_enum_member_and_zones_apart() -> None:
    member = ex.PAYLOAD_EXAMPLES[RunFailed]
    as_string = builder(RunFailed)({**_values(member), "error_code": str(member.error_code)})
    assert as_string == member  # equal, as a StrEnum member equals its value...
    assert not indistinguishable(as_string, member)  # ...but not the same field type
    utc = ex.record(TextDelta(message_id="m", text="t"))
    elsewhere = builder(Event, vouched=("_readable_major", "_consistent"))(
        {**_values(utc), "ts": utc.ts.astimezone(timezone(timedelta(0), "Z"))}
    )
    assert not indistinguishable(elsewhere, utc)


# --------------------------------------------------------------------------- Event.record


@pytest.mark.parametrize("event", ex.EXAMPLE_EVENTS, ids=lambda e: e.kind)
def test_record_builds_what_validation_builds(event: Event) -> None:
    envelope: dict[str, Any] = {
        "seq": event.seq,
        "run_id": event.run_id,
        "ts": event.ts,
        "session_id": event.session_id,
        "namespace": event.namespace,
        "parent_run_id": event.parent_run_id,
        "origin": event.origin,
    }
    recorded = Event.record(event.payload, **envelope)
    validated = Event(kind=event.kind, payload=event.payload, **envelope)
    assert events_module._recorded(event.payload, *envelope.values()) is not None
    _same(recorded, validated)
    assert recorded.payload is event.payload


def test_record_unchecked_takes_an_unknown_event_as_validation_does() -> None:
    payload = Event.from_json(ex.UNKNOWN_EVENT_JSON).payload
    assert isinstance(payload, UnknownEvent)
    parts = (9, "r", ex.TS, None, "acme", None, "Refunds")
    _same(
        record_unchecked(payload, *parts),
        Event(
            kind=payload.kind,
            seq=9,
            run_id="r",
            ts=ex.TS,
            session_id=None,
            namespace="acme",
            parent_run_id=None,
            origin="Refunds",
            payload=payload,
        ),
    )


def test_record_validates_what_it_cannot_take_as_given() -> None:
    payload = TextDelta(message_id="m", text="t")
    elsewhere = datetime(2025, 3, 4, 7, 6, 7, tzinfo=timezone(timedelta(hours=2)))
    assert events_module._recorded(payload, 1, "r", elsewhere, None, None, None, None) is None
    assert Event.record(payload, seq=1, run_id="r", ts=elsewhere).ts.tzinfo is UTC
    unknown = UnknownEvent(kind="app.thing")
    assert events_module._recorded(unknown, 1, "r", ex.TS, None, None, None, None) is None
    with pytest.raises(ValidationError):
        Event.record(payload, seq=-1, run_id="r", ts=ex.TS)
    with pytest.raises(ValidationError):
        Event.record(payload, seq=1, run_id="r", ts=datetime(2025, 3, 4))  # naive
