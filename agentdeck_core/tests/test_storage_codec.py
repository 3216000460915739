"""The stored-event codec (`agentdeck.storage.codec`): rows read back exactly as
`Event.from_json` reads them, faster; and the collector pause its batches take.

A row in the shape `Event.to_json` writes is built without pydantic's full validation. Every
test here compares against `Event.from_json` on the same text, so what the shortcut builds (or
refuses) is held to the validated result: equality, repr, JSON, the fields set, the enum members
and the UTC zone object; and every row that is not plain must take the validated path, errors
included.
"""

from __future__ import annotations

import gc
import json
import threading
from typing import Any

import pytest
from hypothesis import given

from agentdeck.errors import EventSchemaError
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    PAYLOAD_TYPES,
    RunFailed,
    RunPaused,
    TextDelta,
    UnknownEvent,
    Usage,
    UsageReported,
)
from agentdeck.storage import codec
from agentdeck.storage.codec import COLLECTOR_PAUSE, stored_event, stored_events
from agentdeck.testing import event_examples as ex
from agentdeck.vocabulary import ErrorCode, WaitKind

VALIDATED_KINDS = {"custom"}  # a validator of its own (the namespaced name): left to validation


def _same(fast: Event, slow: Event) -> None:
    """Everything a caller can observe of the two events is the same."""
    assert type(fast) is Event
    assert fast == slow
    assert repr(fast) == repr(slow)
    assert fast.to_json() == slow.to_json()
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.payload.model_fields_set == slow.payload.model_fields_set
    assert type(fast.payload) is type(slow.payload)
    assert fast.ts.tzinfo is slow.ts.tzinfo
    assert list(fast.__dict__) == list(slow.__dict__)
    assert list(fast.payload.__dict__) == list(slow.payload.__dict__)
    for name in type(slow.payload).model_fields:
        assert type(getattr(fast.payload, name)) is type(getattr(slow.payload, name)), name


def _validated_only(monkeypatch: pytest.MonkeyPatch) -> list[str | bytes]:
    """Record every row that falls back to `Event.from_json`."""
    fallbacks: list[str | bytes] = []
    original = Event.from_json

    def spy(data: str | bytes) -> Event:
        fallbacks.append(data)
        return original(data)

    monkeypatch.setattr(Event, "from_json", spy)
    return fallbacks


def test_the_shortcut_is_on_for_this_pydantic() -> None:
    assert codec._fast_read_matches(codec._direct_reader())
    assert codec._reader() is not Event.from_json


@pytest.mark.parametrize("event", ex.EXAMPLE_EVENTS, ids=lambda e: e.kind)
def test_every_kind_reads_back_as_from_json_does(event: Event) -> None:
    row = event.to_json()
    _same(stored_event(row), Event.from_json(row))
    _same(stored_event(row.encode()), Event.from_json(row))


@pytest.mark.parametrize("payload_cls", PAYLOAD_TYPES, ids=lambda t: t.KIND)
def test_a_minimal_payload_reads_back_as_from_json_does(payload_cls: type[Any]) -> None:
    example = ex.PAYLOAD_EXAMPLES[payload_cls]
    required = {
        name: getattr(example, name)
        for name, field in payload_cls.model_fields.items()
        if field.is_required()
    }
    row = ex.record(payload_cls(**required), session_id=None, namespace=None).to_json()
    _same(stored_event(row), Event.from_json(row))


def test_plain_rows_are_built_without_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [e.to_json() for e in ex.EXAMPLE_EVENTS if not e.payload.model_dump().get("input")]
    rows += [e.to_json() for e in ex.EXAMPLE_EVENTS if e.kind == "run.started"]
    fallbacks = _validated_only(monkeypatch)
    read = stored_events(rows)
    assert [e.to_json() for e in read] == rows
    fell_back = {json.loads(row)["kind"] for row in fallbacks}
    # Content blocks and validators of their own are read by validation; everything else is not.
    content_kinds = {
        e.kind
        for e in ex.EXAMPLE_EVENTS
        if '"type":' in json.dumps(e.payload.model_dump(mode="json"))
    }
    assert fell_back <= VALIDATED_KINDS | content_kinds
    assert "text.delta" not in fell_back and "run.failed" not in fell_back


def test_postgres_jsonb_key_order_reads_back_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """JSONB keeps keys shorter-first, not in the order they were written."""
    event = ex.record(RunFailed(error_code=ErrorCode.DEADLINE, message="late", where="tool"))
    row = event.to_json()
    data = json.loads(row)
    jsonb_like = json.dumps(
        {
            key: (
                dict(sorted(value.items(), key=lambda kv: (len(kv[0]), kv[0])))
                if isinstance(value, dict)
                else value
            )
            for key, value in sorted(data.items(), key=lambda kv: (len(kv[0]), kv[0]))
        }
    )
    assert jsonb_like != row
    validated = Event.from_json(row)
    fallbacks = _validated_only(monkeypatch)
    _same(stored_event(jsonb_like), validated)
    assert fallbacks == []


