"""The ``sqlite://`` backends: an event store, control signals and leases in one SQLite file.

Durable and shared by every process that opens the same file (on one machine: SQLite's locks
need a local filesystem). The file runs in WAL mode, so readers never wait for the writer.

* **Writes** of every port on one file go through one writer per process (see
  :mod:`agentdeck.sqlite.writer`), which commits the writes queued while it was busy in
  one transaction (group commit). At ``synchronous=NORMAL`` with one event loop writing, it
  commits on that loop's thread (a commit without ``fsync`` is cheaper than a thread hop);
  otherwise on a writer thread. An open or append returns only after its transaction
  committed, at ``synchronous=NORMAL`` by default (safe from a crash of the process;
  ``?synchronous=full`` for safe from a power cut). Liveness writes (leases, dropping a
  finished run's control requests) commit at ``NORMAL`` whatever the URL says.
* **Reads** run on a small pool of reader threads, never on the event loop.
* **Follow** is woken at once by appends from this process, and by a watcher polling with
  backoff for appends from other processes (see :mod:`agentdeck.sqlite.follow`).

``sqlite:///rel/path.db`` and ``sqlite://rel/path.db`` are relative to the working directory
(resolved when the backend is built), ``sqlite:////abs/path.db`` absolute; the directory is
created if missing.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import weakref
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from datetime import datetime
from functools import partial
from typing import Any, ClassVar, TypeVar

from agentdeck.errors import ConfigError, StoreError
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
from agentdeck.sqlite.events import DELETE_LOG, MAX_SEQ, READ_LOG, stored
from agentdeck.sqlite.follow import wake
from agentdeck.sqlite.schema import (
    BACKEND,
    SqliteTarget,
    check_readable,
    connect,
    ensure_schema,
    parse_url,
    store_error,
)
from agentdeck.sqlite.threads import ConnectionThread
from agentdeck.sqlite.writer import (
    KEY_HOLDER,
    LIVENESS,
    RUN_BY_ID,
    SharedWriter,
    Write,
    acquire_writer,
    level,
    release_writer,
)
from agentdeck.storage import checked_ttl, checked_verb, decode_cursor, follow_pages, run_page
from agentdeck.storage.sql import (
    AppendJob,
    OpenJob,
    RunRow,
    SqlWrites,
    chunks,
    from_micros,
    list_sql,
    ns_key,
    prune_sql,
    row_ordinal,
    to_micros,
)
from agentdeck.vocabulary import TERMINAL, ControlVerb, RunStatus

__all__ = ["SqliteControlPort", "SqliteEventStore", "SqliteLeasePort"]

_T = TypeVar("_T")

READERS = 2
"""Reader threads per store: reads run beside each other and beside the writer (WAL)."""
FOLLOW_PAGE = 500


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


def _read(
    connection: sqlite3.Connection, run_id: str, from_seq: int, limit: int | None
) -> list[Event]:
    from_seq = max(0, from_seq)
    if from_seq > MAX_SEQ:
        return []
    if limit is None:
        cursor = connection.execute(READ_LOG, (run_id, from_seq))
    else:
        cursor = connection.execute(READ_LOG + " LIMIT ?", (run_id, from_seq, max(0, limit)))
    return stored(run_id, cursor.fetchall())


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
    rows = (RunRow.from_db(row, from_micros) for row in connection.execute(sql, params))
    return run_page(rows, query.limit, scheme=BACKEND, ordinal=row_ordinal, record=RunRow.record)


def _prune(connection: sqlite3.Connection, query: PruneQuery) -> int:
    selected = prune_sql(query, mark="?", moment=to_micros)
    if selected is None:
        return 0
    sql, params = selected

    def work() -> int:
        run_ids = [run_id for (run_id,) in connection.execute(sql, params)]
        # Each run's events are one range of keys, found by its ordinal: before its row goes.
        connection.executemany(DELETE_LOG, [(run_id,) for run_id in run_ids])
        for batch in chunks(run_ids, 500):
            marks = ", ".join("?" * len(batch))
            for table in (
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
    """What every SQLite port shares: the URL, the clock, open/closed bookkeeping, the file's
    :class:`SharedWriter` and this port's own reader threads."""

    def __init__(self, url: str, clock: Clock | None, read_only: bool = False) -> None:
        self.url = url
        self._target: SqliteTarget = parse_url(url)
        self.read_only = read_only
        """Opened only to read (``BackendRequest.read_only``): the file must exist, nothing is
        created, and every write is refused."""
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._level = level(self._target.synchronous)
        """The ``synchronous`` level of this port's durable writes."""
        self._writer: SharedWriter | None = None
        self._readers: list[ConnectionThread[Any]] = []
        self._opened = False
        self._closed = False

    @property
    def path(self) -> str:
        return self._target.path

    def _connect(self) -> sqlite3.Connection:
        return connect(self._target, read_only=self.read_only)

    def _translate(self, exc: BaseException) -> BaseException:
        return store_error(self.url, exc)

    def _now(self) -> datetime:
        return utc(self._clock.now())

    def _check_usable(self) -> None:
        if self._closed:
            raise StoreError("it is closed", backend=BACKEND, url=self.url)
        if not self._opened:
            raise StoreError("open() it before use", backend=BACKEND, url=self.url)

    def _check_writable(self) -> None:
        self._check_usable()
        if self.read_only:
            raise StoreError(
                "it was opened read-only (for a command that only reads); open a deck on "
                "it to record anything",
                backend=BACKEND,
                url=self.url,
            )

    async def _start(self, readers: int, role: str) -> None:
        """Join the file's writer (creating or migrating the schema; only checking it when
        read-only) and start the readers."""
        if self.read_only and not os.path.isfile(self.path):
            raise ConfigError(
                f"{self.path} does not exist, so there is nothing to read there (the URL is "
                f"{self.url}); a read-only open never creates it. Check the path, or the "
                "working directory it is relative to"
            )
        writer = await acquire_writer(
            self.path, self._connect, self._translate, self._level, read_only=self.read_only
        )
        threads: list[ConnectionThread[Any]] = []
        try:
            prepare = check_readable if self.read_only else ensure_schema
            await writer.call(
                partial(prepare, url=self.url, path=self.path), self._level, self._translate
            )
            for n in range(readers):
                reader: ConnectionThread[Any] = ConnectionThread(
                    f"agentdeck-sqlite-{role}-{n}:{self.path}",
                    self._connect,
                    self._translate,
                    work=threads[0].work if threads else None,
                )
                threads.append(reader)
                await reader.start()
        except BaseException:
            _abandon(threads, writer)
            raise
        self._writer, self._readers = writer, threads
        self._opened = True
        self._finalizer = weakref.finalize(self, _abandon, threads, writer)

    async def _stop(self) -> None:
        """Stop the readers and give the writer back, waiting for the threads to finish."""
        assert self._writer is not None
        self._finalizer.detach()
        last = _abandon(self._readers, self._writer)
        for thread in self._readers:
            await thread.stopped()
        if last:
            await self._writer.stopped()

    async def _read_call(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        self._check_usable()
        return await self._readers[0].call(fn)

    async def _write(
        self,
        fn: Callable[[sqlite3.Connection], _T],
        *,
        liveness: bool = False,
        linger: bool = False,
    ) -> _T:
        """Commit ``fn`` with the writes queued beside it (at this port's level, or without
        an fsync of its own for a ``liveness`` write, which may ``linger`` for company when
        nobody waits on it); its result once committed."""
        self._check_writable()
        assert self._writer is not None
        result: _T = await self._writer.submit(
            Write(LIVENESS if liveness else self._level, fn, liveness, linger), self._translate
        )
        return result


def _abandon(readers: Sequence[ConnectionThread[Any]], writer: SharedWriter) -> bool:
    for thread in readers:
        thread.request_stop()
    return release_writer(writer)


class SqliteEventStore(_Backend, SqlWrites, EventStore):
    """An :class:`~agentdeck.ports.EventStore` in a SQLite file (see the module docstring)."""

    durable: ClassVar[bool] = True
    shared: ClassVar[bool] = True

    def __init__(self, url: str, *, clock: Clock | None = None, read_only: bool = False) -> None:
        _Backend.__init__(self, url, clock, read_only)
        self._parked: set[asyncio.Future[None]] = set()

    @classmethod
    def from_request(cls, request: BackendRequest) -> SqliteEventStore:
        """The factory the ``sqlite`` scheme registers."""
        return cls(request.url, clock=request.clock, read_only=request.read_only)

    async def open(self) -> None:
        if self._opened:
            return
        await self._start(READERS, "reader")

    async def close(self) -> None:
        if self._closed or not self._opened:
            self._closed = True
            return
        self._closed = True
        parked, self._parked = self._parked, set()
        wake(parked)
        await self._stop()

    async def _submit(self, job: OpenJob | AppendJob) -> Any:
        self._check_writable()
        assert self._writer is not None
        return await self._writer.submit(Write(self._level, job), self._translate)

    # -- writes: open_run and append are SqlWrites' --------------------------------------

    async def prune(self, query: PruneQuery) -> int:
        self._check_writable()
        assert self._writer is not None
        # Alone, not batched: a large prune holds the write lock for its own transaction.
        return await self._writer.call(partial(_prune, query=query), self._level, self._translate)

    async def put_state(self, run_id: str, name: str, value: bytes) -> None:
        data = bytes(value)

        def put(connection: sqlite3.Connection) -> None:
            connection.execute(
                "INSERT INTO agentdeck_engine_state (run_id, name, value) VALUES (?, ?, ?) "
                "ON CONFLICT (run_id, name) DO UPDATE SET value = excluded.value",
                (run_id, name, data),
            )

        await self._state_write(put)

    async def delete_state(self, run_id: str, name: str) -> None:
        self._check_writable()
        assert self._writer is not None
        if self._writer.state_absent(run_id, name):
            return  # nothing there, nothing on its way: no transaction (see state_absent)

        def delete(connection: sqlite3.Connection) -> None:
            connection.execute(
                "DELETE FROM agentdeck_engine_state WHERE run_id = ? AND name = ?",
                (run_id, name),
            )

        await self._state_write(delete)

    async def _state_write(self, fn: Callable[[sqlite3.Connection], None]) -> None:
        """An engine-state write, counted while unanswered (see ``SharedWriter.state_absent``)."""
        self._check_writable()
        writer = self._writer
        assert writer is not None
        writer.state_writes += 1
        try:
            await self._write(fn)
        finally:
            writer.state_writes -= 1

    # -- reads --------------------------------------------------------------------------------

    async def read(
        self, run_id: str, *, from_seq: int = 0, limit: int | None = None
    ) -> list[Event]:
        return await self._read_call(partial(_read, run_id=run_id, from_seq=from_seq, limit=limit))

    def follow(self, run_id: str, *, from_seq: int = 0) -> AsyncIterator[Event]:
        return follow_pages(partial(self._next_events, run_id), from_seq)

    async def _next_events(self, run_id: str, position: int) -> list[Event] | None:
        """The next events at ``position`` once there are any; ``None`` when the run is over
        (or the store closed)."""
        while not self._closed:
            assert self._writer is not None
            hub = self._writer.hub
            future = hub.park(run_id, position)
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
                hub.unpark(run_id, future)
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


# =========================================================================== control and leases


class _SmallPort(_Backend):
    """Control requests or leases: one reader thread of its own, and the file's writer.

    Small but not rare: every run takes and releases a lease. The writer commits the writes
    queued while it was busy together, with the store's opens and appends, so many runs
    starting at once cost one commit, not one each.
    """

    async def open(self) -> None:
        if self._opened:
            return
        await self._start(1, type(self).__name__)

    async def close(self) -> None:
        if self._closed or not self._opened:
            self._closed = True
            return
        self._closed = True
        await self._stop()

    async def _forget_rows(self, table: str, run_ids: Collection[str]) -> None:
        """Delete ``table``'s rows of ``run_ids``, a batch of ids per statement, as one
        liveness write: what a run leaves behind once nothing reads it again."""
        ids = list(run_ids)
        if not ids:
            return

        def delete(connection: sqlite3.Connection) -> None:
            for batch in chunks(ids, 500):
                marks = ", ".join("?" * len(batch))
                connection.execute(f"DELETE FROM {table} WHERE run_id IN ({marks})", batch)

        await self._write(delete, liveness=True)


def _signal(row: Sequence[Any]) -> ControlSignal:
    return ControlSignal(
        run_id=row[0], verb=ControlVerb(row[1]), reason=row[2], requested_at=from_micros(row[3])
    )


class SqliteControlPort(_SmallPort, ControlPort):
    """Pending control requests in the SQLite file, visible to every process that opens it."""

    shared: ClassVar[bool] = True

    def __init__(self, url: str, *, clock: Clock | None = None, read_only: bool = False) -> None:
        super().__init__(url, clock, read_only)

    @classmethod
    def from_request(cls, request: BackendRequest) -> SqliteControlPort:
        """The factory the ``sqlite`` scheme registers."""
        return cls(request.url, clock=request.clock, read_only=request.read_only)

    async def request(self, run_id: str, verb: ControlVerb, reason: str | None = None) -> bool:
        wanted = checked_verb(verb)
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

        return await self._read_call(select)

    async def take(self, run_id: str, verb: ControlVerb) -> ControlSignal | None:
        wanted = checked_verb(verb)

        def delete(connection: sqlite3.Connection) -> ControlSignal | None:
            row = connection.execute(
                "DELETE FROM agentdeck_control WHERE run_id = ? AND verb = ? "
                "RETURNING run_id, verb, reason, requested_at",
                (run_id, wanted.value),
            ).fetchone()
            return _signal(row) if row is not None else None

        return await self._write(delete)

    async def forget(self, run_ids: Collection[str]) -> None:
        # A liveness write (no fsync of its own): requests left on a finished run are no-ops.
        await self._forget_rows("agentdeck_control", run_ids)


class SqliteLeasePort(_SmallPort, LeasePort):
    """Liveness leases in the SQLite file, timed by the factory's clock (never SQL's).

    Lease writes commit at ``synchronous=NORMAL`` whatever the URL says: a lease is not data
    (one lost to a power cut lapses, or lingers until it does), so it costs no ``fsync``.
    """

    shared: ClassVar[bool] = True

    def __init__(self, url: str, *, clock: Clock | None = None, read_only: bool = False) -> None:
        super().__init__(url, clock, read_only)

    @classmethod
    def from_request(cls, request: BackendRequest) -> SqliteLeasePort:
        """The factory the ``sqlite`` scheme registers."""
        return cls(request.url, clock=request.clock, read_only=request.read_only)

    async def acquire(self, run_id: str, owner: str, ttl: float) -> bool:
        span = checked_ttl(ttl)
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

        return await self._write(upsert, liveness=True, linger=True)

    async def renew(self, run_id: str, owner: str, ttl: float) -> bool:
        span = checked_ttl(ttl)
        now = self._now()
        now_us, expires = to_micros(now), to_micros(now + span)

        def update(connection: sqlite3.Connection) -> bool:
            row = connection.execute(
                "UPDATE agentdeck_leases SET expires_at = ? "
                "WHERE run_id = ? AND owner = ? AND expires_at > ? RETURNING 1",
                (expires, run_id, owner, now_us),
            ).fetchone()
            return row is not None

        return await self._write(update, liveness=True, linger=True)

    async def release(self, run_id: str, owner: str) -> None:
        def delete(connection: sqlite3.Connection) -> None:
            connection.execute(
                "DELETE FROM agentdeck_leases WHERE run_id = ? AND owner = ?", (run_id, owner)
            )

        await self._write(delete, liveness=True)

    async def state(self, run_id: str) -> LeaseState:
        now = to_micros(self._now())

        def select(connection: sqlite3.Connection) -> LeaseState:
            row = connection.execute(
                "SELECT expires_at FROM agentdeck_leases WHERE run_id = ?", (run_id,)
            ).fetchone()
            if row is None:
                return LeaseState.NONE
            return LeaseState.ALIVE if now < row[0] else LeaseState.LAPSED

        return await self._read_call(select)

    async def lapsed(self, limit: int = 100) -> list[str]:
        now = to_micros(self._now())

        def select(connection: sqlite3.Connection) -> list[str]:
            rows = connection.execute(
                "SELECT run_id FROM agentdeck_leases WHERE expires_at <= ? "
                "ORDER BY expires_at, run_id LIMIT ?",
                (now, max(0, limit)),
            )
            return [run_id for (run_id,) in rows]

        return await self._read_call(select)

    async def forget(self, run_ids: Collection[str]) -> None:
        await self._forget_rows("agentdeck_leases", run_ids)
