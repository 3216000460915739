"""Opening runs: run.started at seq 0, session and key claims, takeovers, racing opens."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from agentdeck.model.clock import ManualClock
from agentdeck.ports import EventStore, RunRecord, Takeover
from agentdeck.testing.store.base import StoreKitBase
from agentdeck.testing.store.helpers import (
    TERMINAL_PAYLOADS,
    completed_payload,
    new_run,
    text_delta,
)
from agentdeck.vocabulary import RunStatus

__all__ = ["OpeningTests"]


class OpeningTests(StoreKitBase):
    """Opening runs (part of :class:`~agentdeck.testing.store_kit.StoreContract`)."""

    __contract_kit__ = True

    # =========================================================================== opening

    async def test_open_records_run_started_at_seq_0(self, store: EventStore) -> None:
        new = new_run(session_id="s1", namespace="ns", parent_run_id="parent-1", key="k1")
        outcome = await store.open_run(new)
        assert outcome.opened and outcome.event is not None
        event = outcome.event
        assert (event.seq, event.kind, event.run_id) == (0, "run.started", new.run_id)
        assert (event.session_id, event.namespace, event.parent_run_id) == ("s1", "ns", "parent-1")
        assert event.origin == "agent"
        assert event.payload == new.started
        assert outcome.busy is None and outcome.key_holder is None and outcome.stepped_over is None
        assert await store.read(new.run_id) == [event]

    async def test_open_indexes_the_new_run(self, store: EventStore) -> None:
        new = new_run(session_id="s1", namespace="ns", parent_run_id="p", key="k", name="a1")
        outcome = await store.open_run(new)
        assert outcome.event is not None
        record = await store.get_run(new.run_id)
        assert record == RunRecord(
            run_id=new.run_id,
            name="a1",
            invocable_kind="agent",
            status=RunStatus.RUNNING,
            created_at=outcome.event.ts,
            updated_at=outcome.event.ts,
            last_seq=0,
            namespace="ns",
            session_id="s1",
            key="k",
            parent_run_id="p",
            wake_at=None,
        )

    async def test_ts_comes_from_the_store_clock(
        self, store: EventStore, clock: ManualClock
    ) -> None:
        clock.advance(12.5)
        outcome = await store.open_run(new_run())
        assert outcome.event is not None
        assert outcome.event.ts == clock.now()
        clock.advance(3)
        (event,) = await store.append(outcome.event.run_id, [text_delta()])
        assert event.ts == clock.now()
        assert event.ts.utcoffset() == timedelta(0)

    async def test_open_on_a_session_held_by_a_running_run_is_busy(self, store: EventStore) -> None:
        holder = await self._open(store, session_id="s1")
        loser = new_run(session_id="s1")
        outcome = await store.open_run(loser)
        assert not outcome.opened and outcome.event is None
        assert outcome.busy is not None and outcome.busy.run_id == holder
        assert outcome.busy.status is RunStatus.RUNNING
        assert outcome.stepped_over is None
        assert await store.get_run(loser.run_id) is None
        assert await store.read(loser.run_id) == []

    @pytest.mark.parametrize("suspended", [RunStatus.PAUSED, RunStatus.WAITING_ANSWER])
    async def test_a_suspended_holder_is_never_stepped_over(
        self, store: EventStore, clock: ManualClock, suspended: RunStatus
    ) -> None:
        holder = await self._open(store, session_id="s1")
        await self._suspend(store, holder, suspended)
        clock.advance(10_000)
        takeover = Takeover(
            stale_before=clock.now() + timedelta(days=1), dead_run_ids=frozenset({holder})
        )
        outcome = await store.open_run(new_run(session_id="s1"), takeover=takeover)
        assert not outcome.opened
        assert outcome.busy is not None and outcome.busy.run_id == holder
        assert outcome.busy.status is suspended
        assert outcome.stepped_over is None

    async def test_a_stale_running_holder_is_stepped_over(
        self, store: EventStore, clock: ManualClock
    ) -> None:
        holder = await self._open(store, session_id="s1")
        clock.advance(60)
        record = await store.get_run(holder)
        assert record is not None
        new = new_run(session_id="s1")
        outcome = await store.open_run(
            new, takeover=Takeover(stale_before=record.updated_at + timedelta(seconds=1))
        )
        assert outcome.opened
        assert outcome.stepped_over is not None and outcome.stepped_over.run_id == holder
        # The new run holds the session now; the displaced one is left for the caller to close.
        third = await store.open_run(new_run(session_id="s1"))
        assert third.busy is not None and third.busy.run_id == new.run_id
        assert await self._status(store, holder) is RunStatus.RUNNING

    async def test_a_dead_running_holder_is_stepped_over(self, store: EventStore) -> None:
        holder = await self._open(store, session_id="s1")
        outcome = await store.open_run(
            new_run(session_id="s1"), takeover=Takeover(dead_run_ids=frozenset({holder}))
        )
        assert outcome.opened
        assert outcome.stepped_over is not None and outcome.stepped_over.run_id == holder

    async def test_a_live_fresh_running_holder_is_not_stepped_over(self, store: EventStore) -> None:
        holder = await self._open(store, session_id="s1")
        record = await store.get_run(holder)
        assert record is not None
        # Stale means strictly older than stale_before; other runs' deaths do not count.
        takeover = Takeover(stale_before=record.updated_at, dead_run_ids=frozenset({"other"}))
        outcome = await store.open_run(new_run(session_id="s1"), takeover=takeover)
        assert outcome.busy is not None and outcome.busy.run_id == holder
        assert outcome.stepped_over is None

    async def test_staleness_counts_from_the_holders_last_event(
        self, store: EventStore, clock: ManualClock
    ) -> None:
        holder = await self._open(store, session_id="s1")
        started = clock.now()
        clock.advance(30)
        await store.append(holder, [text_delta()])
        outcome = await store.open_run(
            new_run(session_id="s1"),
            takeover=Takeover(stale_before=started + timedelta(seconds=10)),
        )
        assert outcome.busy is not None and outcome.busy.run_id == holder

    @pytest.mark.parametrize("ending", sorted(TERMINAL_PAYLOADS))
    async def test_a_finished_holder_frees_the_session(
        self, store: EventStore, ending: str
    ) -> None:
        holder = await self._open(store, session_id="s1")
        await store.append(holder, [TERMINAL_PAYLOADS[ending]()])
        outcome = await store.open_run(new_run(session_id="s1"))
        assert outcome.opened and outcome.stepped_over is None

    async def test_runs_without_a_session_never_conflict(self, store: EventStore) -> None:
        for _ in range(3):
            await self._open(store)

    async def test_sessions_are_claimed_per_namespace(self, store: EventStore) -> None:
        await self._open(store, session_id="s1", namespace="tenant-a")
        await self._open(store, session_id="s1", namespace="tenant-b")
        await self._open(store, session_id="s1")
        outcome = await store.open_run(new_run(session_id="s1", namespace="tenant-a"))
        assert outcome.busy is not None

    async def test_a_key_is_claimed_for_good_even_after_its_run_finishes(
        self, store: EventStore
    ) -> None:
        holder = await self._open(store, key="order-1")
        await store.append(holder, [completed_payload()])
        outcome = await store.open_run(new_run(key="order-1"))
        assert not outcome.opened
        assert outcome.key_holder is not None and outcome.key_holder.run_id == holder
        assert outcome.key_holder.status is RunStatus.COMPLETED
        assert outcome.busy is None

    async def test_busy_is_reported_before_a_key_clash(self, store: EventStore) -> None:
        await self._open(store, key="order-1")
        holder = await self._open(store, session_id="s1")
        outcome = await store.open_run(new_run(session_id="s1", key="order-1"))
        assert not outcome.opened
        assert outcome.busy is not None and outcome.busy.run_id == holder

    async def test_keys_are_claimed_per_namespace(self, store: EventStore) -> None:
        a = await self._open(store, key="k", namespace="a")
        b = await self._open(store, key="k", namespace="b")
        default = await self._open(store, key="k")
        for namespace, run_id in (("a", a), ("b", b), (None, default)):
            record = await store.find_key(namespace, "k")
            assert record is not None and record.run_id == run_id
        assert await store.find_key("c", "k") is None

    async def test_a_refused_open_claims_nothing(self, store: EventStore) -> None:
        await self._open(store, key="taken")
        refused = await store.open_run(new_run(session_id="s-free", key="taken"))
        assert not refused.opened
        await self._open(store, session_id="s-free")  # the session was not claimed
        await self._open(store, session_id="s-busy")
        busy = await store.open_run(new_run(session_id="s-busy", key="k-free"))
        assert busy.busy is not None
        await self._open(store, key="k-free")  # nor was the key

    async def test_of_20_concurrent_opens_on_one_session_exactly_one_wins(
        self, store: EventStore
    ) -> None:
        news = [new_run(session_id="contended") for _ in range(20)]
        outcomes = await asyncio.gather(*(store.open_run(new) for new in news))
        winners = [
            new.run_id for new, outcome in zip(news, outcomes, strict=True) if outcome.opened
        ]
        assert len(winners) == 1
        for new, outcome in zip(news, outcomes, strict=True):
            if not outcome.opened:
                assert outcome.busy is not None and outcome.busy.run_id == winners[0]
                assert await store.get_run(new.run_id) is None

    async def test_of_20_concurrent_opens_with_one_key_exactly_one_wins(
        self, store: EventStore
    ) -> None:
        news = [new_run(key="contended") for _ in range(20)]
        outcomes = await asyncio.gather(*(store.open_run(new) for new in news))
        winners = [
            new.run_id for new, outcome in zip(news, outcomes, strict=True) if outcome.opened
        ]
        assert len(winners) == 1
        assert all(
            outcome.key_holder is not None and outcome.key_holder.run_id == winners[0]
            for outcome in outcomes
            if not outcome.opened
        )
