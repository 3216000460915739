"""The ``postgresql://`` backends: an event store, control signals and leases on PostgreSQL.

Durable (a commit is on the server's disk) and shared by every process on the same database and
schema. Built on psycopg 3 (async) with one connection pool per port.

* **Writes**: one writer task per store takes the opens and appends queued while it was busy and
  commits them in one transaction: it locks the rows they touch (``SELECT ... ORDER BY run_id FOR
  UPDATE``, so two writers never deadlock on each other's runs), decides every condition against
  them (:class:`agentdeck.storage.sql.BatchPlan`), and writes the batch with one multi-row
  statement per table. An append returns only after that commit. Claims are enforced by the
  database too: a partial unique index allows one session holder per ``(namespace, session)`` and
  one run per ``(namespace, key)``, so a racing writer in another process loses with a unique
  violation, and its batch is decided again against the winner's rows.
* **Follow**: ``LISTEN``/``NOTIFY`` (see :mod:`agentdeck_stores._pg_notify`).
* **Schema**: the URL's ``?schema=name`` (or the first ``search_path`` entry of its ``options``)
  is created if missing; tables are created and migrated on first open (versioned).
* **Read-only** (``BackendRequest(read_only=True)``, as ``agentdeck runs list`` opens it): no
  DDL at open, every pooled session is ``default_transaction_read_only`` so the server refuses
  any write, and the port refuses its own writes with ``StoreError``; a missing schema or missing
  tables read as an empty store, and nothing is created for them.
"""

from __future__ import annotations

import asyncio
import copy
from collections import deque
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any, ClassVar

import psycopg

from agentdeck.errors import AgentDeckError, StoreError
from agentdeck.model.clock import Clock, SystemClock, utc
from agentdeck.model.events import Event
from agentdeck.ports import (
    BackendRequest,
    ControlPort,
    ControlSignal,
    EventStore,
    LeasePort,
    LeaseState,
    PruneQuery,
    RunPage,
    RunQuery,
    RunRecord,
)
from agentdeck.storage import checked_ttl, checked_verb, decode_cursor, follow_pages, run_page
from agentdeck.storage.sql import (
    RUN_COLUMNS,
    AppendJob,
    BatchPlan,
    Job,
    OpenJob,
    RunRow,
    SqlWrites,
    list_sql,
    ns_key,
    prune_sql,
    row_ordinal,
)
from agentdeck.vocabulary import TERMINAL, ControlVerb, RunStatus
from agentdeck_stores._pg_db import (
    BACKEND,
    PgDatabase,
    PgTarget,
    parse_url,
    pipelined_transaction,
    store_error,
    transaction,
)
from agentdeck_stores._pg_events import (
    NotPlain,
    events_from,
    read_params,
    whole_events,
    whole_params,
)
from agentdeck_stores._pg_json import jsonb_text
from agentdeck_stores._pg_notify import Listener, channel_for, notify_payloads
from agentdeck_stores.settings import connect_timeout

__all__ = ["PostgresControlPort", "PostgresEventStore", "PostgresLeasePort", "lock_rows_sql"]

MAX_BATCH = 512
"""The most queued writes one transaction takes."""
CONFLICT_RETRIES = 8
"""How often a batch is decided again after losing a race to another process's writer."""
FOLLOW_PAGE = 500

Connection = psycopg.AsyncConnection[Any]


def _moment(value: datetime) -> datetime:
    return utc(value)


# =========================================================================== the batch writer


async def _fetch_all(
    connection: Connection,
    query: str,
    params: Sequence[Any] | Mapping[str, Any],
    *,
    prepare: bool | None = None,
) -> list[Any]:
    cursor = await connection.execute(query, params, prepare=prepare)
    return await cursor.fetchall()


async def _fetch_one(connection: Connection, query: str, params: Sequence[Any]) -> Any:
    cursor = await connection.execute(query, params)
    return await cursor.fetchone()