@pytest.mark.parametrize(
    "paused",
    [
        RunPaused(
            reason="waiting for child run c-1, c-2",
            waiting_on=WaitKind.CHILD_RUNS,
            waiting_for=["c-1", "c-2"],
        ),
        RunPaused(reason="sleep", wake_at=ex.TS, waiting_on=WaitKind.TIMER),
        RunPaused(waiting_on="a_wait_a_newer_minor_adds"),
        RunPaused(reason="operator"),
    ],
    ids=["children", "timer", "unknown-kind", "operator"],
)
def test_a_pause_saying_what_it_waits_on_is_read_without_validation(
    paused: RunPaused, monkeypatch: pytest.MonkeyPatch
) -> None:
    row = ex.record(paused).to_json()
    validated = Event.from_json(row)
    fallbacks = _validated_only(monkeypatch)
    read = stored_event(row)
    assert fallbacks == []
    _same(read, validated)
    assert isinstance(read.payload, RunPaused)
    assert read.payload.waiting_on == paused.waiting_on
    assert read.payload.waiting_for == paused.waiting_for
    if paused.waiting_on in set(WaitKind):
        assert isinstance(read.payload.waiting_on, WaitKind)


def test_a_pause_written_before_typed_waits_reads_back_as_waiting_on_nothing() -> None:
    data = json.loads(ex.record(RunPaused(reason="waiting for child run c-1")).to_json())
    del data["payload"]["waiting_on"], data["payload"]["waiting_for"]
    row = json.dumps(data)
    read = stored_event(row)
    _same(read, Event.from_json(row))
    assert isinstance(read.payload, RunPaused)
    assert read.payload.waiting_on is None and read.payload.waiting_for == []


def _with(row: str, path: tuple[str, ...], value: Any) -> str:
    data = json.loads(row)
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(data)


_PLAIN = ex.record(TextDelta(message_id="m", text="hello")).to_json()
_USAGE = ex.record(UsageReported(model="m", usage=Usage(requests=1, usd=2.5))).to_json()
_ODD_BUT_VALID = [
    pytest.param(_with(_PLAIN, ("ts",), "2025-03-04T07:06:07.5+02:00"), id="ts-in-another-zone"),
    pytest.param(_with(_PLAIN, ("ts",), "2025-03-04T05:06:07.891Z"), id="ts-millis"),
    pytest.param(_with(_PLAIN, ("v", "minor"), 7), id="newer-minor"),
    pytest.param(_with(_PLAIN, ("payload", "newer_field"), [1]), id="unknown-payload-field"),
    pytest.param(_with(_PLAIN, ("newer_envelope_field",), "x"), id="unknown-envelope-field"),
    pytest.param(_with(_USAGE, ("payload", "usage", "usd"), 3), id="int-where-float"),
    pytest.param(_with(_USAGE, ("payload", "usage", "requests"), 2.0), id="whole-float-as-int"),
    # Lax validation turns these into ints; the shortcut leaves them to it.
    pytest.param(_with(_USAGE, ("payload", "usage", "requests"), True), id="bool-for-int"),
    pytest.param(_with(_PLAIN, ("v", "major"), True), id="bool-major"),
    pytest.param(_with(_PLAIN, ("seq",), True), id="bool-seq"),
    pytest.param(_with(_PLAIN, ("seq",), "3"), id="string-seq"),
    pytest.param(
        _with(_PLAIN, ("kind",), "app.thing").replace(
            '"kind": "text.delta"', '"kind": "app.thing"'
        ),
        id="unknown-kind",
    ),
    pytest.param(ex.UNKNOWN_EVENT_JSON, id="unknown-kind-newer-minor"),
    pytest.param(
        json.dumps({k: v for k, v in json.loads(_PLAIN).items() if k != "session_id"}),
        id="missing-optional-envelope-field",
    ),
]


@pytest.mark.parametrize("row", _ODD_BUT_VALID)
def test_rows_not_in_the_written_shape_read_as_from_json_does(row: str) -> None:
    _same(stored_event(row), Event.from_json(row))


def test_an_unknown_kind_is_kept_whole() -> None:
    event = stored_event(ex.UNKNOWN_EVENT_JSON)
    assert isinstance(event.payload, UnknownEvent)
    assert event.payload.data["branch"] == "refund"


