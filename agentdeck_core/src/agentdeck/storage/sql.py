"""What the SQL backends share: the run row, the batch plan that decides conditional writes, and
the listing query.

Both SQL stores decide every conditional write (the session claim, the key claim, ``expect``,
``expect_seq``, the designed lifecycle edges) the same way: inside one transaction they load the
rows a batch of writes touches (SQLite holds the database's write lock; PostgreSQL locks the rows
``FOR UPDATE``), :class:`BatchPlan` decides each write in Python against those rows and its own
earlier decisions, and the backend writes the plan's result and commits. Deciding in Python keeps
the rules in one place for both databases (the fold is :func:`agentdeck.model.status.apply` itself)
and lets one transaction carry the writes of many runs: that is the group commit.

Namespaces are stored as a key column (``ns``) rather than as a nullable value, so the unique
indexes that claim sessions and keys treat the default namespace like any other (SQL ``NULL``\\s
never collide in a unique index). :func:`ns_key` is injective: ``None`` is ``''`` and a named
namespace is ``'/' + name``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from agentdeck.errors import StoreError
from agentdeck.model.clock import utc
from agentdeck.model.events import Event
from agentdeck.model.payloads import Payload
from agentdeck.model.status import RunState, apply
from agentdeck.ports import NewRun, OpenOutcome, PruneQuery, RunQuery, RunRecord, Takeover
from agentdeck.storage.batch import check_batch
from agentdeck.storage.claims import may_step_over
from agentdeck.storage.folding import append_time, compose_batch, started_event
from agentdeck.storage.listing import checked_limit, prunable
from agentdeck.storage.payloads import checked_payloads, checked_started
from agentdeck.storage.records import record_of
from agentdeck.storage.refusals import no_such_run, run_id_taken
from agentdeck.vocabulary import TERMINAL, RunStatus

__all__ = [
    "RUN_COLUMNS",
    "SCHEMA_VERSION",
    "AppendJob",
    "BatchPlan",
    "EventRow",
    "Job",
    "OpenJob",
    "RowSource",
    "RunRow",
    "SqlWrites",
    "chunks",
    "expected_set",
    "from_micros",
    "list_sql",
    "ns_key",
    "ns_value",
    "prune_sql",
    "row_ordinal",
    "to_micros",
]

SCHEMA_VERSION = 1
"""The schema version the PostgreSQL store writes (SQLite's has moved on on its own: see
:data:`agentdeck.sqlite.schema.SCHEMA_VERSION`)."""

RUN_COLUMNS = (
    "ordinal, run_id, ns, name, invocable_kind, session_id, run_key, parent_run_id, status, "
    "created_at, updated_at, last_seq, wake_at, holds_session"
)
"""The columns :meth:`RunRow.from_db` reads, in its order."""


# =========================================================================== encodings


def ns_key(namespace: str | None) -> str:
    """The stored form of a namespace (injective, never ``NULL``)."""
    return "" if namespace is None else "/" + namespace


def ns_value(key: str) -> str | None:
    """The namespace a stored ``ns`` column holds."""
    return None if key == "" else key[1:]


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)


def to_micros(moment: datetime) -> int:
    """Exact microseconds since the epoch (how SQLite stores times: sortable and lossless)."""
    return (utc(moment) - _EPOCH) // _MICRO


def from_micros(micros: int) -> datetime:
    return _EPOCH + timedelta(microseconds=micros)


# =========================================================================== the run row

_STATUSES = {status.value: status for status in RunStatus}
"""A stored status to its member by a dict lookup (every row read builds one; ``RunStatus()``
costs several times more)."""


@dataclass(slots=True, eq=False)
class RunRow:
    """One row of the runs table: a run's identity and its folded, indexed state.

    ``holds_session`` marks the run that holds its ``(namespace, session)``: set when it opens,
    cleared when it reaches a terminal status or a takeover steps over it. A partial unique
    index on it is what makes "one open run per session" a fact the database enforces.
    """

    run_id: str
    ns: str
    name: str
    invocable_kind: str
    session_id: str | None
    key: str | None
    parent_run_id: str | None
    status: RunStatus
    created_at: datetime
    updated_at: datetime
    last_seq: int
    wake_at: datetime | None
    holds_session: bool
    ordinal: int | None = None
    """Assigned by the database on insert (creation order, for exact cursors)."""

    @classmethod
    def from_db(cls, row: Sequence[Any], moment: Callable[[Any], datetime]) -> RunRow:
        """A row read as :data:`RUN_COLUMNS`; ``moment`` decodes the backend's time column."""
        wake = row[12]
        return cls(
            ordinal=row[0],
            run_id=row[1],
            ns=row[2],
            name=row[3],
            invocable_kind=row[4],
            session_id=row[5],
            key=row[6],
            parent_run_id=row[7],
            status=_STATUSES.get(row[8]) or RunStatus(row[8]),
            created_at=moment(row[9]),
            updated_at=moment(row[10]),
            last_seq=row[11],
            wake_at=moment(wake) if wake is not None else None,
            holds_session=bool(row[13]),
        )

    @property
    def namespace(self) -> str | None:
        return ns_value(self.ns)

    def record(self) -> RunRecord:
        return record_of(self)


