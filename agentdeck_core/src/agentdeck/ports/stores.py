"""The event store port: the run log, and the records and queries its methods take and return.

:class:`EventStore` is the one port every deployment has: it holds each run's ordered,
append-only log, assigns ``seq`` and ``ts``, decides the conditional writes (a session claimed by
one run at a time, a key claimed for good, a status-conditional append) and keeps the folded
status of every run indexed for lookups and listings. Its method docstrings are the contract
``agentdeck.testing.StoreContract`` checks. Import these names from :mod:`agentdeck.ports`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from agentdeck.model.events import Event
from agentdeck.model.payloads import Payload, RunStarted
from agentdeck.vocabulary import TERMINAL, RunStatus

__all__ = [
    "EventStore",
    "NewRun",
    "OpenOutcome",
    "PruneQuery",
    "RunPage",
    "RunQuery",
    "RunRecord",
    "Takeover",
]


# =========================================================================== records and queries


@dataclass(frozen=True, slots=True)
class NewRun:
    """A run to open: its minted id, identity, and the ``run.started`` payload to record."""

    run_id: str
    started: RunStarted
    session_id: str | None = None
    namespace: str | None = None
    parent_run_id: str | None = None

    @property
    def key(self) -> str | None:
        """The caller's idempotency key (``run.started.key``), claimed with the run."""
        return self.started.key

    @property
    def name(self) -> str:
        """The name the caller addressed (``run.started.name``)."""
        return self.started.name


@dataclass(frozen=True, slots=True)
class Takeover:
    """When a *running* run holding the session may be stepped over by a new open.

    Suspended holders are never stepped over. A running holder is, if its last event is older
    than ``stale_before`` or its id is in ``dead_run_ids`` (its lease is known to have lapsed).
    """

    stale_before: datetime | None = None
    dead_run_ids: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A run's identity and its folded status, as the store indexes it for lookup and listing."""

    run_id: str
    name: str
    invocable_kind: str
    status: RunStatus
    created_at: datetime
    updated_at: datetime
    last_seq: int
    namespace: str | None = None
    session_id: str | None = None
    key: str | None = None
    parent_run_id: str | None = None
    wake_at: datetime | None = None

    @property
    def is_terminal(self) -> bool:
        """Whether the run has ended (completed, failed or cancelled): nothing more is appended."""
        return self.status in TERMINAL


@dataclass(frozen=True, slots=True)
class OpenOutcome:
    """The result of a conditional open. Losing is data here; the runtime raises the errors.

    Exactly one of ``event`` (opened) or ``busy``/``key_holder`` (refused) is set. Busy is
    reported before a key clash. ``stepped_over`` is a stale or dead running run the open
    displaced from the session; the caller closes it with ``run.failed`` in its own name.
    """

    event: Event | None = None
    busy: RunRecord | None = None
    key_holder: RunRecord | None = None
    stepped_over: RunRecord | None = None

    @property
    def opened(self) -> bool:
        """Whether this open won: ``run.started`` was recorded as :attr:`event`."""
        return self.event is not None


@dataclass(frozen=True, slots=True)
class RunQuery:
    """Filters for :meth:`EventStore.list_runs`. Every filter is answered from the index.

    ``namespace`` is always applied (``None`` is the default namespace, not "all") unless
    ``all_namespaces`` is set, which only operator tools use. Results come oldest first (in
    the order the runs were opened), or newest first with ``newest_first``; a cursor continues
    the listing in the order of the page that returned it.
    """

    namespace: str | None = None
    all_namespaces: bool = False
    status: RunStatus | Collection[RunStatus] | None = None
    session_id: str | None = None
    key: str | None = None
    name: str | None = None
    parent_run_id: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    updated_before: datetime | None = None
    wake_before: datetime | None = None
    limit: int = 100
    cursor: str | None = None
    newest_first: bool = False
    """List the most recently opened runs first (``agentdeck runs list`` does)."""

    def statuses(self) -> frozenset[RunStatus] | None:
        """:attr:`status` as a set (``None``: any status), however it was given."""
        if self.status is None:
            return None
        if isinstance(self.status, RunStatus):
            return frozenset({self.status})
        return frozenset(self.status)


@dataclass(frozen=True, slots=True)
class RunPage:
    """One page of :meth:`EventStore.list_runs`: the runs in the query's order, and the cursor
    of the next page (``None`` on the last one)."""

    runs: list[RunRecord]
    next_cursor: str | None = None


