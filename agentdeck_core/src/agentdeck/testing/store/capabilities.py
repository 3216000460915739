"""Declared capabilities: durable stores keep runs across reopen, shared stores see each other."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    RunPaused,
    RunResumed,
)
from agentdeck.ports import EventStore
from agentdeck.testing.store.base import StoreKitBase
from agentdeck.testing.store.helpers import (
    WAIT,
    ReopenStore,
    collect,
    completed_payload,
    eventually,
    new_run,
    text_delta,
)
from agentdeck.vocabulary import RunStatus

__all__ = ["CapabilityTests"]


class CapabilityTests(StoreKitBase):
    """Declared capabilities (part of :class:`~agentdeck.testing.store_kit.StoreContract`)."""

    __contract_kit__ = True

    # =========================================================================== capabilities

    async def test_a_durable_store_keeps_runs_across_close_and_reopen(
        self, store: EventStore, reopen_store: ReopenStore
    ) -> None:
        if not self.durable:
            pytest.skip("the store is not declared durable")
        run_id = await self._open(store, session_id="s", key="k")
        await store.append(run_id, [text_delta(), RunPaused()])
        await store.put_state(run_id, "journal", b"j")
        events = await store.read(run_id)
        await store.close()
        again = await reopen_store()
        try:
            assert await again.read(run_id) == events
            record = await again.get_run(run_id)
            assert record is not None and record.status is RunStatus.PAUSED
            assert await again.get_state(run_id, "journal") == b"j"
            assert (await again.open_run(new_run(session_id="s"))).busy is not None
            assert (await again.open_run(new_run(key="k"))).key_holder is not None
            (resumed,) = await again.append(run_id, [RunResumed()])
            assert resumed.seq == 3
        finally:
            await again.close()

    async def test_shared_stores_see_each_others_runs(
        self, store: EventStore, reopen_store: ReopenStore
    ) -> None:
        if not self.shared:
            pytest.skip("the store is not declared shared")
        other = await reopen_store()
        try:
            run_id = await self._open(store, session_id="s", key="k")
            record = await other.get_run(run_id)
            assert record is not None and record.status is RunStatus.RUNNING
            assert (await other.open_run(new_run(session_id="s"))).busy is not None
            assert (await other.open_run(new_run(key="k"))).key_holder is not None
            await other.append(run_id, [text_delta()])
            assert len(await store.read(run_id)) == 2
        finally:
            await other.close()

    async def test_a_follower_on_one_shared_store_is_woken_by_an_append_on_another(
        self, store: EventStore, reopen_store: ReopenStore
    ) -> None:
        if not self.shared:
            pytest.skip("the store is not declared shared")
        other = await reopen_store()
        received: list[Event] = []
        run_id = await self._open(store)
        follower = asyncio.create_task(collect(other.follow(run_id), received))
        try:
            await eventually(lambda: len(received) == 1, "the follower started")
            await store.append(run_id, [text_delta()])
            await eventually(lambda: len(received) == 2, "the other store's append arrived")
            await store.append(run_id, [completed_payload()])
            await asyncio.wait_for(follower, WAIT)
        finally:
            follower.cancel()
            await other.close()

    async def test_concurrent_opens_across_shared_stores_have_one_winner(
        self, store: EventStore, reopen_store: ReopenStore
    ) -> None:
        if not self.shared:
            pytest.skip("the store is not declared shared")
        others = [await reopen_store() for _ in range(3)]
        try:
            handles: Sequence[EventStore] = [store, *others]
            news = [new_run(session_id="contended") for _ in range(12)]
            outcomes = await asyncio.gather(
                *(handles[n % len(handles)].open_run(new) for n, new in enumerate(news))
            )
            assert sum(outcome.opened for outcome in outcomes) == 1
        finally:
            for other in others:
                await other.close()