# =========================================================================== jobs


@dataclass(frozen=True, slots=True)
class OpenJob:
    new: NewRun
    takeover: Takeover | None
    ts: datetime


@dataclass(frozen=True, slots=True)
class AppendJob:
    run_id: str
    payloads: list[Payload]
    expect: frozenset[RunStatus] | None
    expect_seq: int | None
    ts: datetime


Job = OpenJob | AppendJob


class RowSource(Protocol):
    """Where a plan reads the rows it decides on, inside the batch's transaction."""

    def run(self, run_id: str) -> RunRow | None: ...

    def session_holder(self, ns: str, session_id: str) -> RunRow | None: ...

    def key_holder(self, ns: str, key: str) -> RunRow | None: ...


# =========================================================================== the plan


@dataclass(slots=True)
class EventRow:
    run_id: str
    seq: int
    data: str
    """The event as the backend keeps it (:attr:`BatchPlan.encode`): PostgreSQL the whole
    envelope as JSON (``Event.to_json``), SQLite the payload alone."""
    ts: datetime


@dataclass(slots=True, eq=False)
class BatchPlan:
    """Decides a batch of opens and appends against rows read in the batch's transaction.

    Call :meth:`open` and :meth:`append` in submission order; each returns its outcome or raises
    the refusal (a refused write changes nothing in the plan). Then write :attr:`updated`,
    :attr:`inserted` and :attr:`events` -- in that order, so a holder releasing its session is
    written before the run that claims it -- and commit.
    """

    source: RowSource
    max_seq: int | None = None
    """The highest seq the backend can store, if it has a limit: an append past it is refused."""
    backend: str = "sql"
    """The backend's name, for the refusal of an append past :attr:`max_seq`."""
    encode: Callable[[Event], str] = Event.to_json
    """An event's :attr:`EventRow.data`."""
    inserted: list[RunRow] = field(default_factory=list)
    updated: dict[str, RunRow] = field(default_factory=dict)
    reindexed: set[str] = field(default_factory=set)
    """The runs of :attr:`updated` whose indexed columns (``status``, ``wake_at``,
    ``holds_session``) changed. The others moved only ``last_seq`` and ``updated_at``, which a
    backend may write alone: SQLite rewrites an index entry whenever its column is ``SET``,
    even to the value it holds."""
    events: list[EventRow] = field(default_factory=list)
    changed: set[str] = field(default_factory=set)
    """Runs whose logs grew (whose followers to wake after the commit)."""
    _rows: dict[str, RunRow | None] = field(default_factory=dict)
    _new: set[str] = field(default_factory=set)
    _sessions: dict[tuple[str, str], str | None] = field(default_factory=dict)
    _keys: dict[tuple[str, str], str] = field(default_factory=dict)

    # -- reading through the plan's own decisions ---------------------------------------------

    def _cache(self, row: RunRow) -> RunRow:
        cached = self._rows.get(row.run_id)
        if cached is not None:
            return cached
        self._rows[row.run_id] = row
        return row

    def _run(self, run_id: str) -> RunRow | None:
        if run_id in self._rows:
            return self._rows[run_id]
        row = self.source.run(run_id)
        self._rows[run_id] = row
        return row

    def _holder(self, ns: str, session_id: str) -> RunRow | None:
        scoped = (ns, session_id)
        if scoped in self._sessions:
            holder_id = self._sessions[scoped]
            row = self._run(holder_id) if holder_id is not None else None
        else:
            found = self.source.session_holder(ns, session_id)
            row = self._cache(found) if found is not None else None
        return row if row is not None and row.holds_session else None

    def _key_holder(self, ns: str, key: str) -> RunRow | None:
        scoped = (ns, key)
        if scoped in self._keys:
            return self._run(self._keys[scoped])
        found = self.source.key_holder(ns, key)
        return self._cache(found) if found is not None else None

    def _touch(self, row: RunRow) -> None:
        if row.run_id not in self._new:
            self.updated[row.run_id] = row

    # -- decisions ----------------------------------------------------------------------------

    def open(self, job: OpenJob) -> OpenOutcome:
        new = job.new
        started = new.started
        existing = self._run(new.run_id)
        if existing is not None:
            raise run_id_taken(new.run_id, existing.status)
        ns = ns_key(new.namespace)
        stepped_over: RunRow | None = None
        if new.session_id is not None:
            holder = self._holder(ns, new.session_id)
            if holder is not None and holder.status not in TERMINAL:
                if not may_step_over(holder.run_id, holder.status, holder.updated_at, job.takeover):
                    return OpenOutcome(busy=holder.record())
                stepped_over = holder
        key = started.key
        if key is not None:
            key_holder = self._key_holder(ns, key)
            if key_holder is not None:
                return OpenOutcome(key_holder=key_holder.record())
        ts = utc(job.ts)
        event = started_event(new, ts)
        state = apply(RunState(), event)
        assert state.status is not None
        row = RunRow(
            run_id=new.run_id,
            ns=ns,
            name=started.name,
            invocable_kind=started.invocable_kind,
            session_id=new.session_id,
            key=key,
            parent_run_id=new.parent_run_id,
            status=state.status,
            created_at=ts,
            updated_at=ts,
            last_seq=0,
            wake_at=state.wake_at,
            holds_session=new.session_id is not None,
        )
        stepped_record = stepped_over.record() if stepped_over is not None else None
        if stepped_over is not None:
            stepped_over.holds_session = False
            self._touch(stepped_over)
            self.reindexed.add(stepped_over.run_id)
        self._rows[row.run_id] = row
        self._new.add(row.run_id)
        self.inserted.append(row)
        if new.session_id is not None:
            self._sessions[(ns, new.session_id)] = row.run_id
        if key is not None:
            self._keys[(ns, key)] = row.run_id
        self.events.append(EventRow(row.run_id, 0, self.encode(event), ts))
        self.changed.add(row.run_id)
        return OpenOutcome(event=event, stepped_over=stepped_record)

    def append(self, job: AppendJob) -> list[Event]:
        run_id = job.run_id
        row = self._run(run_id)
        if row is None:
            raise no_such_run(run_id)
        before = row.status
        payloads = job.payloads
        check_batch(
            run_id, before, row.last_seq, payloads, expect=job.expect, expect_seq=job.expect_seq
        )
        if not payloads:
            return []
        if self.max_seq is not None and row.last_seq + len(payloads) > self.max_seq:
            raise StoreError(
                f"run '{run_id}' would pass {self.max_seq} events, the most this store keeps "
                "for one run; nothing was recorded",
                backend=self.backend,
            )
        ts = append_time(job.ts, row.updated_at)
        state = RunState(
            status=before, last_seq=row.last_seq, last_ts=row.updated_at, wake_at=row.wake_at
        )
        recorded, state = compose_batch(
            state,
            payloads,
            run_id=run_id,
            ts=ts,
            session_id=row.session_id,
            namespace=row.namespace,
            parent_run_id=row.parent_run_id,
            origin=row.name,
        )
        encode = self.encode
        self.events.extend(EventRow(run_id, event.seq, encode(event), ts) for event in recorded)
        seq = state.last_seq
        assert state.status is not None
        indexed = (row.status, row.wake_at, row.holds_session)
        row.status = state.status
        row.last_seq = seq
        row.updated_at = ts
        row.wake_at = state.wake_at
        if state.status in TERMINAL and row.holds_session:
            row.holds_session = False  # a finished run frees its session
        self._touch(row)
        if indexed != (row.status, row.wake_at, row.holds_session) and run_id not in self._new:
            self.reindexed.add(run_id)
        self.changed.add(run_id)
        return recorded


