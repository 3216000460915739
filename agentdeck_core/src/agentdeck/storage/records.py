"""A run's record: what a store indexes of each run, read from the store's own run object.

A store keeps its runs as it likes (a row, a hash, an object in memory); lookups and listings
answer with :class:`~agentdeck.ports.RunRecord`. :class:`StoredRun` names the fields a store's
run object offers so that :func:`record_of` builds the record and
:func:`agentdeck.storage.listing.run_filter` filters on it, without either knowing the store.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from agentdeck.ports import RunRecord
from agentdeck.vocabulary import RunStatus

__all__ = ["RunFacts", "StoredRun", "record_of"]


class RunFacts(Protocol):
    """What a query filters on: the fields of a :class:`~agentdeck.ports.RunRecord` (which is
    one), readable from a store's own run object without building a record."""

    @property
    def namespace(self) -> str | None: ...
    @property
    def status(self) -> RunStatus | None: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def key(self) -> str | None: ...
    @property
    def name(self) -> str: ...
    @property
    def parent_run_id(self) -> str | None: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def updated_at(self) -> datetime: ...
    @property
    def wake_at(self) -> datetime | None: ...


class StoredRun(RunFacts, Protocol):
    """A run object a :class:`~agentdeck.ports.RunRecord` can be built from."""

    @property
    def run_id(self) -> str: ...
    @property
    def invocable_kind(self) -> str: ...
    @property
    def last_seq(self) -> int: ...


def record_of(run: StoredRun) -> RunRecord:
    """The :class:`~agentdeck.ports.RunRecord` of ``run`` (which must have a status: a run is
    recorded once ``run.started`` is)."""
    status = run.status
    assert status is not None, "a stored run has a status from its first event"
    return RunRecord(
        run_id=run.run_id,
        name=run.name,
        invocable_kind=run.invocable_kind,
        status=status,
        created_at=run.created_at,
        updated_at=run.updated_at,
        last_seq=run.last_seq,
        namespace=run.namespace,
        session_id=run.session_id,
        key=run.key,
        parent_run_id=run.parent_run_id,
        wake_at=run.wake_at,
    )