_REFUSED = [
    pytest.param(_with(_PLAIN, ("v", "major"), 2), id="another-major"),
    pytest.param(_with(_PLAIN, ("seq",), -1), id="negative-seq"),
    pytest.param(_with(_PLAIN, ("run_id",), None), id="null-run-id"),
    pytest.param(_with(_PLAIN, ("ts",), "2025-03-04T05:06:07"), id="naive-ts"),
    pytest.param(_with(_PLAIN, ("ts",), "2025-W10-2T05:06:07Z"), id="week-date-ts"),
    pytest.param(_with(_PLAIN, ("ts",), "2025-13-04T05:06:07Z"), id="month-13"),
    pytest.param(_with(_PLAIN, ("payload", "kind"), "thought.delta"), id="payload-kind-differs"),
    pytest.param(_with(_PLAIN, ("payload", "text"), 5), id="number-for-text"),
    pytest.param(_with(_PLAIN, ("payload", "message_id"), None), id="null-required-field"),
    pytest.param(_with(_USAGE, ("payload", "usage"), None), id="null-nested-model"),
    pytest.param(_PLAIN[:-5], id="truncated-json"),
    pytest.param("[1, 2]", id="not-an-object"),
]


@pytest.mark.parametrize("row", _REFUSED)
def test_what_validation_refuses_is_refused_with_its_error(row: str) -> None:
    with pytest.raises(EventSchemaError) as validated:
        Event.from_json(row)
    with pytest.raises(EventSchemaError) as stored:
        stored_event(row)
    assert str(stored.value) == str(validated.value)
    assert stored.value.kind == validated.value.kind
    assert stored.value.field == validated.value.field


def test_a_bad_row_among_good_ones_raises_like_from_json() -> None:
    rows = [_PLAIN] * 300 + [_with(_PLAIN, ("seq",), -1)]
    with pytest.raises(EventSchemaError, match="seq"):
        stored_events(rows)


def test_stored_events_keeps_order_and_reads_each_row() -> None:
    rows = [ex.record(TextDelta(message_id="m", text=str(n)), seq=n).to_json() for n in range(300)]
    read = stored_events(rows)
    assert [e.seq for e in read] == list(range(300))
    assert [e.payload.text for e in read] == [str(n) for n in range(300)]  # type: ignore[union-attr]


@pytest.mark.parametrize("enabled", [True, False])
def test_a_large_read_leaves_the_collector_as_it_found_it(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        if enabled:
            gc.enable()
        else:
            gc.disable()
        stored_events([_PLAIN] * 1_000)
        assert gc.isenabled() is enabled
        with pytest.raises(EventSchemaError):
            stored_events([_PLAIN] * 1_000 + ["{"])
        assert gc.isenabled() is enabled
    finally:
        if was:
            gc.enable()
        else:
            gc.disable()


def test_the_collector_stays_off_until_the_last_overlapping_batch_is_done() -> None:
    was = gc.isenabled()
    gc.enable()
    try:
        with COLLECTOR_PAUSE:
            assert not gc.isenabled() and COLLECTOR_PAUSE.depth == 1
            with codec.collector_paused(1_000):  # a nested batch: the same pause, counted
                assert COLLECTOR_PAUSE.depth == 2
            assert not gc.isenabled() and COLLECTOR_PAUSE.depth == 1
        assert gc.isenabled() and COLLECTOR_PAUSE.depth == 0
    finally:
        if not was:
            gc.disable()


def test_batches_in_several_threads_share_the_one_pause() -> None:
    was = gc.isenabled()
    gc.enable()
    inside = threading.Barrier(2)
    leave = threading.Event()
    seen: list[bool] = []

    def batch() -> None:
        with COLLECTOR_PAUSE:
            inside.wait()
            leave.wait()

    try:
        other = threading.Thread(target=batch)
        other.start()
        with COLLECTOR_PAUSE:
            inside.wait()  # both threads are in their batch now
        seen.append(gc.isenabled())  # this thread's batch is done, the other's is not
        leave.set()
        other.join()
        assert seen == [False]
        assert gc.isenabled() and COLLECTOR_PAUSE.depth == 0
    finally:
        leave.set()
        if not was:
            gc.disable()


def test_a_few_rows_are_read_without_pausing_the_collector() -> None:
    assert codec.collector_paused(255) is not COLLECTOR_PAUSE
    assert codec.collector_paused(256) is COLLECTOR_PAUSE


def test_events_built_directly_stay_frozen_and_copy_their_fields_set() -> None:
    event = stored_event(_PLAIN)
    with pytest.raises(Exception, match="frozen"):
        event.seq = 5  # type: ignore[misc]
    copied = event.model_copy(update={"seq": 5})
    assert copied.seq == 5 and event.seq == 3
    assert stored_event(_PLAIN).model_fields_set == set(Event.model_fields)


@given(payload=ex.PAYLOAD_STRATEGY, envelope=ex.ENVELOPE_STRATEGY)
def test_random_events_read_back_as_from_json_does(payload: Any, envelope: dict[str, Any]) -> None:
    row = Event.record(payload, **envelope).to_json()
    _same(stored_event(row), Event.from_json(row))
