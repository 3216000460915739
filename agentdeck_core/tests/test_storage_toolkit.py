"""The store toolkit (agentdeck.storage) on its own: what every store calls gives one answer."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from agentdeck.errors import EventSchemaError, InvalidInputError, RunStateError
from agentdeck.model.clock import ManualClock
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    RunCompleted,
    RunPaused,
    RunResumed,
    TextDelta,
    UnknownEvent,
)
from agentdeck.model.status import RunState, apply, fold
from agentdeck.ports import PruneQuery, RunQuery, Takeover
from agentdeck.storage import (
    append_time,
    batch_refusal,
    check_batch,
    checked_limit,
    checked_payloads,
    checked_started,
    checked_verb,
    compose_batch,
    decode_cursor,
    encode_cursor,
    follow_pages,
    may_step_over,
    prunable,
    record_of,
    run_filter,
    run_page,
    started_event,
    take_page,
)
from agentdeck.testing import new_run
from agentdeck.vocabulary import ControlVerb, RunStatus

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _delta(n: int = 0) -> TextDelta:
    return TextDelta(message_id="m", text=str(n))


def test_a_cursor_round_trips_and_a_foreign_one_is_refused_on_the_cursor_field() -> None:
    assert decode_cursor("kv", encode_cursor("kv", 12345)) == 12345
    for foreign in (encode_cursor("memory", 3), "not base64 !", "", encode_cursor("kv", 0)[:-1]):
        with pytest.raises(InvalidInputError) as bad:
            decode_cursor("kv", foreign)
        assert bad.value.field == "cursor"


def test_payload_checks_parse_dicts_and_refuse_what_is_not_a_payload() -> None:
    [parsed] = checked_payloads([{"kind": "text.delta", "message_id": "m", "text": "x"}])
    assert parsed == _delta().model_copy(update={"text": "x"})
    with pytest.raises(EventSchemaError, match="not an event payload"):
        checked_payloads([_delta(), object()])
    with pytest.raises(EventSchemaError, match="cannot carry the known kind"):
        checked_payloads(
            [
                {"kind": "text.delta", "message_id": "m", "text": "x"},
                UnknownEvent.model_construct(kind="run.completed"),
            ]
        )
    with pytest.raises(EventSchemaError, match=r"NewRun\.started"):
        checked_started(replace(new_run(), started=_delta()))  # type: ignore[arg-type]


def test_the_batch_check_refuses_with_the_recorded_status_and_what_would_accept() -> None:
    assert batch_refusal("r", RunStatus.RUNNING, 3, [_delta(), RunPaused(reason="x")]) is None
    with pytest.raises(RunStateError) as refused:
        check_batch("r", RunStatus.RUNNING, 3, [RunCompleted(), _delta()])
    error = refused.value
    assert error.status is RunStatus.RUNNING
    assert "would leave it completed" in str(error) and "position 1" in str(error)
    undesigned = batch_refusal("r", RunStatus.RUNNING, 3, [RunResumed()])
    assert undesigned is not None and set(undesigned.accepted) == {
        RunStatus.PAUSED,
        RunStatus.WAITING_ANSWER,
    }
    expected = batch_refusal("r", RunStatus.RUNNING, 3, [], expect={RunStatus.PAUSED})
    assert expected is not None and list(expected.accepted) == [RunStatus.PAUSED]
    moved = batch_refusal("r", RunStatus.RUNNING, 3, [_delta()], expect_seq=2)
    assert moved is not None and "has moved on" in str(moved)


def test_a_composed_batch_folds_like_the_reference_fold() -> None:
    clock = ManualClock(T0)
    new = new_run()
    started = started_event(new, clock.now())
    state = apply(RunState(), started)
    payloads = [_delta(1), RunPaused(reason="later"), RunResumed(), _delta(2), RunCompleted()]
    ts = append_time(clock.now() - timedelta(seconds=5), state.last_ts)
    assert ts == started.ts  # a run's times never go backwards
    events, after = compose_batch(
        state,
        payloads,
        run_id=new.run_id,
        ts=ts,
        session_id=None,
        namespace=None,
        parent_run_id=None,
        origin=started.origin,
    )
    assert [e.seq for e in events] == [1, 2, 3, 4, 5]
    assert after == fold(events, state)
    assert all(isinstance(e, Event) and e.run_id == new.run_id for e in events)


def test_takeover_steps_over_only_a_running_holder_that_is_dead_or_stale() -> None:
    stale = Takeover(stale_before=T0)
    assert may_step_over("r", RunStatus.RUNNING, T0 - timedelta(seconds=1), stale)
    assert not may_step_over("r", RunStatus.RUNNING, T0, stale)
    assert not may_step_over("r", RunStatus.PAUSED, T0 - timedelta(days=1), stale)
    assert may_step_over("r", RunStatus.RUNNING, T0, Takeover(dead_run_ids=frozenset({"r"})))
    assert not may_step_over("r", RunStatus.RUNNING, T0, None)


def test_listing_filters_pages_and_records() -> None:
    clock = ManualClock(T0)
    runs = []
    for n in range(5):
        new = new_run(name="a" if n % 2 else "b", namespace="ns")
        state = apply(RunState(), started_event(new, clock.now()))
        runs.append((n, new, state))

    class Row:
        def __init__(self, n, new, state) -> None:  # type: ignore[no-untyped-def]
            self.ordinal, self.run_id, self.name = n, new.run_id, new.started.name
            self.invocable_kind, self.namespace = new.started.invocable_kind, new.namespace
            self.session_id, self.key, self.parent_run_id = None, None, None
            self.status, self.created_at, self.updated_at = (
                state.status,
                state.last_ts,
                state.last_ts,
            )
            self.last_seq, self.wake_at = state.last_seq, None

    rows = [Row(*run) for run in runs]
    matches = run_filter(RunQuery(namespace="ns", name="a"))
    assert [row.ordinal for row in rows if matches(row)] == [1, 3]
    assert not run_filter(RunQuery())(rows[0])  # another namespace
    page = run_page(rows, 2, scheme="t", ordinal=lambda row: row.ordinal, record=record_of)
    assert [r.run_id for r in page.runs] == [rows[0].run_id, rows[1].run_id]
    assert page.next_cursor is not None and decode_cursor("t", page.next_cursor) == 1
    assert (
        run_page(rows, 5, scheme="t", ordinal=lambda r: r.ordinal, record=record_of).next_cursor
        is None
    )
    assert take_page(iter(range(3)), 3) == ([0, 1, 2], False)
    with pytest.raises(InvalidInputError) as bad:
        checked_limit(RunQuery(limit=0))
    assert bad.value.field == "limit"
    assert prunable(PruneQuery(statuses=frozenset({RunStatus.RUNNING, RunStatus.FAILED}))) == {
        RunStatus.FAILED
    }


async def test_follow_pages_ends_after_the_terminal_event_or_when_told() -> None:
    new = new_run()
    started = started_event(new, T0)
    events, _ = compose_batch(
        apply(RunState(), started),
        [_delta(), RunCompleted(), _delta()],
        run_id=new.run_id,
        ts=T0,
        session_id=None,
        namespace=None,
        parent_run_id=None,
        origin="agent",
    )
    asked: list[int] = []

    async def next_events(position: int) -> list[Event] | None:
        asked.append(position)
        return [e for e in [started, *events] if e.seq >= position][:1]

    seen = [event.seq async for event in follow_pages(next_events, 0)]
    assert seen == [0, 1, 2] and asked == [0, 1, 2]

    async def over(position: int) -> list[Event] | None:
        return None

    assert [e async for e in follow_pages(over, 0)] == []


def test_control_verbs_are_checked_on_the_verb_field() -> None:
    assert checked_verb("pause") is ControlVerb.PAUSE
    with pytest.raises(InvalidInputError) as bad:
        checked_verb("explode")
    assert bad.value.field == "verb"