# =========================================================================== writes


class SqlWrites:
    """``open_run`` and ``append`` of a SQL store: each is checked here, before any I/O, and
    then queued as a job for the backend's writer, which decides it in a :class:`BatchPlan`."""

    if TYPE_CHECKING:  # what the backend provides

        async def _submit(self, job: Job) -> Any: ...  # queue a job for the writer

        def _now(self) -> datetime: ...  # the backend's clock, in UTC

    async def open_run(self, new: NewRun, *, takeover: Takeover | None = None) -> OpenOutcome:
        checked_started(new)
        outcome: OpenOutcome = await self._submit(OpenJob(new, takeover, self._now()))
        return outcome

    async def append(
        self,
        run_id: str,
        payloads: Sequence[Payload],
        *,
        expect: Collection[RunStatus] | None = None,
        expect_seq: int | None = None,
    ) -> list[Event]:
        job = AppendJob(
            run_id, checked_payloads(payloads), expected_set(expect), expect_seq, self._now()
        )
        recorded: list[Event] = await self._submit(job)
        return recorded


# =========================================================================== listing and pruning


def list_sql(
    query: RunQuery, after: int | None, *, mark: str, moment: Callable[[datetime], Any]
) -> tuple[str, list[Any]]:
    """The ``SELECT`` answering ``query`` from the runs table and its indexes, and its params.

    ``mark`` is the driver's placeholder; ``moment`` encodes a time as the backend stores it. One
    row more than the page is asked for, so the caller knows whether another page follows.
    """
    limit = checked_limit(query)
    where: list[str] = []
    params: list[Any] = []

    def equal(column: str, value: Any) -> None:
        where.append(f"{column} = {mark}")
        params.append(value)

    if not query.all_namespaces:
        equal("ns", ns_key(query.namespace))
    statuses = query.statuses()
    if statuses is not None:
        if not statuses:
            where.append("1 = 0")
        else:
            ordered = sorted(status.value for status in statuses)
            where.append(f"status IN ({', '.join([mark] * len(ordered))})")
            params.extend(ordered)
    if query.session_id is not None:
        equal("session_id", query.session_id)
    if query.key is not None:
        equal("run_key", query.key)
    if query.name is not None:
        equal("name", query.name)
    if query.parent_run_id is not None:
        equal("parent_run_id", query.parent_run_id)
    for column, op, value in (
        ("created_at", ">", query.created_after),
        ("created_at", "<", query.created_before),
        ("updated_at", "<", query.updated_before),
    ):
        if value is not None:
            where.append(f"{column} {op} {mark}")
            params.append(moment(value))
    if query.wake_before is not None:
        if statuses is None:
            # Only a paused run has a wake time (the fold clears it on every other edge), so
            # this is no narrower than the filter asked: it lets the (status, wake_at) index work.
            equal("status", RunStatus.PAUSED.value)
        where.append(f"wake_at IS NOT NULL AND wake_at < {mark}")
        params.append(moment(query.wake_before))
    if after is not None:
        where.append(f"ordinal {'<' if query.newest_first else '>'} {mark}")
        params.append(after)
    sql = f"SELECT {RUN_COLUMNS} FROM agentdeck_runs"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += f" ORDER BY ordinal{' DESC' if query.newest_first else ''} LIMIT {mark}"
    params.append(limit + 1)
    return sql, params


