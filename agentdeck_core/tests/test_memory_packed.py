"""The memory store's packed logs: what is read back equals what was appended, and a finished
run leaves (nearly) nothing for the cyclic garbage collector to walk.

A finished run's payloads are packed as JSON and read back as a durable store reads its rows.
Every test compares what is read back with what was appended: equal, the same class, the same
JSON, and the same field types as a durable store hands back.
"""

from __future__ import annotations

import gc
from typing import Any

import pytest
from hypothesis import given

from agentdeck.memory import MemoryEventStore
from agentdeck.memory.packed import PACK_BATCH, pack, unpack
from agentdeck.model import trusted
from agentdeck.model.clock import ManualClock
from agentdeck.model.content import DataBlock, TextBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    Report,
    RunCompleted,
    RunFailed,
    RunPaused,
    TextDelta,
    UnknownEvent,
)
from agentdeck.testing import event_examples as ex
from agentdeck.testing import new_run


def _same_payload(back: Any, appended: Any) -> None:
    assert type(back) is type(appended)
    assert back == appended
    assert back.model_dump_json() == appended.model_dump_json()
    assert list(back.__dict__) == list(appended.__dict__)
    # field by field, the types a durable store's reader gives (an enum member it knows stays
    # one; a value in JSON form, such as a tuple, comes back as JSON gives it)
    durable = Event.from_json(ex.record(appended).to_json()).payload
    for name in type(appended).model_fields:
        assert type(getattr(back, name)) is type(getattr(durable, name)), name


def _round_trip(payload: Any) -> Any:
    event = ex.record(payload, seq=0)
    [(seq, ts, back)] = unpack(pack([event]), 0, None)
    assert (seq, ts) == (0, event.ts)
    return back


@pytest.mark.parametrize("event", ex.EXAMPLE_EVENTS, ids=lambda e: e.kind)
def test_every_kind_reads_back_equal(event: Event) -> None:
    _same_payload(_round_trip(event.payload), event.payload)


@given(payload=ex.PAYLOAD_STRATEGY)
def test_random_payloads_read_back_equal(payload: Any) -> None:
    _same_payload(_round_trip(payload), payload)


def test_the_payloads_the_runtime_builds_itself_read_back_equal() -> None:
    for payload in (
        trusted.started(
            name="wf",
            invocable_kind="workflow",
            input=[trusted.data_block(3)],
            key=None,
            code_digest="d" * 64,
            deadline=None,
        ),
        trusted.completed([trusted.data_block("done"), TextBlock(text="ok")]),
        RunCompleted(output=[DataBlock(data={"nested": [1, 2.5, None]})]),
        RunFailed(error_code="deadline", message="late"),
        RunPaused(reason="timer", wake_at=ex.TS),
        UnknownEvent(kind="app.thing", extra_field=[1]),
    ):
        _same_payload(_round_trip(payload), payload)


def test_a_packed_log_reads_back_by_position() -> None:
    events = [ex.record(p, seq=seq) for seq, p in enumerate(ex.PAYLOAD_EXAMPLES.values())]
    packed = pack(events)
    for start, stop in ((0, None), (3, 7), (len(events) - 1, None), (len(events), None)):
        back = unpack(packed, start, stop)
        assert [seq for seq, _, _ in back] == [e.seq for e in events[start:stop]]
        assert [ts for _, ts, _ in back] == [e.ts for e in events[start:stop]]
        for (_, _, payload), event in zip(back, events[start:stop], strict=True):
            _same_payload(payload, event.payload)


def test_a_packed_log_is_left_untracked_by_the_collector() -> None:
    events = [ex.record(p, seq=seq) for seq, p in enumerate(ex.PAYLOAD_EXAMPLES.values())]
    packed = pack(events)
    for _ in range(2):  # an outer tuple looked at before its items stays tracked one more look
        gc.collect()
    assert not gc.is_tracked(packed)


# --------------------------------------------------------------------------- in the store


async def _finished_runs(store: MemoryEventStore, count: int) -> list[tuple[str, list[Any]]]:
    runs = []
    for index in range(count):
        new = new_run(session_id=f"s{index}", namespace="n")
        await store.open_run(new)
        payloads = [
            TextDelta(message_id="m", text=f"run {index}"),
            Report(message="with fields", fields={"index": index}),
            trusted.completed([trusted.data_block(index)]),
        ]
        for payload in payloads:
            await store.append(new.run_id, [payload])
        runs.append((new.run_id, payloads))
    return runs


async def test_finished_runs_read_back_what_was_appended_once_packed() -> None:
    store = MemoryEventStore(clock=ManualClock())
    before: dict[str, list[Event]] = {}
    runs = await _finished_runs(store, PACK_BATCH)  # the last one completes a batch
    for run_id, _ in runs:
        before[run_id] = [e.model_copy() for e in await store.read(run_id)]
    # a finished run's log is packed now: read it every way a caller can
    for run_id, payloads in runs:
        log = await store.read(run_id)
        assert log == before[run_id]
        assert [e.model_dump_json() for e in log] == [e.model_dump_json() for e in before[run_id]]
        assert [e.payload for e in log[1:]] == payloads
        assert await store.read(run_id, from_seq=2, limit=1) == before[run_id][2:3]
        assert await store.read(run_id, from_seq=9) == []
        assert [e async for e in store.follow(run_id, from_seq=1)] == before[run_id][1:]
        record = await store.get_run(run_id)
        assert record is not None and record.last_seq == 3


async def test_a_follower_that_started_before_the_run_ended_reads_to_its_end() -> None:
    store = MemoryEventStore(clock=ManualClock())
    new = new_run()
    await store.open_run(new)
    await store.append(new.run_id, [TextDelta(message_id="m", text="a")])
    follower = store.follow(new.run_id)
    first = await anext(follower)  # holding the live log
    await store.append(new.run_id, [RunCompleted()])
    await _finished_runs(store, PACK_BATCH)  # packs this run's log under the follower
    rest = [event async for event in follower]
    assert [first.kind, *(e.kind for e in rest)] == ["run.started", "text.delta", "run.completed"]


async def test_a_finished_run_leaves_next_to_nothing_for_the_collector() -> None:
    store = MemoryEventStore(clock=ManualClock())
    await _finished_runs(store, PACK_BATCH)  # warm: first-use caches
    for _ in range(3):
        gc.collect()
    before = len(gc.get_objects())
    await _finished_runs(store, 4 * PACK_BATCH)
    for _ in range(3):
        gc.collect()
    per_run = (len(gc.get_objects()) - before) / (4 * PACK_BATCH)
    assert per_run < 4  # the run's record and index entries; its events hold none (it was ~20)