class _Preloaded:
    """The rows a batch plan decides on, read and locked in one statement."""

    def __init__(self, rows: list[RunRow]) -> None:
        self._by_id = {row.run_id: row for row in rows}
        self._holders = {(row.ns, row.session_id): row for row in rows if row.holds_session}
        self._keys = {(row.ns, row.key): row for row in rows if row.key is not None}

    def run(self, run_id: str) -> RunRow | None:
        return self._by_id.get(run_id)

    def session_holder(self, ns: str, session_id: str) -> RunRow | None:
        return self._holders.get((ns, session_id))

    def key_holder(self, ns: str, key: str) -> RunRow | None:
        return self._keys.get((ns, key))


def lock_rows_sql(jobs: Sequence[Job]) -> tuple[str, list[Any]]:
    """The statement that reads and locks every row a batch's decisions depend on.

    The runs it appends to or would open (a taken id), the current holders of the sessions it
    opens on (through the partial unique index on ``holds_session``) and the holders of its keys
    (through the unique key index), locked in ``run_id`` order so concurrent writers never
    deadlock on each other's rows.
    """
    run_ids: set[str] = set()
    sessions: set[tuple[str, str]] = set()
    keys: set[tuple[str, str]] = set()
    for job in jobs:
        if isinstance(job, AppendJob):
            run_ids.add(job.run_id)
            continue
        new = job.new
        run_ids.add(new.run_id)
        ns = ns_key(new.namespace)
        if new.session_id is not None:
            sessions.add((ns, new.session_id))
        if new.key is not None:
            keys.add((ns, new.key))
    # Each part finds its rows through an index lookup per wanted id, session or key (an
    # ``OR`` of the three would scan whole partial indexes: every live holder, every key).
    parts = ["SELECT unnest(%b::text[])"]
    params: list[Any] = [sorted(run_ids)]
    if sessions:
        parts.append(
            "SELECT r.run_id FROM unnest(%b::text[], %b::text[]) AS s(ns, session_id) "
            "JOIN agentdeck_runs AS r ON r.ns = s.ns AND r.session_id = s.session_id "
            "AND r.holds_session"
        )
        params += [[ns for ns, _ in sessions], [session for _, session in sessions]]
    if keys:
        parts.append(
            "SELECT r.run_id FROM unnest(%b::text[], %b::text[]) AS k(ns, run_key) "
            "JOIN agentdeck_runs AS r ON r.ns = k.ns AND r.run_key = k.run_key"
        )
        params += [[ns for ns, _ in keys], [key for _, key in keys]]
    query = (
        f"SELECT {RUN_COLUMNS} FROM agentdeck_runs WHERE run_id IN "
        f"({' UNION ALL '.join(parts)}) ORDER BY run_id FOR UPDATE"
    )
    return query, params


async def _lock_rows(connection: Connection, jobs: Sequence[Job]) -> list[RunRow]:
    query, params = lock_rows_sql(jobs)
    # Never prepared: a statement prepared inside a pipeline that then aborts (a lost race)
    # would be remembered by psycopg as prepared although the server dropped it.
    rows = await _fetch_all(connection, query, params, prepare=False)
    return [RunRow.from_db(row, _moment) for row in rows]


