"""The folded status and reading back: round trips, the fold of the log, reads and followers."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from agentdeck.model.clock import ManualClock
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    AnswerRecorded,
    Payload,
    RunInterrupted,
    RunPaused,
    RunResumed,
)
from agentdeck.model.status import fold, fold_status
from agentdeck.ports import EventStore
from agentdeck.testing.store.base import StoreKitBase
from agentdeck.testing.store.helpers import (
    WAIT,
    cancelled_payload,
    collect,
    completed_payload,
    eventually,
    failed_payload,
    text_delta,
)
from agentdeck.vocabulary import RunStatus

__all__ = ["ReadingTests"]


class ReadingTests(StoreKitBase):
    """The folded status and reading back (a part of
    :class:`~agentdeck.testing.store_kit.StoreContract`)."""

    __contract_kit__ = True

    # =========================================================================== status fold

    async def test_the_indexed_status_is_the_fold_of_the_log(self, store: EventStore) -> None:
        run_id = await self._open(store)
        steps: list[tuple[list[Payload], RunStatus]] = [
            ([text_delta()], RunStatus.RUNNING),
            ([RunPaused(reason="p")], RunStatus.PAUSED),
            ([RunResumed()], RunStatus.RUNNING),
            ([RunInterrupted(interrupt_id="a")], RunStatus.WAITING_ANSWER),
            ([RunInterrupted(interrupt_id="b")], RunStatus.WAITING_ANSWER),
            ([AnswerRecorded(interrupt_id="a", value=1)], RunStatus.WAITING_ANSWER),
            ([AnswerRecorded(interrupt_id="b", value=2), RunResumed()], RunStatus.RUNNING),
            ([completed_payload()], RunStatus.COMPLETED),
        ]
        for payloads, expected in steps:
            await store.append(run_id, payloads)
            log = await store.read(run_id)
            record = await store.get_run(run_id)
            assert record is not None
            assert fold_status(log) is expected
            assert record.status is expected
            assert record.last_seq == log[-1].seq
            assert record.updated_at == log[-1].ts

    async def test_open_interrupts_fold_from_the_log(self, store: EventStore) -> None:
        run_id = await self._open(store)
        await store.append(run_id, [RunInterrupted(interrupt_id="a", payload="first?")])
        await store.append(run_id, [RunInterrupted(interrupt_id="b", payload="second?")])
        state = fold(await store.read(run_id))
        assert [i.interrupt_id for i in state.interrupts] == ["a", "b"]
        assert state.pending is not None and state.pending.payload == "first?"
        await store.append(
            run_id, [AnswerRecorded(interrupt_id="a", value=1)], expect={RunStatus.WAITING_ANSWER}
        )
        state = fold(await store.read(run_id))
        assert [i.interrupt_id for i in state.interrupts] == ["b"]
        assert state.status is RunStatus.WAITING_ANSWER
        await store.append(
            run_id,
            [AnswerRecorded(interrupt_id="b", value=2), RunResumed(interrupt_id="b")],
            expect={RunStatus.WAITING_ANSWER},
        )
        state = fold(await store.read(run_id))
        assert (state.status, state.interrupts) == (RunStatus.RUNNING, ())

    async def test_wake_at_is_indexed_while_paused(
        self, store: EventStore, clock: ManualClock
    ) -> None:
        run_id = await self._open(store)
        wake = clock.now() + timedelta(minutes=5)
        await store.append(run_id, [RunPaused(reason="timer", wake_at=wake)])
        record = await store.get_run(run_id)
        assert record is not None and record.wake_at == wake
        await store.append(run_id, [RunResumed()])
        record = await store.get_run(run_id)
        assert record is not None and record.wake_at is None

    async def test_get_run_of_an_unknown_run_is_none(self, store: EventStore) -> None:
        assert await store.get_run("no-such-run") is None
        assert await store.find_key(None, "no-such-key") is None

    # =========================================================================== reading

    async def test_read_from_seq_with_limit(self, store: EventStore) -> None:
        run_id = await self._open(store)
        await store.append(run_id, [text_delta(n) for n in range(9)])
        assert [e.seq for e in await store.read(run_id, from_seq=4)] == list(range(4, 10))
        assert [e.seq for e in await store.read(run_id, from_seq=4, limit=3)] == [4, 5, 6]
        assert await store.read(run_id, from_seq=10) == []

    async def test_an_unknown_run_reads_as_empty(self, store: EventStore) -> None:
        assert await store.read("no-such-run") == []

    async def test_a_follower_started_before_an_append_receives_it(self, store: EventStore) -> None:
        run_id = await self._open(store)
        received: list[Event] = []
        follower = asyncio.create_task(collect(store.follow(run_id), received))
        try:
            await eventually(lambda: len(received) == 1, "the follower read run.started")
            (appended,) = await store.append(run_id, [text_delta(1)])
            await eventually(lambda: len(received) == 2, "the follower received the append")
            assert received[1] == appended
            await store.append(run_id, [completed_payload()])
            await asyncio.wait_for(follower, WAIT)
            assert [event.seq for event in received] == [0, 1, 2]
        finally:
            follower.cancel()

    async def test_follow_from_a_past_seq_replays_then_tails(self, store: EventStore) -> None:
        run_id = await self._open(store)
        await store.append(run_id, [text_delta(n) for n in range(5)])
        received: list[Event] = []
        follower = asyncio.create_task(collect(store.follow(run_id, from_seq=2), received))
        try:
            await eventually(lambda: len(received) == 4, "the replay of seqs 2..5")
            await store.append(run_id, [text_delta(6)])
            await store.append(run_id, [failed_payload()])
            await asyncio.wait_for(follower, WAIT)
            assert [event.seq for event in received] == [2, 3, 4, 5, 6, 7]
            assert received == await store.read(run_id, from_seq=2)
        finally:
            follower.cancel()

    async def test_follow_ends_after_the_terminal_event(self, store: EventStore) -> None:
        run_id = await self._open(store)
        await store.append(run_id, [text_delta(), cancelled_payload()])
        received: list[Event] = []
        await asyncio.wait_for(collect(store.follow(run_id), received), WAIT)
        assert [event.kind for event in received] == ["run.started", "text.delta", "run.cancelled"]

    async def test_follow_of_a_finished_run_from_past_its_end_ends(self, store: EventStore) -> None:
        run_id = await self._open(store)
        await store.append(run_id, [completed_payload()])
        received: list[Event] = []
        await asyncio.wait_for(collect(store.follow(run_id, from_seq=5), received), WAIT)
        assert received == []

    async def test_several_followers_each_receive_every_event(self, store: EventStore) -> None:
        run_id = await self._open(store)
        streams: list[list[Event]] = [[] for _ in range(3)]
        tasks = [asyncio.create_task(collect(store.follow(run_id), s)) for s in streams]
        try:
            await eventually(lambda: all(len(s) == 1 for s in streams), "followers started")
            for n in range(3):
                await store.append(run_id, [text_delta(n)])
            await store.append(run_id, [completed_payload()])
            await asyncio.wait_for(asyncio.gather(*tasks), WAIT)
            expected = await store.read(run_id)
            assert all(stream == expected for stream in streams)
        finally:
            for task in tasks:
                task.cancel()

    async def test_close_ends_followers(self, store: EventStore) -> None:
        run_id = await self._open(store)
        received: list[Event] = []
        follower = asyncio.create_task(collect(store.follow(run_id), received))
        try:
            await eventually(lambda: len(received) == 1, "the follower started")
            await store.close()
            await asyncio.wait_for(follower, WAIT)
            await store.close()  # idempotent
        finally:
            follower.cancel()
