"""The memory store's in-line append of one content payload: what it records is what the
general path (and ``Event.record``) would, on the store's own clock, for any payload form the
port accepts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agentdeck.memory.store import MemoryEventStore
from agentdeck.model.clock import ManualClock
from agentdeck.model.events import Event
from agentdeck.model.payloads import TextDelta
from agentdeck.testing import new_run


async def _opened(store: MemoryEventStore) -> str:
    outcome = await store.open_run(new_run())
    assert outcome.event is not None
    return outcome.event.run_id


async def test_one_content_payload_given_as_a_dict_is_parsed_like_a_batch_of_them() -> None:
    store = MemoryEventStore()
    run_id = await _opened(store)
    [one] = await store.append(run_id, [{"kind": "text.delta", "message_id": "m", "text": "a"}])
    two = await store.append(
        run_id,
        [
            {"kind": "text.delta", "message_id": "m", "text": "b"},
            {"kind": "text.delta", "message_id": "m", "text": "c"},
        ],
    )
    assert isinstance(one.payload, TextDelta) and one.payload.text == "a"
    assert [event.seq for event in (one, *two)] == [1, 2, 3]
    assert await store.read(run_id, from_seq=1) == [one, *two]


async def test_a_content_event_equals_the_validated_envelope_and_uses_the_stores_clock() -> None:
    clock = ManualClock(datetime(2030, 5, 1, tzinfo=UTC))
    store = MemoryEventStore(clock=clock)
    run_id = await _opened(store)
    clock.advance(3)
    payload = TextDelta(message_id="m", text="t")
    [event] = await store.append(run_id, [payload])
    expected = Event.record(payload, seq=1, run_id=run_id, ts=clock.now(), origin=event.origin)
    assert event == expected
    assert event.model_dump_json() == expected.model_dump_json()
    assert event.model_fields_set == expected.model_fields_set
    assert event.ts == datetime(2030, 5, 1, tzinfo=UTC) + timedelta(seconds=3)


async def test_a_system_clock_store_stamps_content_events_with_the_current_utc_time() -> None:
    store = MemoryEventStore()
    run_id = await _opened(store)
    before = datetime.now(UTC)
    [event] = await store.append(run_id, [TextDelta(message_id="m", text="t")])
    assert event.ts.tzinfo is UTC and before <= event.ts <= datetime.now(UTC)
