"""The base of the store kit's parts: capability flags, fixtures and shared helpers."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

import pytest

from agentdeck.model.clock import ManualClock
from agentdeck.model.payloads import (
    RunInterrupted,
    RunPaused,
)
from agentdeck.ports import EventStore, RunQuery
from agentdeck.testing.guard import ContractKit
from agentdeck.testing.store.helpers import (
    ReopenStore,
    new_run,
)
from agentdeck.vocabulary import RunStatus

__all__ = ["StoreKitBase"]


class StoreKitBase(ContractKit):
    """What every part of the store kit stands on: the capability flags, the fixtures an
    implementer supplies and the helpers the tests share. Subclass :class:`StoreContract`,
    not this."""

    __contract_kit__ = True

    durable: ClassVar[bool] = False
    """The store keeps runs across close and reopen (needs :meth:`reopen_store`)."""
    shared: ClassVar[bool] = False
    """A second store on the same data sees the same runs (needs :meth:`reopen_store`)."""

    # -- fixtures an implementer supplies ------------------------------------------------------

    @pytest.fixture
    def clock(self) -> ManualClock:
        """The clock to build the store with; tests advance it."""
        return ManualClock()

    @pytest.fixture
    def store(self) -> EventStore:
        """Override: yield an opened, empty store built with :meth:`clock`, and close it after.

        (An async generator fixture in the subclass; this placeholder only explains itself.)
        """
        pytest.fail(f"{type(self).__name__} must override the `store` fixture")

    @pytest.fixture
    def reopen_store(self) -> ReopenStore:
        """Override when ``durable`` or ``shared``: an async factory for another opened store
        on the same data as :meth:`store`, as another process would open it (the kit closes
        what it opens)."""
        if not (self.durable or self.shared):
            pytest.skip("the store is declared neither durable nor shared")
        pytest.fail(
            f"{type(self).__name__} declares durable or shared, so it must override the "
            "`reopen_store` fixture"
        )

    # -- helpers ------------------------------------------------------------------------------

    async def _open(self, store: EventStore, **kwargs: Any) -> str:
        new = new_run(**kwargs)
        outcome = await store.open_run(new)
        assert outcome.opened, f"open of {new.run_id} was refused: {outcome}"
        return new.run_id

    async def _status(self, store: EventStore, run_id: str) -> RunStatus | None:
        record = await store.get_run(run_id)
        return record.status if record is not None else None

    async def _suspend(self, store: EventStore, run_id: str, how: RunStatus) -> None:
        if how is RunStatus.PAUSED:
            await store.append(run_id, [RunPaused(reason="test")])
        else:
            await store.append(run_id, [RunInterrupted(interrupt_id="q1", payload="ok?")])

    async def _ids(self, store: EventStore, query: RunQuery) -> list[str]:
        runs: list[str] = []
        cursor: str | None = None
        while True:
            page = await store.list_runs(replace(query, cursor=cursor, limit=7))
            runs.extend(record.run_id for record in page.runs)
            if page.next_cursor is None:
                return runs
            cursor = page.next_cursor
