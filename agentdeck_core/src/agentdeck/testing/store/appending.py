"""Appending: gapless seqs, all-or-nothing batches, designed transitions, expectations."""

from __future__ import annotations

import asyncio

import pytest

from agentdeck.errors import NotFoundError, RunStateError
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    AnswerRecorded,
    Payload,
    RunInterrupted,
    RunPaused,
    RunResumed,
    UnknownEvent,
)
from agentdeck.ports import EventStore
from agentdeck.testing.store.base import StoreKitBase
from agentdeck.testing.store.helpers import (
    TERMINAL_PAYLOADS,
    cancelled_payload,
    completed_payload,
    every_kind,
    failed_payload,
    new_run,
    text_delta,
)
from agentdeck.vocabulary import TERMINAL, RunStatus

__all__ = ["AppendingTests"]


class AppendingTests(StoreKitBase):
    """Appending (part of :class:`~agentdeck.testing.store_kit.StoreContract`)."""

    __contract_kit__ = True

    # =========================================================================== appending

    async def test_append_assigns_the_next_seqs_and_the_runs_identity(
        self, store: EventStore
    ) -> None:
        run_id = await self._open(store, session_id="s1", namespace="ns", parent_run_id="p")
        events = await store.append(run_id, [text_delta(1), text_delta(2)])
        assert [event.seq for event in events] == [1, 2]
        for event in events:
            assert (event.run_id, event.session_id, event.namespace) == (run_id, "s1", "ns")
            assert (event.parent_run_id, event.origin) == ("p", "agent")
        assert [event.payload for event in events] == [text_delta(1), text_delta(2)]
        assert await store.read(run_id) == [*(await store.read(run_id, limit=1)), *events]

    async def test_seq_is_gapless_under_100_concurrent_appenders(self, store: EventStore) -> None:
        run_id = await self._open(store)

        async def appender(n: int) -> list[Event]:
            return await store.append(run_id, [text_delta(n), text_delta(n)])

        batches = await asyncio.gather(*(appender(n) for n in range(100)))
        events = await store.read(run_id)
        assert [event.seq for event in events] == list(range(201))
        returned = sorted(event.seq for batch in batches for event in batch)
        assert returned == list(range(1, 201))
        for batch in batches:  # a batch lands contiguously
            assert batch[1].seq == batch[0].seq + 1
        record = await store.get_run(run_id)
        assert record is not None and record.last_seq == 200

    async def test_a_refused_batch_records_nothing(self, store: EventStore) -> None:
        run_id = await self._open(store)
        before = await store.read(run_id)
        with pytest.raises(RunStateError) as refused:
            await store.append(run_id, [text_delta(), completed_payload(), text_delta()])
        assert refused.value.run_id == run_id
        assert await store.read(run_id) == before
        record = await store.get_run(run_id)
        assert record is not None
        assert (record.status, record.last_seq) == (RunStatus.RUNNING, 0)
        (next_event,) = await store.append(run_id, [text_delta()])
        assert next_event.seq == 1

    async def test_an_empty_batch_records_nothing(self, store: EventStore) -> None:
        run_id = await self._open(store)
        assert await store.append(run_id, []) == []
        assert len(await store.read(run_id)) == 1

    @pytest.mark.parametrize("ending", sorted(TERMINAL_PAYLOADS))
    async def test_nothing_is_appended_after_a_terminal_event(
        self, store: EventStore, ending: str
    ) -> None:
        run_id = await self._open(store)
        await store.append(run_id, [TERMINAL_PAYLOADS[ending]()])
        status = await self._status(store, run_id)
        assert status is not None and status in TERMINAL
        for late in (
            text_delta(),
            RunResumed(),
            RunPaused(),
            completed_payload(),
            cancelled_payload(),
        ):
            with pytest.raises(RunStateError) as refused:
                await store.append(run_id, [late])
            assert refused.value.status is status
        assert len(await store.read(run_id)) == 2

    @pytest.mark.parametrize(
        ("setup", "refused_kind"),
        [
            ([], RunResumed()),
            ([RunPaused()], RunInterrupted(interrupt_id="i")),
            ([RunPaused()], completed_payload()),
            ([RunPaused()], RunPaused()),
            ([RunInterrupted(interrupt_id="i")], RunPaused()),
            ([RunInterrupted(interrupt_id="i")], failed_payload()),
        ],
        ids=lambda value: value.kind if hasattr(value, "kind") else str(len(value)),
    )
    async def test_an_undesigned_transition_is_refused_with_its_facts(
        self, store: EventStore, setup: list[Payload], refused_kind: Payload
    ) -> None:
        run_id = await self._open(store)
        await store.append(run_id, setup)
        status = await self._status(store, run_id)
        with pytest.raises(RunStateError) as refused:
            await store.append(run_id, [refused_kind])
        error = refused.value
        assert (error.run_id, error.status) == (run_id, status)
        assert status not in error.accepted
        assert await self._status(store, run_id) is status

    async def test_run_started_cannot_be_appended(self, store: EventStore) -> None:
        run_id = await self._open(store)
        with pytest.raises(RunStateError):
            await store.append(run_id, [new_run().started])

    async def test_appending_to_an_unknown_run_raises_not_found(self, store: EventStore) -> None:
        with pytest.raises(NotFoundError):
            await store.append("no-such-run", [text_delta()])

    async def test_an_expectation_that_holds_records_the_batch(self, store: EventStore) -> None:
        run_id = await self._open(store)
        await store.append(run_id, [RunPaused()], expect={RunStatus.RUNNING})
        events = await store.append(
            run_id, [RunResumed()], expect={RunStatus.PAUSED, RunStatus.WAITING_ANSWER}
        )
        assert [event.kind for event in events] == ["run.resumed"]

    async def test_an_expectation_that_fails_records_nothing(self, store: EventStore) -> None:
        run_id = await self._open(store)
        with pytest.raises(RunStateError) as refused:
            await store.append(run_id, [text_delta()], expect={RunStatus.PAUSED})
        assert refused.value.status is RunStatus.RUNNING
        assert set(refused.value.accepted) == {RunStatus.PAUSED}
        assert len(await store.read(run_id)) == 1

    async def test_of_two_concurrent_resumes_expecting_suspended_exactly_one_wins(
        self, store: EventStore
    ) -> None:
        for suspended in (RunStatus.PAUSED, RunStatus.WAITING_ANSWER):
            run_id = await self._open(store)
            await self._suspend(store, run_id, suspended)
            results = await asyncio.gather(
                *(
                    store.append(
                        run_id,
                        [AnswerRecorded(interrupt_id="q1", value=n), RunResumed()],
                        expect={RunStatus.PAUSED, RunStatus.WAITING_ANSWER},
                    )
                    if suspended is RunStatus.WAITING_ANSWER
                    else store.append(
                        run_id,
                        [RunResumed(reason=str(n))],
                        expect={RunStatus.PAUSED, RunStatus.WAITING_ANSWER},
                    )
                    for n in range(2)
                ),
                return_exceptions=True,
            )
            wins = [result for result in results if isinstance(result, list)]
            losses = [result for result in results if isinstance(result, RunStateError)]
            assert (len(wins), len(losses)) == (1, 1), results
            assert losses[0].status is RunStatus.RUNNING
            kinds = [event.kind for event in await store.read(run_id)]
            assert kinds.count("run.resumed") == 1

    async def test_expect_seq_lets_one_of_two_writers_win(self, store: EventStore) -> None:
        run_id = await self._open(store)
        (first,) = await store.append(run_id, [text_delta(1)], expect_seq=0)
        assert first.seq == 1
        results = await asyncio.gather(
            store.append(run_id, [text_delta(2)], expect_seq=1),
            store.append(run_id, [text_delta(3)], expect_seq=1),
            return_exceptions=True,
        )
        assert sum(isinstance(result, list) for result in results) == 1
        assert sum(isinstance(result, RunStateError) for result in results) == 1
        assert len(await store.read(run_id)) == 3
        with pytest.raises(RunStateError):
            await store.append(run_id, [text_delta(4)], expect_seq=0)

    async def test_events_round_trip_through_the_store(self, store: EventStore) -> None:
        run_id = await self._open(store, session_id="s", namespace="ns", parent_run_id="p")
        payloads = every_kind()
        appended: list[Event] = []
        for payload in payloads:  # one at a time, so each lifecycle edge is checked on its own
            appended.extend(await store.append(run_id, [payload]))
        read = await store.read(run_id)
        assert read[1:] == appended
        assert [event.payload for event in read[1:]] == payloads
        for event in read:
            assert Event.from_json(event.to_json()) == event
        unknown = read[1 + next(i for i, p in enumerate(payloads) if isinstance(p, UnknownEvent))]
        assert isinstance(unknown.payload, UnknownEvent)
        assert unknown.payload.data == {"anything": {"kept": [1, "two"]}}
