"""The ``sqlite://`` backends: an event store, control signals and leases in one SQLite file.

Durable and shared by every process that opens the same file (on one machine: SQLite's locks
need a local filesystem). The file runs in WAL mode, so readers never wait for the writer.

* **Writes** go through one writer thread per store that commits the opens and appends queued
  while it was busy in one transaction (group commit). An append returns only after its
  transaction committed, with ``synchronous=FULL`` by default: committed means on disk.
* **Reads** run on a small pool of reader threads, never on the event loop.
* **Follow** is woken at once by appends from this process, and by a watcher polling with
  backoff for appends from other processes (see :mod:`agentdeck_stores._sqlite_follow`).

``sqlite:///rel/path.db`` and ``sqlite://rel/path.db`` are relative to the working directory
(resolved when the backend is built), ``sqlite:////abs/path.db`` absolute; the directory is
created if missing.
"""

from __future__ import annotations

import asyncio
import sqlite3
import weakref
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import Any, ClassVar, TypeVar

from agentdeck.clock import Clock, SystemClock, utc
from agentdeck.errors import AgentDeckError, InvalidInputError, StoreError
from agentdeck.events import TERMINAL_KINDS, ControlVerb, Event, Payload, stored_events
from agentdeck.ports import (
    BackendRequest,
    ControlPort,
    ControlSignal,
    EventStore,
    LeasePort,
    LeaseState,
    NewRun,
    OpenOutcome,
    PruneQuery,
    RunPage,
    RunQuery,
    RunRecord,
    Takeover,
)
from agentdeck.status import TERMINAL, RunStatus
from agentdeck_stores._sql import (
    RUN_COLUMNS,
    AppendJob,
    BatchPlan,
    Job,
    OpenJob,
    RunRow,
    checked_payloads,
    checked_started,
    chunks,
    decode_cursor,
    encode_cursor,
    expected_set,
    from_micros,
    list_sql,
    ns_key,
    prune_sql,
    to_micros,
)
from agentdeck_stores._sqlite_follow import FollowHub, acquire_hub, release_hub, wake
from agentdeck_stores._sqlite_schema import (
    BACKEND,
    SqliteTarget,
    connect,
    ensure_schema,
    parse_url,
    store_error,
)
from agentdeck_stores._sqlite_threads import ConnectionThread

__all__ = ["SqliteControlPort", "SqliteEventStore", "SqliteLeasePort"]

_T = TypeVar("_T")

READERS = 2
"""Reader threads per store: reads run beside each other and beside the writer (WAL)."""
FOLLOW_PAGE = 500


# =========================================================================== the row source


RUN_BY_ID = f"SELECT {RUN_COLUMNS} FROM agentdeck_runs WHERE run_id = ?"
SESSION_HOLDER = (
    f"SELECT {RUN_COLUMNS} FROM agentdeck_runs "
    "WHERE ns = ? AND session_id = ? AND holds_session = 1"
)
"""The run holding a session (the partial unique index answers it): what starting a turn reads."""
KEY_HOLDER = f"SELECT {RUN_COLUMNS} FROM agentdeck_runs WHERE ns = ? AND run_key = ?"


class _Rows:
    """Reads the rows a batch plan decides on, inside the writer's ``BEGIN IMMEDIATE``.

    The rows of every run the batch names are read up front, in one statement per 500 runs
    rather than one per run: a batch of a hundred appends is then one read, not a hundred.
    """

    def __init__(self, connection: sqlite3.Connection, jobs: Sequence[Job]) -> None:
        self._connection = connection
        named = list(
            dict.fromkeys(
                job.new.run_id if isinstance(job, OpenJob) else job.run_id for job in jobs
            )
        )
        self._runs: dict[str, RunRow | None] = dict.fromkeys(named)
        for batch in chunks(named, 500):
            marks = ", ".join("?" * len(batch))
            for row in connection.execute(
                f"SELECT {RUN_COLUMNS} FROM agentdeck_runs WHERE run_id IN ({marks})", batch
            ):
                found = RunRow.from_db(row, from_micros)
                self._runs[found.run_id] = found

    def _one(self, query: str, params: Sequence[Any]) -> RunRow | None:
        row = self._connection.execute(query, params).fetchone()
        return RunRow.from_db(row, from_micros) if row is not None else None

    def run(self, run_id: str) -> RunRow | None:
        if run_id in self._runs:
            return self._runs[run_id]
        return self._one(RUN_BY_ID, (run_id,))

    def session_holder(self, ns: str, session_id: str) -> RunRow | None:
        return self._one(SESSION_HOLDER, (ns, session_id))

    def key_holder(self, ns: str, key: str) -> RunRow | None:
        return self._one(KEY_HOLDER, (ns, key))