@dataclass(frozen=True, slots=True)
class PruneQuery:
    """Which finished runs to delete. Only terminal runs are ever pruned."""

    namespace: str | None = None
    all_namespaces: bool = False
    finished_before: datetime | None = None
    statuses: frozenset[RunStatus] = TERMINAL
    limit: int | None = None


# =========================================================================== the port


class EventStore(ABC):
    """The run log: ordered, append-only, one per run; the store assigns ``seq`` and ``ts``.

    Guarantees every implementation gives (checked by ``agentdeck.testing.StoreContract``):

    * ``seq`` is per run, 0-based, gapless, assigned in the same atomic write as the event.
    * :meth:`append` is a batch: all of its events are recorded or none. When it returns, the
      events are visible to :meth:`read` and :meth:`follow` in every process sharing the store,
      and durable if :attr:`durable` is true (a crash afterwards does not lose them).
    * Lifecycle events follow :data:`agentdeck.model.status.TRANSITIONS`; after a terminal event,
      nothing more is appended.
    * The folded status of every run is indexed, so lookups and listings never read logs.
    """

    durable: ClassVar[bool] = False
    """Whether appended events survive the process (and a restart of it)."""
    shared: ClassVar[bool] = False
    """Whether other processes see the same runs."""

    url: str = ""
    """The URL the store was built for, as the deck's settings gave it."""

    async def open(self) -> None:
        """Connect and create or migrate the schema. Called once before any other method."""

    async def close(self) -> None:
        """Release connections. Followers end. Idempotent."""

    @abstractmethod
    async def open_run(self, new: NewRun, *, takeover: Takeover | None = None) -> OpenOutcome:
        """Append ``run.started`` at seq 0, conditionally and atomically.

        In one atomic step: refuse if ``new.session_id`` is held by a non-terminal run (unless
        ``takeover`` allows stepping over a running holder), refuse if ``(namespace, key)`` is
        already claimed (claimed permanently, whatever the holder's status), otherwise claim both
        and record the event. Of two concurrent opens on one session exactly one wins.
        """

    @abstractmethod
    async def append(
        self,
        run_id: str,
        payloads: Sequence[Payload],
        *,
        expect: Collection[RunStatus] | None = None,
        expect_seq: int | None = None,
    ) -> list[Event]:
        """Append a batch to a run, returning the recorded events.

        With ``expect``, the batch is recorded only if the run's status is one of them at the
        moment of writing (a conditional append: ``run.resumed`` only if suspended). With
        ``expect_seq``, only if the run's last recorded seq is exactly that (optimistic
        concurrency: of two writers that read the same state, one wins). Raises
        ``RunStateError`` when a condition does not hold or a lifecycle event is not a designed
        edge (including anything after a terminal event), and ``NotFoundError`` for an unknown
        run. A refused batch records nothing.
        """

    @abstractmethod
    async def read(
        self, run_id: str, *, from_seq: int = 0, limit: int | None = None
    ) -> list[Event]:
        """Events with ``seq >= from_seq`` in order (an unknown run reads as empty)."""

    @abstractmethod
    def follow(self, run_id: str, *, from_seq: int = 0) -> AsyncIterator[Event]:
        """Events with ``seq >= from_seq``, then new ones as they are appended, in order.

        Ends after a terminal event. Woken by the append itself (or the backend's notification
        across processes) — never by a fixed polling interval in process.
        """

    @abstractmethod
    async def get_run(self, run_id: str) -> RunRecord | None:
        """The indexed record of one run, or ``None``. Reads no log."""

    @abstractmethod
    async def find_key(self, namespace: str | None, key: str) -> RunRecord | None:
        """The run holding ``(namespace, key)``, or ``None``."""

    @abstractmethod
    async def list_runs(self, query: RunQuery) -> RunPage:
        """Runs matching ``query``, oldest first (newest first with ``query.newest_first``),
        ``query.limit`` per page with a cursor."""

    @abstractmethod
    async def prune(self, query: PruneQuery) -> int:
        """Delete matching terminal runs, their logs, key claims and engine state; the count."""

    # -- engine-state area: small per-run blobs (serialized approvals, workflow journals) ---------

    @abstractmethod
    async def put_state(self, run_id: str, name: str, value: bytes) -> None:
        """Store ``value`` under ``(run_id, name)``, replacing any earlier value."""

    @abstractmethod
    async def get_state(self, run_id: str, name: str) -> bytes | None:
        """The value under ``(run_id, name)``, or ``None``."""

    @abstractmethod
    async def delete_state(self, run_id: str, name: str) -> None:
        """Remove ``(run_id, name)`` if present."""
