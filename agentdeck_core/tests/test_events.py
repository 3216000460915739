"""The event envelope and its payloads, as ``reference-behaviour.md`` describes them.

Every payload kind round-trips exactly (object and JSON text), unknown kinds survive a reader that
does not know them, and everything malformed is an ``EventSchemaError`` that names what was wrong.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Annotated, Any, get_args

import pytest
from hypothesis import given
from pydantic import BaseModel, ValidationError

from agentdeck.errors import EventSchemaError
from agentdeck.model.events import SCHEMA_VERSION, Event, parse_payload
from agentdeck.model.field_types import KIND_PATTERN, OPEN_VOCABULARIES
from agentdeck.model.payloads import (
    PAYLOAD_TYPES,
    AnswerRecorded,
    Custom,
    NodeUpdated,
    Report,
    RunCancelled,
    RunInterrupted,
    RunPaused,
    RunStarted,
    StepCompleted,
    TextDelta,
    ToolCallStarted,
    UnknownEvent,
    payload_type,
)
from agentdeck.testing import event_examples as ex
from agentdeck.vocabulary import (
    LIFECYCLE_KINDS,
    SUSPENDING_KINDS,
    TERMINAL_KINDS,
    AnswerOrigin,
    ControlVerb,
    ErrorCode,
    InterruptReason,
    ReportLevel,
    SafePoint,
)

PAYLOAD_EXAMPLES: dict[type[Any], Any] = ex.PAYLOAD_EXAMPLES
ENVELOPE_ORDER = [
    "v",
    "kind",
    "seq",
    "run_id",
    "session_id",
    "namespace",
    "parent_run_id",
    "origin",
    "ts",
    "payload",
]


def _event_dict(kind: str, payload: dict[str, Any], **envelope: Any) -> dict[str, Any]:
    return {
        "v": {"major": 1, "minor": 0},
        "kind": kind,
        "seq": 0,
        "run_id": "r-1",
        "ts": "2025-03-04T05:06:07Z",
        **envelope,
        "payload": payload,
    }


def _event_json(kind: str, payload: dict[str, Any], **envelope: Any) -> str:
    return json.dumps(_event_dict(kind, payload, **envelope))


# --------------------------------------------------------------------------- every kind round-trips


@pytest.mark.parametrize("payload_cls", PAYLOAD_TYPES, ids=lambda t: t.KIND)
def test_every_kind_round_trips_as_an_equal_event(payload_cls: type[Any]) -> None:
    event = ex.record(PAYLOAD_EXAMPLES[payload_cls])
    back = Event.from_json(event.to_json())
    assert back == event
    assert type(back.payload) is payload_cls


@pytest.mark.parametrize("payload_cls", PAYLOAD_TYPES, ids=lambda t: t.KIND)
def test_every_kind_round_trips_as_identical_json_text(payload_cls: type[Any]) -> None:
    text = ex.record(PAYLOAD_EXAMPLES[payload_cls]).to_json()
    assert Event.from_json(text).to_json() == text
    assert Event.from_json(text.encode()).to_json() == text
    assert Event.from_dict(json.loads(text)).to_json() == text


@pytest.mark.parametrize("payload_cls", PAYLOAD_TYPES, ids=lambda t: t.KIND)
def test_every_kind_example_fills_every_field(payload_cls: type[Any]) -> None:
    """The round trips above exercise a field only if the example sets it to something."""
    example = PAYLOAD_EXAMPLES[payload_cls]
    assert type(example) is payload_cls
    unset = set(payload_cls.model_fields) - example.model_fields_set - {"kind"}
    assert not unset, f"the {payload_cls.KIND} example leaves {sorted(unset)} at their defaults"
    nulls = [name for name in payload_cls.model_fields if getattr(example, name) is None]
    assert not nulls, f"the {payload_cls.KIND} example leaves {nulls} null"


def test_every_kind_has_an_example_and_no_example_is_stale() -> None:
    covered = {type(p).KIND for p in PAYLOAD_EXAMPLES.values()}
    assert covered == {t.KIND for t in PAYLOAD_TYPES}
    assert set(PAYLOAD_EXAMPLES) == set(PAYLOAD_TYPES)
    assert {e.kind for e in ex.EXAMPLE_EVENTS} == covered


def test_kinds_are_unique_valid_and_looked_up_by_payload_type() -> None:
    kinds = [t.KIND for t in PAYLOAD_TYPES]
    assert len(kinds) == len(set(kinds))
    for payload_cls in PAYLOAD_TYPES:
        assert KIND_PATTERN.match(payload_cls.KIND)
        assert payload_cls.model_fields["kind"].default == payload_cls.KIND
        assert payload_type(payload_cls.KIND) is payload_cls
    assert payload_type("workflow.branch_taken") is None


def test_lifecycle_kind_sets_match_the_reference() -> None:
    assert {"run.completed", "run.failed", "run.cancelled"} == TERMINAL_KINDS
    assert {"run.paused", "run.interrupted"} == SUSPENDING_KINDS
    # Ours: run.queued / run.claimed, for an execution that queues runs for workers.
    assert (
        TERMINAL_KINDS
        | SUSPENDING_KINDS
        | {"run.started", "run.resumed", "run.queued", "run.claimed"}
    ) == LIFECYCLE_KINDS
    assert {t.KIND for t in PAYLOAD_TYPES} >= LIFECYCLE_KINDS


@pytest.mark.parametrize("payload_cls", PAYLOAD_TYPES, ids=lambda t: t.KIND)
def test_parse_payload_reads_a_payload_without_its_envelope(payload_cls: type[Any]) -> None:
    payload = PAYLOAD_EXAMPLES[payload_cls]
    assert parse_payload(payload.model_dump_json()) == payload
    assert parse_payload(payload.model_dump(mode="json")) == payload


# --------------------------------------------------------------------------- the envelope


def test_type_of_an_event_is_always_event() -> None:
    events = [*ex.EXAMPLE_EVENTS, Event.from_json(ex.UNKNOWN_EVENT_JSON)]
    for event in events:
        assert type(event) is Event
        assert type(Event.from_json(event.to_json())) is Event


def test_envelope_fields_are_written_in_the_reference_order() -> None:
    for event in ex.EXAMPLE_EVENTS:
        assert list(json.loads(event.to_json())) == ENVELOPE_ORDER
    assert list(Event.model_fields) == ENVELOPE_ORDER


def test_payload_repeats_the_kind_first() -> None:
    for event in ex.EXAMPLE_EVENTS:
        payload = json.loads(event.to_json())["payload"]
        assert next(iter(payload)) == "kind"
        assert payload["kind"] == event.kind


def test_the_written_version_is_the_current_one() -> None:
    event = ex.record(TextDelta(message_id="m", text="x"))
    assert event.v == SCHEMA_VERSION
    assert json.loads(event.to_json())["v"] == {"major": 1, "minor": 2}


def test_nulls_are_written_not_omitted() -> None:
    event = Event.record(RunCancelled(), seq=0, run_id="r-1", ts=ex.TS)
    data = json.loads(event.to_json())
    for name in ("session_id", "namespace", "parent_run_id", "origin"):
        assert name in data and data[name] is None
    assert data["payload"] == {"kind": "run.cancelled", "reason": None}


@pytest.mark.parametrize("payload_cls", PAYLOAD_TYPES, ids=lambda t: t.KIND)
def test_a_minimal_payload_writes_every_field(payload_cls: type[Any]) -> None:
    full = PAYLOAD_EXAMPLES[payload_cls]
    required = {n: getattr(full, n) for n, f in payload_cls.model_fields.items() if f.is_required()}
    minimal = payload_cls(**required)
    written = json.loads(ex.record(minimal).to_json())["payload"]
    assert set(written) == set(payload_cls.model_fields)
    assert Event.from_json(ex.record(minimal).to_json()) == ex.record(minimal)


def test_ts_is_written_in_utc_with_z() -> None:
    event = ex.record(TextDelta(message_id="m", text="x"))
    assert json.loads(event.to_json())["ts"] == "2025-03-04T05:06:07.891011Z"


def test_a_ts_in_another_zone_is_converted_to_utc() -> None:
    paris = timezone(timedelta(hours=2))
    event = ex.record(
        TextDelta(message_id="m", text="x"), ts=datetime(2025, 6, 1, 12, tzinfo=paris)
    )
    assert event.ts == datetime(2025, 6, 1, 10, tzinfo=UTC)
    assert event.ts.utcoffset() == timedelta(0)
    assert json.loads(event.to_json())["ts"] == "2025-06-01T10:00:00Z"
    read = Event.from_json(
        _event_json("report", {"kind": "report", "message": "m"}, ts="2025-06-01T12:00:00+02:00")
    )
    assert read.ts == event.ts
    assert json.loads(read.to_json())["ts"] == "2025-06-01T10:00:00Z"


def test_payload_times_are_written_in_utc_with_z() -> None:
    paris = timezone(timedelta(hours=2))
    wake = datetime(2025, 6, 1, 12, tzinfo=paris)
    paused = ex.record(RunPaused(wake_at=wake))
    started = ex.record(RunStarted(name="a", invocable_kind="agent", deadline=wake))
    assert json.loads(paused.to_json())["payload"]["wake_at"] == "2025-06-01T10:00:00Z"
    assert json.loads(started.to_json())["payload"]["deadline"] == "2025-06-01T10:00:00Z"


def test_a_naive_ts_is_refused() -> None:
    with pytest.raises(EventSchemaError) as refused:
        Event.from_json(
            _event_json("report", {"kind": "report", "message": "m"}, ts="2025-06-01T12:00:00")
        )
    assert refused.value.field == "ts"


def test_a_negative_seq_is_refused() -> None:
    with pytest.raises(EventSchemaError) as refused:
        Event.from_json(_event_json("report", {"kind": "report", "message": "m"}, seq=-1))
    assert refused.value.field == "seq"


def test_events_and_payloads_are_frozen() -> None:
    event = ex.record(TextDelta(message_id="m", text="x"))
    with pytest.raises(ValidationError):
        event.seq = 4
    with pytest.raises(ValidationError):
        event.payload.text = "y"


def test_terminal_and_suspending_helpers() -> None:
    by_kind = {e.kind: e for e in ex.EXAMPLE_EVENTS}
    for kind, event in by_kind.items():
        assert event.is_terminal == (kind in TERMINAL_KINDS)
        assert event.is_suspending == (kind in SUSPENDING_KINDS)


def test_unknown_envelope_fields_are_ignored() -> None:
    data = _event_dict("report", {"kind": "report", "message": "m"}, shard=7)
    event = Event.from_dict(data)
    assert "shard" not in json.loads(event.to_json())


# --------------------------------------------------------------------------- unknown kinds


def test_an_unknown_kind_parses_as_unknown_event_keeping_every_field() -> None:
    event = Event.from_json(ex.UNKNOWN_EVENT_JSON)
    assert isinstance(event.payload, UnknownEvent)
    assert event.kind == event.payload.kind == "workflow.branch_taken"
    assert event.payload.data == {
        "branch": "refund",
        "weights": [0.25, 0.75],
        "detail": {"why": "amount ≤ 50", "null": None},
        "blocks": [{"type": "hologram", "depth": 3}],
    }


def test_an_unknown_kind_reserializes_identically() -> None:
    event = Event.from_json(ex.UNKNOWN_EVENT_JSON)
    assert event.to_json() == ex.UNKNOWN_EVENT_JSON
    assert Event.from_json(event.to_json()) == event


def test_an_unknown_event_of_a_known_kind_is_refused() -> None:
    # It would serialize as a run.started and read back as one: not a faithful round trip.
    with pytest.raises(ValidationError, match="known kind"):
        UnknownEvent(kind="run.started")


@pytest.mark.parametrize(
    "kind",
    [
        "Run.Started",
        "run..started",
        "run.",
        ".run",
        "1run",
        "run-started",
        "",
        "run.started\n",
        "a b",
    ],
)
def test_an_invalid_kind_is_an_event_schema_error(kind: str) -> None:
    with pytest.raises(EventSchemaError) as refused:
        Event.from_json(_event_json(kind, {"kind": kind, "x": 1}))
    assert refused.value.field == "payload.kind"
    assert "not a valid event kind" in str(refused.value)
    assert not KIND_PATTERN.match(kind)


def test_a_payload_without_a_kind_is_an_event_schema_error() -> None:
    with pytest.raises(EventSchemaError) as refused:
        Event.from_json(_event_json("app.thing", {"x": 1}))
    assert refused.value.field == "payload.kind"


# --------------------------------------------------------------------------- malformed known kinds


@pytest.mark.parametrize(
    ("kind", "payload", "field"),
    [
        ("text.delta", {"text": "x"}, "payload.message_id"),
        ("text.delta", {"message_id": "m", "text": 5}, "payload.text"),
        ("run.failed", {"error_code": "deadline"}, "payload.message"),
        ("run.failed", {"error_code": 3, "message": "m"}, "payload.error_code"),
        ("run.started", {"name": "a", "invocable_kind": "agent", "input": "hi"}, "payload.input"),
        ("tool.call.started", {"call_id": ["c"], "tool": "t"}, "payload.call_id"),
        ("usage.reported", {"usage": "lots"}, "payload.usage"),
        ("usage.reported", {"usage": {"input_tokens": "many"}}, "payload.usage.input_tokens"),
        ("run.interrupted", {"reason": "human"}, "payload.interrupt_id"),
        ("plan.updated", {"items": [{"status": "done"}]}, "payload.items.0.title"),
        ("run.paused", {"wake_at": "tomorrow"}, "payload.wake_at"),
    ],
)
def test_a_malformed_known_payload_names_its_kind_and_field(
    kind: str, payload: dict[str, Any], field: str
) -> None:
    with pytest.raises(EventSchemaError) as refused:
        Event.from_json(_event_json(kind, {"kind": kind, **payload}))
    assert refused.value.kind == kind
    assert refused.value.field == field
    assert field in str(refused.value)
    assert kind in str(refused.value)


def test_a_malformed_payload_read_alone_names_its_field() -> None:
    with pytest.raises(EventSchemaError) as refused:
        parse_payload({"kind": "text.delta", "text": "x"})
    assert refused.value.kind == "text.delta"
    assert refused.value.field == "payload.message_id"


def test_malformed_json_is_an_event_schema_error() -> None:
    with pytest.raises(EventSchemaError):
        Event.from_json('{"kind": "report", ')
    with pytest.raises(EventSchemaError):
        Event.from_json("[]")


def test_unknown_fields_in_a_known_payload_are_ignored() -> None:
    plain = {"kind": "text.delta", "message_id": "m", "text": "x"}
    with_extra = {**plain, "language": "fr", "tokens": [1, 2]}
    event = Event.from_json(_event_json("text.delta", with_extra))
    assert event == Event.from_json(_event_json("text.delta", plain))
    assert json.loads(event.to_json())["payload"] == plain


def test_an_envelope_kind_that_disagrees_with_its_payload_is_refused() -> None:
    payload = {"kind": "thought.delta", "message_id": "m", "text": "x"}
    with pytest.raises(EventSchemaError) as refused:
        Event.from_json(_event_json("text.delta", payload))
    assert refused.value.field == "kind"
    assert "'text.delta'" in str(refused.value) and "'thought.delta'" in str(refused.value)


def test_an_unknown_envelope_kind_over_a_known_payload_is_refused() -> None:
    payload = {"kind": "text.delta", "message_id": "m", "text": "x"}
    with pytest.raises(EventSchemaError, match="disagrees"):
        Event.from_json(_event_json("text.delta_v2", payload))


# --------------------------------------------------------------------------- versions


@pytest.mark.parametrize("major", [0, 2, 17])
def test_another_schema_major_is_refused(major: int) -> None:
    # The payload is of another shape entirely: the reader hears about the version, not a field.
    data = _event_dict(
        "text.delta", {"kind": "text.delta", "body": 1}, v={"major": major, "minor": 0}
    )
    with pytest.raises(EventSchemaError) as refused:
        Event.from_json(json.dumps(data))
    assert refused.value.field == "v.major"
    assert f"major {major}" in str(refused.value)
    assert "reads major 1" in str(refused.value)


def test_another_schema_minor_is_read_and_kept() -> None:
    data = _event_dict(
        "text.delta",
        {"kind": "text.delta", "message_id": "m", "text": "x", "added_in_1_9": True},
        v={"major": 1, "minor": 9},
    )
    event = Event.from_json(json.dumps(data))
    assert (event.v.major, event.v.minor) == (1, 9)
    assert json.loads(event.to_json())["v"] == {"major": 1, "minor": 9}
    assert event.payload == TextDelta(message_id="m", text="x")


# --------------------------------------------------------------------------- open vocabularies


@pytest.mark.parametrize(
    ("kind", "field", "payload"),
    [
        ("run.failed", "error_code", {"error_code": "quota_exhausted", "message": "m"}),
        ("control.requested", "verb", {"verb": "snooze"}),
        ("control.observed", "safe_point", {"verb": "pause", "safe_point": "checkpoint"}),
        ("control.observed", "verb", {"verb": "snooze", "safe_point": "stream_item"}),
        ("report", "level", {"level": "debug", "message": "m"}),
        ("run.interrupted", "reason", {"interrupt_id": "i", "reason": "escalation"}),
        ("answer.recorded", "origin", {"interrupt_id": "i", "origin": "auditor"}),
        (
            "approval.decided",
            "origin",
            {"call_id": "c", "tool": "t", "approved": True, "origin": "auditor"},
        ),
    ],
)
def test_an_unknown_enum_value_parses_as_a_plain_string(
    kind: str, field: str, payload: dict[str, Any]
) -> None:
    event = Event.from_json(_event_json(kind, {"kind": kind, **payload}))
    value = getattr(event.payload, field)
    assert type(value) is str
    assert value == payload[field]
    assert Event.from_json(event.to_json()) == event


@pytest.mark.parametrize(
    ("kind", "field", "payload", "member"),
    [
        (
            "run.failed",
            "error_code",
            {"error_code": "deadline", "message": "m"},
            ErrorCode.DEADLINE,
        ),
        ("control.requested", "verb", {"verb": "cancel"}, ControlVerb.CANCEL),
        (
            "control.observed",
            "safe_point",
            {"verb": "pause", "safe_point": "node_boundary"},
            SafePoint.NODE_BOUNDARY,
        ),
        ("report", "level", {"level": "warning", "message": "m"}, ReportLevel.WARNING),
        (
            "run.interrupted",
            "reason",
            {"interrupt_id": "i", "reason": "approval"},
            InterruptReason.APPROVAL,
        ),
        (
            "answer.recorded",
            "origin",
            {"interrupt_id": "i", "origin": "policy"},
            AnswerOrigin.POLICY,
        ),
        (
            "approval.decided",
            "origin",
            {"call_id": "c", "tool": "t", "approved": True, "origin": "human"},
            AnswerOrigin.HUMAN,
        ),
    ],
)
def test_a_known_enum_value_parses_as_the_enum_member(
    kind: str, field: str, payload: dict[str, Any], member: Any
) -> None:
    event = Event.from_json(_event_json(kind, {"kind": kind, **payload}))
    assert getattr(event.payload, field) is member


def test_every_vocabulary_field_is_an_open_vocabulary() -> None:
    """A field typed with a vocabulary accepts it the open way: a known value as the member, any
    other string as it is (a plain ``Enum | str`` union would keep even known values as str)."""
    vocabularies = {enum for _, enum in OPEN_VOCABULARIES}
    open_types = {annotation for annotation, _ in OPEN_VOCABULARIES}
    for payload in PAYLOAD_TYPES:
        for name, info in payload.model_fields.items():
            annotation = (
                Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
            )
            if vocabularies & set(get_args(info.annotation)) or info.annotation in vocabularies:
                assert annotation in open_types, f"{payload.KIND}.{name}"


def test_reference_enum_values_are_all_known() -> None:
    assert {"engine_error", "tool_error", "budget_exceeded", "deadline", "cancelled_hard"} <= set(
        ErrorCode
    )
    assert {"cancel", "pause", "resume"} == set(ControlVerb)
    assert {"stream_item", "tool_dispatch", "node_boundary"} <= set(SafePoint)
    assert {"info", "warning", "error", "record"} == set(ReportLevel)


# --------------------------------------------------------------------------- custom events


@pytest.mark.parametrize("name", ["acme.invoice_seen", "app.thing", "a.b.c", "x1.y_2"])
def test_custom_accepts_a_namespaced_name(name: str) -> None:
    event = ex.record(Custom(name=name, data={"n": 1}))
    assert Event.from_json(event.to_json()) == event


@pytest.mark.parametrize(
    "name", ["thing", "", "App.Thing", "app.", ".thing", "app thing.x", "app.thing\n"]
)
def test_custom_requires_a_namespaced_name(name: str) -> None:
    with pytest.raises(ValidationError, match="namespaced"):
        Custom(name=name)
    with pytest.raises(EventSchemaError) as refused:
        Event.from_json(_event_json("custom", {"kind": "custom", "name": name}))
    assert refused.value.field == "payload.name"


# --------------------------------------------------------------------------- free-form JSON data


class _Point(BaseModel):
    x: int
    y: int


@pytest.mark.parametrize(
    ("given", "recorded"),
    [
        ((1, "a"), [1, "a"]),
        ({1: "one", 2.5: "x"}, {"1": "one", "2.5": "x"}),
        (_Point(x=1, y=2), {"x": 1, "y": 2}),
        (datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC), "2025-01-02T03:04:05Z"),
        (ReportLevel.ERROR, "error"),
        ({"nested": ({"t": (1,)},)}, {"nested": [{"t": [1]}]}),
        (2**70, 2**70),
    ],
)
def test_python_values_in_data_fields_are_recorded_as_their_json_form(
    given: Any, recorded: Any
) -> None:
    """What a store hands back equals what was recorded, in-memory store or durable one."""
    payloads = [
        Custom(name="app.thing", data=given),
        Report(message="m", fields={"k": given}),
        RunInterrupted(interrupt_id="i", payload=given),
        AnswerRecorded(interrupt_id="i", value=given),
        ToolCallStarted(call_id="c", tool="t", args=given),
        StepCompleted(index=0, name="s", result=given),
        NodeUpdated(node="n", update=given),
    ]
    for payload in payloads:
        event = ex.record(payload)
        assert Event.from_json(event.to_json()) == event, payload.kind
    assert Custom(name="app.thing", data=given).data == recorded
    assert Report(message="m", fields={"k": given}).fields == {"k": recorded}


@pytest.mark.parametrize(
    "value",
    [float("nan"), float("inf"), [1.0, float("-inf")], b"\xff\xfe", object()],
    ids=["nan", "inf", "nested-inf", "non-utf8-bytes", "object"],
)
def test_values_json_cannot_carry_are_refused(value: Any) -> None:
    with pytest.raises(ValidationError, match="not JSON data"):
        Custom(name="app.thing", data=value)
    with pytest.raises(EventSchemaError) as refused:
        Event.from_dict(
            {
                "kind": "custom",
                "seq": 0,
                "run_id": "r",
                "ts": ex.TS,
                "payload": {"kind": "custom", "name": "app.thing", "data": value},
            }
        )
    assert refused.value.field == "payload.data"


# --------------------------------------------------------------------------- property: round trips

payloads = ex.PAYLOAD_STRATEGY
envelopes = ex.ENVELOPE_STRATEGY


@given(payload=payloads, envelope=envelopes)
def test_random_payloads_round_trip_exactly(
    payload: TextDelta | Report | Custom, envelope: dict[str, Any]
) -> None:
    event = Event.record(payload, **envelope)
    text = event.to_json()
    back = Event.from_json(text)
    assert back == event
    assert back.to_json() == text
    assert json.loads(text)["payload"] == json.loads(payload.model_dump_json())