def _write_plan(connection: sqlite3.Connection, plan: BatchPlan) -> None:
    if plan.updated:
        connection.executemany(
            "UPDATE agentdeck_runs SET status = ?, last_seq = ?, updated_at = ?, wake_at = ?, "
            "holds_session = ? WHERE run_id = ?",
            [
                (
                    row.status.value,
                    row.last_seq,
                    to_micros(row.updated_at),
                    to_micros(row.wake_at) if row.wake_at is not None else None,
                    int(row.holds_session),
                    row.run_id,
                )
                for row in plan.updated.values()
            ],
        )
    if plan.inserted:
        connection.executemany(
            "INSERT INTO agentdeck_runs (run_id, ns, name, invocable_kind, session_id, run_key, "
            "parent_run_id, status, created_at, updated_at, last_seq, wake_at, holds_session) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    row.run_id,
                    row.ns,
                    row.name,
                    row.invocable_kind,
                    row.session_id,
                    row.key,
                    row.parent_run_id,
                    row.status.value,
                    to_micros(row.created_at),
                    to_micros(row.updated_at),
                    row.last_seq,
                    to_micros(row.wake_at) if row.wake_at is not None else None,
                    int(row.holds_session),
                )
                for row in plan.inserted
            ],
        )
    if plan.events:
        connection.executemany(
            "INSERT INTO agentdeck_events (run_id, seq, data) VALUES (?, ?, ?)",
            [(event.run_id, event.seq, event.data) for event in plan.events],
        )


