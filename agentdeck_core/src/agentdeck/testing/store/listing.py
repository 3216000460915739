"""Listing and pruning: filters, namespaces, pages and cursors, what a prune deletes."""

from __future__ import annotations

from datetime import timedelta

from agentdeck.model.clock import ManualClock
from agentdeck.model.payloads import (
    RunCompleted,
    RunInterrupted,
    RunPaused,
)
from agentdeck.ports import EventStore, PruneQuery, RunQuery
from agentdeck.testing.store.base import StoreKitBase
from agentdeck.testing.store.helpers import (
    completed_payload,
    failed_payload,
    text_delta,
)
from agentdeck.vocabulary import TERMINAL, RunStatus

__all__ = ["ListingTests"]


class ListingTests(StoreKitBase):
    """Listing and pruning (part of :class:`~agentdeck.testing.store_kit.StoreContract`)."""

    __contract_kit__ = True

    # =========================================================================== listing

    async def test_listing_filters_by_status(self, store: EventStore) -> None:
        running = await self._open(store)
        paused = await self._open(store)
        await store.append(paused, [RunPaused()])
        waiting = await self._open(store)
        await store.append(waiting, [RunInterrupted(interrupt_id="i")])
        done = await self._open(store)
        await store.append(done, [completed_payload()])
        assert await self._ids(store, RunQuery(status=RunStatus.RUNNING)) == [running]
        assert await self._ids(store, RunQuery(status=RunStatus.PAUSED)) == [paused]
        suspended = RunQuery(status=[RunStatus.PAUSED, RunStatus.WAITING_ANSWER])
        assert await self._ids(store, suspended) == [paused, waiting]
        assert await self._ids(store, RunQuery(status=TERMINAL)) == [done]
        assert await self._ids(store, RunQuery()) == [running, paused, waiting, done]

    async def test_listing_filters_by_session_name_key_and_parent(self, store: EventStore) -> None:
        a = await self._open(store, session_id="s1", name="alpha", key="k1")
        await store.append(a, [completed_payload()])
        b = await self._open(store, session_id="s1", name="beta", parent_run_id=a)
        c = await self._open(store, session_id="s2", name="alpha", parent_run_id=a)
        assert await self._ids(store, RunQuery(session_id="s1")) == [a, b]
        assert await self._ids(store, RunQuery(name="alpha")) == [a, c]
        assert await self._ids(store, RunQuery(key="k1")) == [a]
        assert await self._ids(store, RunQuery(parent_run_id=a)) == [b, c]
        assert await self._ids(store, RunQuery(parent_run_id=a, name="beta")) == [b]
        assert await self._ids(store, RunQuery(session_id="s1", status=RunStatus.RUNNING)) == [b]
        assert await self._ids(store, RunQuery(session_id="nobody")) == []

    async def test_listing_is_namespace_isolated(self, store: EventStore) -> None:
        plain = await self._open(store, session_id="s", key="k")
        a = await self._open(store, namespace="a", session_id="s", key="k")
        b = await self._open(store, namespace="b", session_id="s", key="k")
        assert await self._ids(store, RunQuery()) == [plain]
        assert await self._ids(store, RunQuery(namespace="a")) == [a]
        assert await self._ids(store, RunQuery(namespace="a", session_id="s")) == [a]
        assert await self._ids(store, RunQuery(namespace="b", key="k")) == [b]
        assert await self._ids(store, RunQuery(namespace="c")) == []
        assert await self._ids(store, RunQuery(all_namespaces=True)) == [plain, a, b]
        assert await self._ids(store, RunQuery(all_namespaces=True, session_id="s")) == [
            plain,
            a,
            b,
        ]

    async def test_listing_pages_oldest_first_with_a_cursor(
        self, store: EventStore, clock: ManualClock
    ) -> None:
        opened = []
        for n in range(25):
            if n % 2:
                clock.advance(1)  # some runs share a creation time: pages must still be exact
            opened.append(await self._open(store, namespace="paged"))
        seen: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            page = await store.list_runs(RunQuery(namespace="paged", limit=10, cursor=cursor))
            pages += 1
            assert len(page.runs) == (10 if page.next_cursor else 5)
            seen.extend(record.run_id for record in page.runs)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert pages == 3
        assert seen == opened

    async def test_listing_pages_newest_first_with_a_cursor(
        self, store: EventStore, clock: ManualClock
    ) -> None:
        opened = []
        for n in range(25):
            if n % 2:
                clock.advance(1)
            opened.append(await self._open(store, namespace="newest"))
        seen: list[str] = []
        cursor: str | None = None
        while True:
            page = await store.list_runs(
                RunQuery(namespace="newest", limit=10, cursor=cursor, newest_first=True)
            )
            assert len(page.runs) == (10 if page.next_cursor else 5)
            seen.extend(record.run_id for record in page.runs)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert seen == opened[::-1]
        # Filters apply as they do oldest first; the newest matching run leads.
        await store.append(opened[3], [RunCompleted()])
        await store.append(opened[20], [RunCompleted()])
        done = await store.list_runs(
            RunQuery(namespace="newest", status=RunStatus.COMPLETED, newest_first=True)
        )
        assert [r.run_id for r in done.runs] == [opened[20], opened[3]]
        one = await store.list_runs(
            RunQuery(namespace="newest", status=RunStatus.COMPLETED, newest_first=True, limit=1)
        )
        assert [r.run_id for r in one.runs] == [opened[20]] and one.next_cursor is not None
        rest = await store.list_runs(
            RunQuery(
                namespace="newest",
                status=RunStatus.COMPLETED,
                newest_first=True,
                limit=1,
                cursor=one.next_cursor,
            )
        )
        assert [r.run_id for r in rest.runs] == [opened[3]] and rest.next_cursor is None

    async def test_a_page_filled_exactly_reports_no_further_page(self, store: EventStore) -> None:
        for _ in range(4):
            await self._open(store, namespace="exact")
        page = await store.list_runs(RunQuery(namespace="exact", limit=4))
        assert len(page.runs) == 4 and page.next_cursor is None

    async def test_listing_stays_exact_while_runs_change_status(self, store: EventStore) -> None:
        runs = [await self._open(store) for _ in range(6)]
        first = await store.list_runs(RunQuery(status=RunStatus.RUNNING, limit=3))
        await store.append(runs[1], [RunPaused()])
        await store.append(runs[4], [RunPaused()])
        rest = await store.list_runs(
            RunQuery(status=RunStatus.RUNNING, limit=3, cursor=first.next_cursor)
        )
        assert [r.run_id for r in first.runs] == runs[:3]
        assert [r.run_id for r in rest.runs] == [runs[3], runs[5]]

    async def test_listing_filters_by_time(self, store: EventStore, clock: ManualClock) -> None:
        t0 = clock.now()
        early = await self._open(store)
        clock.advance(10)
        late = await self._open(store)
        clock.advance(10)
        await store.append(late, [RunPaused(wake_at=t0 + timedelta(seconds=100))])
        timer = await self._open(store)
        await store.append(timer, [RunPaused(wake_at=t0 + timedelta(seconds=50))])
        assert await self._ids(store, RunQuery(created_after=t0)) == [late, timer]
        assert await self._ids(store, RunQuery(created_before=t0 + timedelta(seconds=10))) == [
            early
        ]
        assert await self._ids(store, RunQuery(updated_before=t0 + timedelta(seconds=20))) == [
            early
        ]
        due = RunQuery(wake_before=t0 + timedelta(seconds=60))
        assert await self._ids(store, due) == [timer]
        everything_due = RunQuery(wake_before=t0 + timedelta(seconds=101))
        assert await self._ids(store, everything_due) == [late, timer]

    async def test_listing_a_few_waiting_runs_among_many(self, store: EventStore) -> None:
        waiting = []
        for n in range(300):
            run_id = await self._open(store, namespace="crowd")
            if n % 30 == 7:
                await store.append(run_id, [RunInterrupted(interrupt_id="q")])
                waiting.append(run_id)
        page = await store.list_runs(
            RunQuery(namespace="crowd", status=RunStatus.WAITING_ANSWER, limit=100)
        )
        assert [record.run_id for record in page.runs] == waiting
        assert all(record.status is RunStatus.WAITING_ANSWER for record in page.runs)

    # =========================================================================== pruning

    async def test_prune_deletes_only_finished_runs_with_everything_they_hold(
        self, store: EventStore
    ) -> None:
        live = await self._open(store, session_id="s-live", key="k-live")
        parked = await self._open(store, key="k-parked")
        await store.append(parked, [RunPaused()])
        done = await self._open(store, session_id="s-done", key="k-done")
        await store.append(done, [text_delta(), completed_payload()])
        await store.put_state(done, "journal", b"x")
        await store.put_state(live, "journal", b"y")
        assert await store.prune(PruneQuery()) == 1
        assert await store.get_run(done) is None
        assert await store.read(done) == []
        assert await store.find_key(None, "k-done") is None
        assert await store.get_state(done, "journal") is None
        assert await self._ids(store, RunQuery(session_id="s-done")) == []
        assert await self._ids(store, RunQuery()) == [live, parked]
        assert await store.get_state(live, "journal") == b"y"
        await self._open(store, key="k-done")  # the key is free again
        await self._open(store, session_id="s-done")

    async def test_prune_honours_namespace_statuses_age_and_limit(
        self, store: EventStore, clock: ManualClock
    ) -> None:
        old = [await self._open(store, namespace="p") for _ in range(3)]
        for run_id in old:
            await store.append(run_id, [completed_payload()])
        clock.advance(100)
        cutoff = clock.now()
        failed = await self._open(store, namespace="p")
        await store.append(failed, [failed_payload()])
        other = await self._open(store, namespace="q")
        await store.append(other, [completed_payload()])
        everywhere = PruneQuery(namespace="p", finished_before=cutoff, limit=2)
        assert await store.prune(everywhere) == 2
        assert await self._ids(store, RunQuery(namespace="p")) == [old[2], failed]
        only_failed = PruneQuery(namespace="p", statuses=frozenset({RunStatus.FAILED}))
        assert await store.prune(only_failed) == 1
        assert await self._ids(store, RunQuery(namespace="p")) == [old[2]]
        not_terminal = PruneQuery(all_namespaces=True, statuses=frozenset({RunStatus.RUNNING}))
        assert await store.prune(not_terminal) == 0
        assert await store.prune(PruneQuery(all_namespaces=True)) == 2
        assert await self._ids(store, RunQuery(all_namespaces=True)) == []