async def _write_plan(connection: Connection, plan: BatchPlan, channel: str) -> None:
    if plan.updated:
        rows = list(plan.updated.values())
        await connection.execute(
            "UPDATE agentdeck_runs AS r SET status = u.status, last_seq = u.last_seq, "
            "updated_at = u.updated_at, wake_at = u.wake_at, holds_session = u.holds_session "
            "FROM unnest(%b::text[], %b::text[], %b::int[], %b::timestamptz[], "
            "%b::timestamptz[], %b::bool[]) "
            "AS u(run_id, status, last_seq, updated_at, wake_at, holds_session) "
            "WHERE r.run_id = u.run_id",
            [
                [row.run_id for row in rows],
                [row.status.value for row in rows],
                [row.last_seq for row in rows],
                [row.updated_at for row in rows],
                [row.wake_at for row in rows],
                [row.holds_session for row in rows],
            ],
            prepare=False,
        )
    if plan.inserted:
        rows = plan.inserted
        await connection.execute(
            "INSERT INTO agentdeck_runs (run_id, ns, name, invocable_kind, session_id, run_key, "
            "parent_run_id, status, created_at, updated_at, last_seq, wake_at, holds_session) "
            "SELECT run_id, ns, name, invocable_kind, session_id, run_key, parent_run_id, "
            "status, created_at, updated_at, last_seq, wake_at, holds_session "
            "FROM unnest(%b::text[], %b::text[], %b::text[], %b::text[], %b::text[], "
            "%b::text[], %b::text[], %b::text[], %b::timestamptz[], %b::timestamptz[], "
            "%b::int[], %b::timestamptz[], %b::bool[]) WITH ORDINALITY "
            "AS t(run_id, ns, name, invocable_kind, session_id, run_key, parent_run_id, status, "
            "created_at, updated_at, last_seq, wake_at, holds_session, position) "
            "ORDER BY position",
            [
                [row.run_id for row in rows],
                [row.ns for row in rows],
                [row.name for row in rows],
                [row.invocable_kind for row in rows],
                [row.session_id for row in rows],
                [row.key for row in rows],
                [row.parent_run_id for row in rows],
                [row.status.value for row in rows],
                [row.created_at for row in rows],
                [row.updated_at for row in rows],
                [row.last_seq for row in rows],
                [row.wake_at for row in rows],
                [row.holds_session for row in rows],
            ],
            prepare=False,
        )
    if plan.events:
        events = plan.events
        await connection.execute(
            "INSERT INTO agentdeck_events (run_id, seq, data) "
            "SELECT run_id, seq, data::jsonb FROM unnest(%b::text[], %b::int[], %b::text[]) "
            "AS t(run_id, seq, data)",
            [
                [event.run_id for event in events],
                [event.seq for event in events],
                [event.data for event in events],
            ],
            prepare=False,
        )
    for payload in notify_payloads(sorted(plan.changed)):
        await connection.execute("SELECT pg_notify(%s, %s)", (channel, payload), prepare=False)


_RETRIED = (
    psycopg.errors.UniqueViolation,
    psycopg.errors.DeadlockDetected,
    psycopg.errors.SerializationFailure,
)


async def _commit_batch(
    connection: Connection, jobs: Sequence[Job], channel: str
) -> tuple[list[tuple[Any, BaseException | None]], set[str]]:
    """Decide and write a batch in one transaction; the outcomes and the runs that grew."""
    Outcomes = list[tuple[Any, BaseException | None]]

    async def work() -> tuple[BatchPlan, Outcomes]:
        plan = BatchPlan(_Preloaded(await _lock_rows(connection, jobs)), encode=jsonb_text)
        outcomes: Outcomes = []
        for job in jobs:
            try:
                result: Any = plan.open(job) if isinstance(job, OpenJob) else plan.append(job)
            except AgentDeckError as refused:
                outcomes.append((None, refused))
            else:
                outcomes.append((result, None))
        await _write_plan(connection, plan, channel)
        return plan, outcomes

    for attempt in range(CONFLICT_RETRIES + 1):
        try:
            plan, outcomes = await pipelined_transaction(connection, work)
        except _RETRIED:
            if attempt == CONFLICT_RETRIES:
                raise
            # Another process's writer claimed a session or key first (or the two deadlocked):
            # decide the batch again, against its committed rows.
            continue
        return outcomes, plan.changed
    raise AssertionError("unreachable")  # pragma: no cover