def _commit_batch(
    hub: FollowHub, connection: sqlite3.Connection, jobs: Sequence[Job]
) -> list[tuple[Any, BaseException | None]]:
    """Decide and write a batch of opens and appends in one transaction, then wake followers."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        plan = BatchPlan(_Rows(connection, jobs))
        outcomes: list[tuple[Any, BaseException | None]] = []
        for job in jobs:
            try:
                result: Any = plan.open(job) if isinstance(job, OpenJob) else plan.append(job)
            except AgentDeckError as refused:
                outcomes.append((None, refused))
            else:
                outcomes.append((result, None))
        _write_plan(connection, plan)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    hub.notify(plan.changed)
    return outcomes


def _transaction(connection: sqlite3.Connection, work: Callable[[], _T]) -> _T:
    connection.execute("BEGIN IMMEDIATE")
    try:
        result = work()
        connection.execute("COMMIT")
        return result
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


# =========================================================================== reads


def _events(rows: Sequence[tuple[str]]) -> list[Event]:
    return stored_events([data for (data,) in rows])


def _read(
    connection: sqlite3.Connection, run_id: str, from_seq: int, limit: int | None
) -> list[Event]:
    sql = "SELECT data FROM agentdeck_events WHERE run_id = ? AND seq >= ? ORDER BY seq"
    params: tuple[Any, ...] = (run_id, max(0, from_seq))
    if limit is not None:
        sql += " LIMIT ?"
        params = (*params, max(0, limit))
    return _events(connection.execute(sql, params).fetchall())


def _tail(
    connection: sqlite3.Connection, run_id: str, position: int
) -> tuple[list[Event], RunStatus | None]:
    """The next page for a follower, and the run's status when there is nothing new.

    Each statement reads its own snapshot, so a status read *after* an empty page may already
    see a terminal event the page missed: then the page is read again, and that one is final.
    """
    events = _read(connection, run_id, position, FOLLOW_PAGE)
    if events:
        return events, None
    row = connection.execute(
        "SELECT status FROM agentdeck_runs WHERE run_id = ?", (run_id,)
    ).fetchone()
    status = RunStatus(row[0]) if row is not None else None
    if status is not None and status in TERMINAL:
        return _read(connection, run_id, position, FOLLOW_PAGE), status
    return [], status


def _run(connection: sqlite3.Connection, query: str, params: Sequence[Any]) -> RunRecord | None:
    row = connection.execute(query, params).fetchone()
    return RunRow.from_db(row, from_micros).record() if row is not None else None


def _list(connection: sqlite3.Connection, query: RunQuery, after: int | None) -> RunPage:
    sql, params = list_sql(query, after, mark="?", moment=to_micros)
    rows = [RunRow.from_db(row, from_micros) for row in connection.execute(sql, params)]
    more = len(rows) > query.limit
    rows = rows[: query.limit]
    cursor = encode_cursor(BACKEND, rows[-1].ordinal or 0) if more else None
    return RunPage(runs=[row.record() for row in rows], next_cursor=cursor)


def _prune(connection: sqlite3.Connection, query: PruneQuery) -> int:
    selected = prune_sql(query, mark="?", moment=to_micros)
    if selected is None:
        return 0
    sql, params = selected

    def work() -> int:
        run_ids = [run_id for (run_id,) in connection.execute(sql, params)]
        for batch in chunks(run_ids, 500):
            marks = ", ".join("?" * len(batch))
            for table in (
                "agentdeck_events",
                "agentdeck_engine_state",
                "agentdeck_control",
                "agentdeck_leases",
                "agentdeck_runs",
            ):
                connection.execute(f"DELETE FROM {table} WHERE run_id IN ({marks})", batch)
        return len(run_ids)

    return _transaction(connection, work)


# =========================================================================== the store


class _Backend:
    """The URL, the clock and the closed/open bookkeeping every SQLite port shares."""

    def __init__(self, url: str, clock: Clock | None) -> None:
        self.url = url
        self._target: SqliteTarget = parse_url(url)
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._opened = False
        self._closed = False

    @property
    def path(self) -> str:
        return self._target.path

    def _connect(self) -> sqlite3.Connection:
        return connect(self._target)

    def _translate(self, exc: BaseException) -> BaseException:
        return store_error(self.url, exc)

    def _now(self) -> datetime:
        return utc(self._clock.now())

    def _check_usable(self) -> None:
        if self._closed:
            raise StoreError("it is closed", backend=BACKEND, url=self.url)
        if not self._opened:
            raise StoreError("open() it before use", backend=BACKEND, url=self.url)


class SqliteEventStore(_Backend, EventStore):
    """An :class:`~agentdeck.ports.EventStore` in a SQLite file (see the module docstring)."""

    durable: ClassVar[bool] = True
    shared: ClassVar[bool] = True

    def __init__(self, url: str, *, clock: Clock | None = None) -> None:
        _Backend.__init__(self, url, clock)
        self._hub: FollowHub | None = None
        self._writer: ConnectionThread[Job] | None = None
        self._readers: list[ConnectionThread[Any]] = []
        self._parked: set[asyncio.Future[None]] = set()

    @classmethod
    def from_request(cls, request: BackendRequest) -> SqliteEventStore:
        """The factory the ``sqlite`` scheme registers."""
        return cls(request.url, clock=request.clock)

    async def open(self) -> None:
        if self._opened:
            return
        hub = acquire_hub(self.path, self._connect)
        writer: ConnectionThread[Job] = ConnectionThread(
            f"agentdeck-sqlite-writer:{self.path}",
            self._connect,
            self._translate,
            batch=partial(_commit_batch, hub),
        )
        readers: list[ConnectionThread[Any]] = []
        started: list[ConnectionThread[Any]] = []
        try:
            await writer.start()
            started.append(writer)
            await writer.call(partial(ensure_schema, url=self.url))
            for n in range(READERS):
                reader: ConnectionThread[Any] = ConnectionThread(
                    f"agentdeck-sqlite-reader-{n}:{self.path}",
                    self._connect,
                    self._translate,
                    work=readers[0].work if readers else None,
                )
                await reader.start()
                started.append(reader)
                readers.append(reader)
        except BaseException:
            for thread in started:
                thread.request_stop()
            release_hub(hub)
            raise
        self._hub, self._writer, self._readers = hub, writer, readers
        self._opened = True
        self._finalizer = weakref.finalize(self, _stop_threads, [writer, *readers])

    async def close(self) -> None:
        if self._closed or not self._opened:
            self._closed = True
            return
        self._closed = True
        parked, self._parked = self._parked, set()
        wake(parked)
        threads = [t for t in (self._writer, *self._readers) if t is not None]
        _stop_threads(threads)
        self._finalizer.detach()
        for thread in threads:
            await thread.stopped()
        if self._hub is not None:
            release_hub(self._hub)

    # -- helpers ------------------------------------------------------------------------------

    async def _read_call(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        self._check_usable()
        return await self._readers[0].call(fn)

    async def _write_call(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        self._check_usable()
        assert self._writer is not None
        return await self._writer.call(fn)

    async def _submit(self, job: Job) -> Any:
        self._check_usable()
        assert self._writer is not None
        return await self._writer.submit(job)

    # -- writes -------------------------------------------------------------------------------

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

    async def prune(self, query: PruneQuery) -> int:
        return await self._write_call(partial(_prune, query=query))

    async def put_state(self, run_id: str, name: str, value: bytes) -> None:
        data = bytes(value)

        def put(connection: sqlite3.Connection) -> None:
            _transaction(
                connection,
                lambda: connection.execute(
                    "INSERT INTO agentdeck_engine_state (run_id, name, value) VALUES (?, ?, ?) "
                    "ON CONFLICT (run_id, name) DO UPDATE SET value = excluded.value",
                    (run_id, name, data),
                ),
            )

        await self._write_call(put)

    async def delete_state(self, run_id: str, name: str) -> None:
        def delete(connection: sqlite3.Connection) -> None:
            _transaction(
                connection,
                lambda: connection.execute(
                    "DELETE FROM agentdeck_engine_state WHERE run_id = ? AND name = ?",
                    (run_id, name),
                ),
            )

        await self._write_call(delete)

    # -- reads --------------------------------------------------------------------------------

    async def read(
        self, run_id: str, *, from_seq: int = 0, limit: int | None = None
    ) -> list[Event]:
        return await self._read_call(partial(_read, run_id=run_id, from_seq=from_seq, limit=limit))

    async def follow(self, run_id: str, *, from_seq: int = 0) -> AsyncIterator[Event]:
        position = max(0, from_seq)
        while True:
            events = await self._next_events(run_id, position)
            if events is None:
                return
            for event in events:
                position = event.seq + 1
                yield event
                if event.kind in TERMINAL_KINDS:
                    return

    async def _next_events(self, run_id: str, position: int) -> list[Event] | None:
        """The next events at ``position`` once there are any; ``None`` when the run is over
        (or the store closed)."""
        while not self._closed:
            assert self._hub is not None
            future = self._hub.park(run_id, position)
            self._parked.add(future)
            try:
                events, status = await self._read_call(
                    partial(_tail, run_id=run_id, position=position)
                )
                if events:
                    return events
                if status is not None and status in TERMINAL:
                    return None  # finished, and from_seq is past its last event
                await future
            finally:
                self._hub.unpark(run_id, future)
                self._parked.discard(future)
        return None

    async def get_run(self, run_id: str) -> RunRecord | None:
        return await self._read_call(partial(_run, query=RUN_BY_ID, params=(run_id,)))

    async def find_key(self, namespace: str | None, key: str) -> RunRecord | None:
        return await self._read_call(
            partial(_run, query=KEY_HOLDER, params=(ns_key(namespace), key))
        )

    async def list_runs(self, query: RunQuery) -> RunPage:
        after = decode_cursor(BACKEND, query.cursor) if query.cursor is not None else None
        list_sql(query, after, mark="?", moment=to_micros)  # refuse a bad query before any I/O
        return await self._read_call(partial(_list, query=query, after=after))

    async def get_state(self, run_id: str, name: str) -> bytes | None:
        def get(connection: sqlite3.Connection) -> bytes | None:
            row = connection.execute(
                "SELECT value FROM agentdeck_engine_state WHERE run_id = ? AND name = ?",
                (run_id, name),
            ).fetchone()
            return bytes(row[0]) if row is not None else None

        return await self._read_call(get)


def _stop_threads(threads: Sequence[ConnectionThread[Any]]) -> None:
    for thread in threads:
        thread.request_stop()


# =========================================================================== control and leases


class _SingleConnection(_Backend):
    """A port that needs one connection: control requests and leases are small.

    Small but not rare: every run takes and releases a lease. Writes queued while the thread is
    busy are committed together (:func:`_write_together`), so many runs starting at once cost
    one commit, not one each.
    """

    def __init__(self, url: str, clock: Clock | None) -> None:
        super().__init__(url, clock)
        self._thread: ConnectionThread[Any] | None = None

    async def open(self) -> None:
        if self._opened:
            return
        thread: ConnectionThread[Any] = ConnectionThread(
            f"agentdeck-sqlite-{type(self).__name__}:{self.path}",
            self._connect,
            self._translate,
            batch=partial(_write_together, translate=self._translate),
        )
        await thread.start()
        try:
            await thread.call(partial(ensure_schema, url=self.url))
        except BaseException:
            thread.request_stop()
            raise
        self._thread = thread
        self._opened = True
        self._finalizer = weakref.finalize(self, thread.request_stop)

    async def close(self) -> None:
        if self._closed or not self._opened:
            self._closed = True
            return
        self._closed = True
        assert self._thread is not None
        self._finalizer.detach()
        self._thread.request_stop()
        await self._thread.stopped()

    async def _call(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        self._check_usable()
        assert self._thread is not None
        return await self._thread.call(fn)

    async def _write(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        self._check_usable()
        assert self._thread is not None
        result: _T = await self._thread.submit(fn)
        return result


def _write_together(
    connection: sqlite3.Connection,
    writes: Sequence[Callable[[sqlite3.Connection], Any]],
    *,
    translate: Callable[[BaseException], BaseException],
) -> list[tuple[Any, BaseException | None]]:
    """Run queued writes in one transaction, each under a savepoint of its own: one that fails
    is undone alone and gets its error (translated as a lone write's would be); the rest commit.
    """
    connection.execute("BEGIN IMMEDIATE")
    try:
        outcomes: list[tuple[Any, BaseException | None]] = []
        for write in writes:
            connection.execute("SAVEPOINT agentdeck_write")
            try:
                result = write(connection)
            except Exception as exc:
                connection.execute("ROLLBACK TO agentdeck_write")
                connection.execute("RELEASE agentdeck_write")
                outcomes.append((None, exc if isinstance(exc, AgentDeckError) else translate(exc)))
            else:
                connection.execute("RELEASE agentdeck_write")
                outcomes.append((result, None))
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    return outcomes


def _verb(verb: ControlVerb | str) -> ControlVerb:
    try:
        return ControlVerb(verb)
    except ValueError:
        raise InvalidInputError(
            f"{verb!r} is not a control verb; use one of {', '.join(v.value for v in ControlVerb)}",
            field="verb",
        ) from None


def _signal(row: Sequence[Any]) -> ControlSignal:
    return ControlSignal(
        run_id=row[0], verb=ControlVerb(row[1]), reason=row[2], requested_at=from_micros(row[3])
    )


class SqliteControlPort(_SingleConnection, ControlPort):
    """Pending control requests in the SQLite file, visible to every process that opens it."""

    shared: ClassVar[bool] = True

    def __init__(self, url: str, *, clock: Clock | None = None) -> None:
        super().__init__(url, clock)

    @classmethod
    def from_request(cls, request: BackendRequest) -> SqliteControlPort:
        """The factory the ``sqlite`` scheme registers."""
        return cls(request.url, clock=request.clock)

    async def request(self, run_id: str, verb: ControlVerb, reason: str | None = None) -> bool:
        wanted = _verb(verb)
        at = to_micros(self._now())

        def insert(connection: sqlite3.Connection) -> bool:
            cursor = connection.execute(
                "INSERT INTO agentdeck_control (run_id, verb, reason, requested_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (run_id, verb) DO NOTHING",
                (run_id, wanted.value, reason, at),
            )
            return cursor.rowcount == 1

        return await self._write(insert)

    async def pending(self, run_id: str) -> tuple[ControlSignal, ...]:
        def select(connection: sqlite3.Connection) -> tuple[ControlSignal, ...]:
            rows = connection.execute(
                "SELECT run_id, verb, reason, requested_at FROM agentdeck_control "
                "WHERE run_id = ? ORDER BY verb <> 'cancel', id",
                (run_id,),
            ).fetchall()
            return tuple(_signal(row) for row in rows)

        return await self._call(select)

    async def take(self, run_id: str, verb: ControlVerb) -> ControlSignal | None:
        wanted = _verb(verb)

        def delete(connection: sqlite3.Connection) -> ControlSignal | None:
            row = connection.execute(
                "DELETE FROM agentdeck_control WHERE run_id = ? AND verb = ? "
                "RETURNING run_id, verb, reason, requested_at",
                (run_id, wanted.value),
            ).fetchone()
            return _signal(row) if row is not None else None

        return await self._write(delete)

    async def forget(self, run_ids: Collection[str]) -> None:
        ids = list(run_ids)
        if not ids:
            return

        def delete(connection: sqlite3.Connection) -> None:
            for batch in chunks(ids, 500):
                marks = ", ".join("?" * len(batch))
                connection.execute(
                    f"DELETE FROM agentdeck_control WHERE run_id IN ({marks})", batch
                )

        await self._write(delete)


def _ttl(ttl: float) -> timedelta:
    if not ttl > 0:
        raise InvalidInputError(
            f"a lease TTL must be a positive number of seconds, not {ttl!r}", field="ttl"
        )
    return timedelta(seconds=ttl)


class SqliteLeasePort(_SingleConnection, LeasePort):
    """Liveness leases in the SQLite file, timed by the factory's clock (never SQL's)."""

    shared: ClassVar[bool] = True

    def __init__(self, url: str, *, clock: Clock | None = None) -> None:
        super().__init__(url, clock)

    @classmethod
    def from_request(cls, request: BackendRequest) -> SqliteLeasePort:
        """The factory the ``sqlite`` scheme registers."""
        return cls(request.url, clock=request.clock)

    async def acquire(self, run_id: str, owner: str, ttl: float) -> bool:
        span = _ttl(ttl)
        now = self._now()
        now_us, expires = to_micros(now), to_micros(now + span)

        def upsert(connection: sqlite3.Connection) -> bool:
            row = connection.execute(
                "INSERT INTO agentdeck_leases (run_id, owner, expires_at) VALUES (?, ?, ?) "
                "ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, "
                "expires_at = excluded.expires_at "
                "WHERE agentdeck_leases.owner = excluded.owner OR agentdeck_leases.expires_at <= ? "
                "RETURNING 1",
                (run_id, owner, expires, now_us),
            ).fetchone()
            return row is not None

        return await self._write(upsert)

    async def renew(self, run_id: str, owner: str, ttl: float) -> bool:
        span = _ttl(ttl)
        now = self._now()
        now_us, expires = to_micros(now), to_micros(now + span)

        def update(connection: sqlite3.Connection) -> bool:
            row = connection.execute(
                "UPDATE agentdeck_leases SET expires_at = ? "
                "WHERE run_id = ? AND owner = ? AND expires_at > ? RETURNING 1",
                (expires, run_id, owner, now_us),
            ).fetchone()
            return row is not None

        return await self._write(update)

    async def release(self, run_id: str, owner: str) -> None:
        def delete(connection: sqlite3.Connection) -> None:
            connection.execute(
                "DELETE FROM agentdeck_leases WHERE run_id = ? AND owner = ?", (run_id, owner)
            )

        await self._write(delete)

    async def state(self, run_id: str) -> LeaseState:
        now = to_micros(self._now())

        def select(connection: sqlite3.Connection) -> LeaseState:
            row = connection.execute(
                "SELECT expires_at FROM agentdeck_leases WHERE run_id = ?", (run_id,)
            ).fetchone()
            if row is None:
                return LeaseState.NONE
            return LeaseState.ALIVE if now < row[0] else LeaseState.LAPSED

        return await self._call(select)

    async def lapsed(self, limit: int = 100) -> list[str]:
        now = to_micros(self._now())

        def select(connection: sqlite3.Connection) -> list[str]:
            rows = connection.execute(
                "SELECT run_id FROM agentdeck_leases WHERE expires_at <= ? "
                "ORDER BY expires_at, run_id LIMIT ?",
                (now, max(0, limit)),
            )
            return [run_id for (run_id,) in rows]

        return await self._call(select)