def prune_sql(
    query: PruneQuery, *, mark: str, moment: Callable[[datetime], Any]
) -> tuple[str, list[Any]] | None:
    """The ``SELECT`` of the run ids ``query`` prunes (oldest first), or ``None`` for none."""
    statuses = sorted(status.value for status in prunable(query))
    if not statuses or (query.limit is not None and query.limit <= 0):
        return None
    where = [f"status IN ({', '.join([mark] * len(statuses))})"]
    params: list[Any] = list(statuses)
    if not query.all_namespaces:
        where.append(f"ns = {mark}")
        params.append(ns_key(query.namespace))
    if query.finished_before is not None:
        where.append(f"updated_at < {mark}")
        params.append(moment(query.finished_before))
    sql = f"SELECT run_id FROM agentdeck_runs WHERE {' AND '.join(where)} ORDER BY ordinal"
    if query.limit is not None:
        sql += f" LIMIT {mark}"
        params.append(query.limit)
    return sql, params


def row_ordinal(row: RunRow) -> int:
    """A listed row's ordinal (every row read back from the table has one)."""
    return row.ordinal or 0


def chunks(items: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def expected_set(expect: Collection[RunStatus] | None) -> frozenset[RunStatus] | None:
    return frozenset(RunStatus(status) for status in expect) if expect is not None else None