class _Writer:
    """The task that takes queued opens and appends and commits them in batches."""

    def __init__(self, store: PostgresEventStore) -> None:
        self._store = store
        self._queue: deque[tuple[Job, asyncio.Future[Any]]] = deque()
        self._wakeup = asyncio.Event()
        self._closing = False
        self._task = asyncio.create_task(self._run(), name="agentdeck-postgres-writer")

    async def submit(self, job: Job) -> Any:
        if self._closing:
            raise StoreError("it is closed", backend=BACKEND, url=self._store.url)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queue.append((job, future))
        self._wakeup.set()
        return await future

    async def close(self) -> None:
        """Commit what is queued, then stop."""
        self._closing = True
        self._wakeup.set()
        await self._task

    async def _run(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            while self._queue:
                batch = [self._queue.popleft() for _ in range(min(MAX_BATCH, len(self._queue)))]
                await self._commit(batch)
            if self._closing:
                return

    async def _commit(self, batch: list[tuple[Job, asyncio.Future[Any]]]) -> None:
        store = self._store
        jobs = [job for job, _ in batch]
        try:
            outcomes, changed = await store._db.run(
                lambda connection: _commit_batch(connection, jobs, store._channel)
            )
        except Exception as exc:
            failure = exc if isinstance(exc, AgentDeckError) else store_error(store.url, exc)
            for _, future in batch:
                if not future.done():
                    future.set_exception(copy.copy(failure))
            return
        for (_, future), (result, refused) in zip(batch, outcomes, strict=True):
            if future.done():
                continue
            if refused is not None:
                future.set_exception(refused)
            else:
                future.set_result(result)
        store._listener.wake(changed)


# =========================================================================== the store


class _Backend:
    """URL, clock and the pool every PostgreSQL port holds."""

    pool_name: ClassVar[str] = "agentdeck"

    def __init__(
        self, url: str, clock: Clock | None, timeout: float | None = None, read_only: bool = False
    ) -> None:
        self.url = url
        self.read_only = read_only
        self._target: PgTarget = parse_url(url)
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._db = PgDatabase(
            url, self._target, self.pool_name, timeout=timeout, read_only=read_only
        )
        self._opened = False
        self._closed = False

    def _now(self) -> datetime:
        return utc(self._clock.now())

    def _check_usable(self) -> None:
        if self._closed:
            raise StoreError("it is closed", backend=BACKEND, url=self.url)
        if not self._opened:
            raise StoreError("open() it before use", backend=BACKEND, url=self.url)

    def _check_writable(self, operation: str) -> None:
        self._check_usable()
        if self.read_only:
            raise StoreError(
                f"{operation} refused: this handle was opened read-only (a reader such as "
                "`agentdeck runs list` never writes); open it without read_only to write",
                backend=BACKEND,
                url=self.url,
            )

    @property
    def _absent(self) -> bool:
        """Opened read-only on a database without AgentDeck's tables: every read is empty."""
        self._check_usable()
        return self._db.absent

    async def _row(self, query: str, params: Sequence[Any]) -> Any:
        """The first row of one statement (``None`` if it returns none), on a pooled connection:
        how a port asks the database one thing, or makes one conditional write and learns
        whether it took (``RETURNING``)."""
        return await self._db.run(lambda connection: _fetch_one(connection, query, params))

    async def _rows(self, query: str, params: Sequence[Any]) -> list[Any]:
        """Every row of one statement, on a pooled connection."""
        return await self._db.run(lambda connection: _fetch_all(connection, query, params))


class PostgresEventStore(_Backend, SqlWrites, EventStore):
    """An :class:`~agentdeck.ports.EventStore` on PostgreSQL (see the module docstring)."""

    durable: ClassVar[bool] = True
    shared: ClassVar[bool] = True
    pool_name = "agentdeck-events"

    def __init__(
        self,
        url: str,
        *,
        clock: Clock | None = None,
        timeout: float | None = None,
        read_only: bool = False,
    ) -> None:
        super().__init__(url, clock, timeout, read_only)
        self._writer: _Writer | None = None
        self._channel = ""
        self._listener = Listener(self._target.conninfo, "", timeout=self._db.timeout)

    @classmethod
    def from_request(cls, request: BackendRequest) -> PostgresEventStore:
        """The factory the ``postgresql`` (and ``postgres``) scheme registers."""
        return cls(
            request.url,
            clock=request.clock,
            timeout=connect_timeout(request.settings),
            read_only=request.read_only,
        )

    async def open(self) -> None:
        if self._opened:
            return
        await self._db.open()
        if self._db.schema is not None:
            self._channel = channel_for(self._db.schema)
            self._listener = Listener(
                self._target.conninfo, self._channel, timeout=self._db.timeout
            )
        if not self.read_only:
            self._writer = _Writer(self)
        self._opened = True

    async def close(self) -> None:
        if self._closed or not self._opened:
            self._closed = True
            return
        self._closed = True
        await self._listener.close()
        if self._writer is not None:
            await self._writer.close()
        await self._db.close()

    async def _submit(self, job: Job) -> Any:
        self._check_writable("writing a run")
        assert self._writer is not None
        return await self._writer.submit(job)

    # -- writes: open_run and append are SqlWrites' --------------------------------------

    async def prune(self, query: PruneQuery) -> int:
        self._check_writable("pruning")
        selected = prune_sql(query, mark="%s", moment=_moment)
        if selected is None:
            return 0
        select, params = selected

        async def work(connection: Connection) -> int:
            async def delete() -> int:
                rows = await _fetch_all(
                    connection,
                    "DELETE FROM agentdeck_runs WHERE run_id IN "
                    f"({select} FOR UPDATE SKIP LOCKED) RETURNING run_id",
                    params,
                )
                run_ids = [run_id for (run_id,) in rows]
                if run_ids:
                    for table in (
                        "agentdeck_events",
                        "agentdeck_engine_state",
                        "agentdeck_control",
                        "agentdeck_leases",
                    ):
                        await connection.execute(
                            f"DELETE FROM {table} WHERE run_id = ANY(%s)",
                            (run_ids,),
                        )
                return len(run_ids)

            return await transaction(connection, delete)

        return await self._db.run(work)

    async def put_state(self, run_id: str, name: str, value: bytes) -> None:
        self._check_writable("writing engine state")
        data = bytes(value)

        async def work(connection: Connection) -> None:
            await connection.execute(
                "INSERT INTO agentdeck_engine_state (run_id, name, value) VALUES (%s, %s, %s) "
                "ON CONFLICT (run_id, name) DO UPDATE SET value = EXCLUDED.value",
                (run_id, name, data),
            )

        await self._db.run(work)

    async def delete_state(self, run_id: str, name: str) -> None:
        self._check_writable("deleting engine state")

        async def work(connection: Connection) -> None:
            await connection.execute(
                "DELETE FROM agentdeck_engine_state WHERE run_id = %s AND name = %s",
                (run_id, name),
            )

        await self._db.run(work)

    # -- reads --------------------------------------------------------------------------------

    async def read(
        self, run_id: str, *, from_seq: int = 0, limit: int | None = None
    ) -> list[Event]:
        if self._absent:
            return []
        return await self._db.run(lambda connection: _read(connection, run_id, from_seq, limit))

    def follow(self, run_id: str, *, from_seq: int = 0) -> AsyncIterator[Event]:
        return follow_pages(partial(self._next_events, run_id), from_seq)

    async def _next_events(self, run_id: str, position: int) -> list[Event] | None:
        if self._db.absent:
            return None  # read-only on a database without the tables: no run to follow
        while not self._closed:
            future = self._listener.park(run_id)
            try:
                events, status = await self._db.run(
                    lambda connection: _tail(connection, run_id, position)
                )
                if events:
                    return events
                if status is not None and status in TERMINAL:
                    return None
                await future
            finally:
                self._listener.unpark(run_id, future)
        return None

    async def get_run(self, run_id: str) -> RunRecord | None:
        if self._absent:
            return None
        return await self._db.run(lambda connection: _one_run(connection, "run_id = %s", (run_id,)))

    async def find_key(self, namespace: str | None, key: str) -> RunRecord | None:
        if self._absent:
            return None
        return await self._db.run(
            lambda connection: _one_run(
                connection, "ns = %s AND run_key = %s", (ns_key(namespace), key)
            )
        )

    async def list_runs(self, query: RunQuery) -> RunPage:
        if self._absent:
            return RunPage(runs=[])
        after = decode_cursor(BACKEND, query.cursor) if query.cursor is not None else None
        select, params = list_sql(query, after, mark="%s", moment=_moment)

        async def work(connection: Connection) -> RunPage:
            found = await _fetch_all(connection, select, params)
            rows = (RunRow.from_db(row, _moment) for row in found)
            return run_page(
                rows, query.limit, scheme=BACKEND, ordinal=row_ordinal, record=RunRow.record
            )

        return await self._db.run(work)

    async def get_state(self, run_id: str, name: str) -> bytes | None:
        if self._absent:
            return None
        row = await self._row(
            "SELECT value FROM agentdeck_engine_state WHERE run_id = %s AND name = %s",
            (run_id, name),
        )
        return bytes(row[0]) if row is not None else None


async def _read(
    connection: Connection, run_id: str, from_seq: int, limit: int | None
) -> list[Event]:
    """A run's events, each as ``Event.from_json`` reads its row (see :mod:`._pg_events`)."""
    try:
        return events_from(
            run_id, await _fetch_all(connection, *read_params(run_id, from_seq, limit))
        )
    except NotPlain:
        # A row only validation reads exactly: read every envelope whole, in a statement of its
        # own. A log is only ever appended to, so that later snapshot holds the same rows (and
        # perhaps more, or none if the run was pruned meanwhile, as a later read would).
        return whole_events(await _fetch_all(connection, *whole_params(run_id, from_seq, limit)))


async def _tail(
    connection: Connection, run_id: str, position: int
) -> tuple[list[Event], RunStatus | None]:
    """The next page for a follower, and the run's status when there is nothing new.

    Each statement reads its own snapshot, so a status read *after* an empty page may already
    see a terminal event the page missed: then the page is read again, and that one is final.
    """
    events = await _read(connection, run_id, position, FOLLOW_PAGE)
    if events:
        return events, None
    row = await _fetch_one(
        connection, "SELECT status FROM agentdeck_runs WHERE run_id = %s", (run_id,)
    )
    status = RunStatus(row[0]) if row is not None else None
    if status is not None and status in TERMINAL:
        return await _read(connection, run_id, position, FOLLOW_PAGE), status
    return [], status


async def _one_run(connection: Connection, where: str, params: Sequence[Any]) -> RunRecord | None:
    row = await _fetch_one(
        connection, f"SELECT {RUN_COLUMNS} FROM agentdeck_runs WHERE {where}", params
    )
    return RunRow.from_db(row, _moment).record() if row is not None else None


# =========================================================================== control and leases


def _signal(row: Sequence[Any]) -> ControlSignal:
    return ControlSignal(
        run_id=row[0], verb=ControlVerb(row[1]), reason=row[2], requested_at=utc(row[3])
    )


class _SmallPort(_Backend):
    async def open(self) -> None:
        if self._opened:
            return
        await self._db.open()
        self._opened = True

    async def close(self) -> None:
        if self._closed or not self._opened:
            self._closed = True
            return
        self._closed = True
        await self._db.close()


class PostgresControlPort(_SmallPort, ControlPort):
    """Pending control requests on PostgreSQL, visible to every process on the schema."""

    shared: ClassVar[bool] = True
    pool_name = "agentdeck-control"

    def __init__(
        self,
        url: str,
        *,
        clock: Clock | None = None,
        timeout: float | None = None,
        read_only: bool = False,
    ) -> None:
        super().__init__(url, clock, timeout, read_only)

    @classmethod
    def from_request(cls, request: BackendRequest) -> PostgresControlPort:
        """The factory the ``postgresql`` (and ``postgres``) scheme registers."""
        return cls(
            request.url,
            clock=request.clock,
            timeout=connect_timeout(request.settings),
            read_only=request.read_only,
        )

    async def request(self, run_id: str, verb: ControlVerb, reason: str | None = None) -> bool:
        self._check_writable("requesting a control signal")
        wanted, at = checked_verb(verb), self._now()
        row = await self._row(
            "INSERT INTO agentdeck_control (run_id, verb, reason, requested_at) "
            "VALUES (%s, %s, %s, %s) ON CONFLICT (run_id, verb) DO NOTHING RETURNING 1",
            (run_id, wanted.value, reason, at),
        )
        return row is not None

    async def pending(self, run_id: str) -> tuple[ControlSignal, ...]:
        if self._absent:
            return ()
        rows = await self._rows(
            "SELECT run_id, verb, reason, requested_at FROM agentdeck_control "
            "WHERE run_id = %s ORDER BY verb <> 'cancel', id",
            (run_id,),
        )
        return tuple(_signal(row) for row in rows)

    async def take(self, run_id: str, verb: ControlVerb) -> ControlSignal | None:
        self._check_writable("taking a control signal")
        wanted = checked_verb(verb)
        row = await self._row(
            "DELETE FROM agentdeck_control WHERE run_id = %s AND verb = %s "
            "RETURNING run_id, verb, reason, requested_at",
            (run_id, wanted.value),
        )
        return _signal(row) if row is not None else None

    async def forget(self, run_ids: Collection[str]) -> None:
        self._check_writable("forgetting control signals")
        ids = list(run_ids)
        if not ids:
            return

        async def work(connection: Connection) -> None:
            await connection.execute("DELETE FROM agentdeck_control WHERE run_id = ANY(%s)", (ids,))

        await self._db.run(work)


class PostgresLeasePort(_SmallPort, LeasePort):
    """Liveness leases on PostgreSQL, timed by the factory's clock (never the server's)."""

    shared: ClassVar[bool] = True
    pool_name = "agentdeck-leases"

    def __init__(
        self,
        url: str,
        *,
        clock: Clock | None = None,
        timeout: float | None = None,
        read_only: bool = False,
    ) -> None:
        super().__init__(url, clock, timeout, read_only)

    @classmethod
    def from_request(cls, request: BackendRequest) -> PostgresLeasePort:
        """The factory the ``postgresql`` (and ``postgres``) scheme registers."""
        return cls(
            request.url,
            clock=request.clock,
            timeout=connect_timeout(request.settings),
            read_only=request.read_only,
        )

    async def acquire(self, run_id: str, owner: str, ttl: float) -> bool:
        self._check_writable("acquiring a lease")
        span = checked_ttl(ttl)
        now = self._now()
        row = await self._row(
            "INSERT INTO agentdeck_leases AS l (run_id, owner, expires_at) "
            "VALUES (%s, %s, %s) ON CONFLICT (run_id) DO UPDATE "
            "SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at "
            "WHERE l.owner = EXCLUDED.owner OR l.expires_at <= %s RETURNING 1",
            (run_id, owner, now + span, now),
        )
        return row is not None

    async def renew(self, run_id: str, owner: str, ttl: float) -> bool:
        self._check_writable("renewing a lease")
        span = checked_ttl(ttl)
        now = self._now()
        row = await self._row(
            "UPDATE agentdeck_leases SET expires_at = %s "
            "WHERE run_id = %s AND owner = %s AND expires_at > %s RETURNING 1",
            (now + span, run_id, owner, now),
        )
        return row is not None

    async def release(self, run_id: str, owner: str) -> None:
        self._check_writable("releasing a lease")

        async def work(connection: Connection) -> None:
            await connection.execute(
                "DELETE FROM agentdeck_leases WHERE run_id = %s AND owner = %s", (run_id, owner)
            )

        await self._db.run(work)

    async def state(self, run_id: str) -> LeaseState:
        if self._absent:
            return LeaseState.NONE
        now = self._now()
        row = await self._row(
            "SELECT expires_at FROM agentdeck_leases WHERE run_id = %s", (run_id,)
        )
        if row is None:
            return LeaseState.NONE
        return LeaseState.ALIVE if now < utc(row[0]) else LeaseState.LAPSED

    async def lapsed(self, limit: int = 100) -> list[str]:
        if self._absent:
            return []
        now = self._now()
        rows = await self._rows(
            "SELECT run_id FROM agentdeck_leases WHERE expires_at <= %s "
            'ORDER BY expires_at, run_id COLLATE "C" LIMIT %s',
            (now, max(0, limit)),
        )
        return [run_id for (run_id,) in rows]

    async def forget(self, run_ids: Collection[str]) -> None:
        self._check_usable()
        ids = list(run_ids)
        if not ids:
            return

        async def work(connection: Connection) -> None:
            await connection.execute("DELETE FROM agentdeck_leases WHERE run_id = ANY(%s)", (ids,))

        await self._db.run(work)
