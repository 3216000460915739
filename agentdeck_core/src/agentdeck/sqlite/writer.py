"""The one writer of a SQLite file in this process, shared by its event store, control and leases.

SQLite lets one connection write at a time. A deck's three ports writing through three
connections of their own would take turns on the file's write lock, and a connection that finds
it taken sleeps in SQLite's busy handler -- 1 ms, then 2, then 5 -- far longer than the write it
waits for. So every port on a file writes through one :class:`SharedWriter` per process: one
thread, one connection, and the writes queued while it was busy (opens and appends of every
run, lease and control writes, engine state) committed together in one transaction.

**Durability is per write.** Each :class:`Write` carries the ``synchronous`` level it needs and a
batch commits at the highest level among its writes:

* opens, appends, control requests and engine state at the level the URL configures
  (``NORMAL`` by default; with ``FULL`` the commit reaches the disk before the caller hears
  back);
* liveness writes -- leases taken, renewed and released, a finished run's control requests
  dropped -- at ``NORMAL``: no ``fsync`` of their own. Losing one to a power cut is harmless (a
  lease taken is renewed or lapses; one released, or requests dropped, merely linger until they
  expire or are pruned), and in WAL mode the next ``FULL`` commit on the file syncs the WAL up to
  itself, taking every earlier ``NORMAL`` commit along.

A batch of lease takings and renewals alone waits a moment (:data:`LIVENESS_LINGER`) for a
write that commits anyway: the runtime takes a run's lease beside its play, so the lease then
shares the run's next append's transaction rather than costing one (and one wake-up of the
caller) apiece. (A release is awaited by its run: it does not wait for company.)

**Inline at NORMAL.** A commit at ``synchronous=NORMAL`` costs SQLite some 15 µs (no ``fsync``),
while handing it to the thread and back costs far more: two thread wake-ups and, above all,
the GIL -- while the event loop runs Python the writer thread waits up to a switch interval
(5 ms) for it, so a write issued mid-turn completes only when the loop idles. So while every
port on the file writes at ``NORMAL`` and one event loop writes to it, the batches run on that
loop's own thread (:class:`_InlineWriter`): a write is queued and a batch scheduled with
``loop.call_soon``, so the writes issued in one loop iteration still commit together, through
the same code the thread runs. The thread stays for everything else:

* ``FULL``/``EXTRA`` writes (an ``fsync`` must not block the loop): a port at such a level
  joining the file sends every write through the thread from then on;
* a second live event loop writing to the file: from then on every write goes through the
  thread (the inline connection is retired on its loop, after its queued writes);
* a batch finding the file's write lock taken (another process, or the thread's own schema
  or prune transaction): the inline connection never waits (busy timeout 0) -- the batch,
  rolled back whole, is handed to the thread, which waits off the loop;
* WAL checkpoints: the inline connection never checkpoints on commit; after every
  :data:`~agentdeck.sqlite.schema.WAL_AUTOCHECKPOINT` rows it changed, the thread runs
  a ``PASSIVE`` checkpoint (which waits for nobody).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from agentdeck.errors import AgentDeckError
from agentdeck.sqlite.events import INSERT_EVENT, MAX_SEQ, encode, event_id
from agentdeck.sqlite.follow import FollowHub, acquire_hub, release_hub
from agentdeck.sqlite.schema import BACKEND, WAL_AUTOCHECKPOINT
from agentdeck.sqlite.threads import (
    MAX_BATCH,
    ConnectionThread,
    Queued,
    Translate,
    answers,
    settle,
)
from agentdeck.storage.sql import (
    RUN_COLUMNS,
    AppendJob,
    BatchPlan,
    OpenJob,
    RunRow,
    chunks,
    from_micros,
    to_micros,
)

__all__ = [
    "KEY_HOLDER",
    "LIVENESS",
    "LIVENESS_LINGER",
    "RUN_BY_ID",
    "SESSION_HOLDER",
    "PortWrite",
    "SharedWriter",
    "Write",
    "acquire_writer",
    "level",
    "release_writer",
]

_T = TypeVar("_T")

_LEVELS = {"NORMAL": 1, "FULL": 2, "EXTRA": 3}
_NAMES = {number: name for name, number in _LEVELS.items()}
LIVENESS = _LEVELS["NORMAL"]
"""The level of liveness writes, whatever the URL says (see the module docstring)."""


LIVENESS_LINGER = 0.025
"""Seconds a batch of liveness writes alone waits for company (see :func:`_linger`).

Long enough for a run's first append to come along: its engine's first payload follows the
lease by 1-2 ms with a model in process, and by several on a local HTTP model (a lease alone
costs a transaction and a wake-up of its own, as much as an append). Nobody waits on it meanwhile:
the runtime takes a run's lease beside its play, and a run's ending (awaited) takes it along."""


_EVENT_JOBS = frozenset({OpenJob, AppendJob})
"""The jobs a :class:`BatchPlan` decides (their classes are final: tested with ``type() in``)."""


def level(synchronous: str) -> int:
    """The ordered level of a ``PRAGMA synchronous`` name (``NORMAL`` < ``FULL`` < ``EXTRA``)."""
    return _LEVELS[synchronous]


PortWrite = Callable[[sqlite3.Connection], Any]
"""A control, lease or engine-state write: statements run inside the batch's transaction."""


@dataclass(slots=True)
class Write:
    """One queued write and the ``synchronous`` level its commit needs."""

    level: int
    job: OpenJob | AppendJob | PortWrite
    liveness: bool = False
    """A lease or control tidy-up: committed at :data:`LIVENESS`."""
    linger: bool = False
    """Nobody waits on it to go on (a lease taken beside a play): it may wait for company."""


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
    rather than one per run: a batch of a hundred appends is then one read, not a hundred. A
    batch naming one run (every write of a sequential caller) reads it with the one prepared
    statement :data:`RUN_BY_ID`, without building a query.
    """

    def __init__(self, connection: sqlite3.Connection, jobs: Sequence[OpenJob | AppendJob]) -> None:
        self._connection = connection
        named = list(
            dict.fromkeys(
                job.new.run_id if type(job) is OpenJob else job.run_id  # type: ignore[union-attr]
                for job in jobs
            )
        )
        self._runs: dict[str, RunRow | None] = dict.fromkeys(named)
        if len(named) == 1:
            row = connection.execute(RUN_BY_ID, named).fetchone()
            if row is not None:
                self._runs[named[0]] = RunRow.from_db(row, from_micros)
            return
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


_UPDATE_RUN = (
    "UPDATE agentdeck_runs SET status = ?, last_seq = ?, updated_at = ?, wake_at = ?, "
    "holds_session = ? WHERE run_id = ?"
)
_UPDATE_PROGRESS = "UPDATE agentdeck_runs SET last_seq = ?, updated_at = ? WHERE run_id = ?"
"""A run whose indexed columns did not move (a burst of a running run): only its row is
rewritten, none of its index entries (see :attr:`BatchPlan.reindexed`)."""
_INSERT_RUN = (
    "INSERT INTO agentdeck_runs (run_id, ns, name, invocable_kind, session_id, run_key, "
    "parent_run_id, status, created_at, updated_at, last_seq, wake_at, holds_session) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_STATE_HELD = "SELECT 1 FROM agentdeck_engine_state WHERE run_id = ? AND name = ?"


def _write_rows(connection: sqlite3.Connection, sql: str, rows: list[tuple[Any, ...]]) -> None:
    """One ``execute`` for one row (most batches), ``executemany`` for more."""
    if len(rows) == 1:
        connection.execute(sql, rows[0])
    elif rows:
        connection.executemany(sql, rows)


def _write_plan(connection: sqlite3.Connection, plan: BatchPlan) -> None:
    ordinals: dict[str, int] = {}
    if plan.updated:
        full: list[tuple[Any, ...]] = []
        light: list[tuple[Any, ...]] = []
        for row in plan.updated.values():
            assert row.ordinal is not None  # read from the table
            ordinals[row.run_id] = row.ordinal
            if row.run_id in plan.reindexed:
                full.append(
                    (
                        row.status.value,
                        row.last_seq,
                        to_micros(row.updated_at),
                        to_micros(row.wake_at) if row.wake_at is not None else None,
                        int(row.holds_session),
                        row.run_id,
                    )
                )
            else:
                light.append((row.last_seq, to_micros(row.updated_at), row.run_id))
        _write_rows(connection, _UPDATE_RUN, full)
        _write_rows(connection, _UPDATE_PROGRESS, light)
    for row in plan.inserted:
        # One statement per run (an open rarely shares a batch): its ordinal keys its events.
        cursor = connection.execute(
            _INSERT_RUN,
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
            ),
        )
        assert cursor.lastrowid is not None
        row.ordinal = ordinals[row.run_id] = cursor.lastrowid
    if plan.events:
        _write_rows(
            connection,
            INSERT_EVENT,
            [
                (event_id(ordinals[event.run_id], event.seq), to_micros(event.ts), event.data)
                for event in plan.events
            ],
        )


# =========================================================================== the writer


class SharedWriter:
    """The writer thread of one database file in this process (see the module docstring).

    Obtained with :func:`acquire_writer` and given back with :func:`release_writer`; the thread
    stops when the last port gives it back. Also holds the file's :class:`FollowHub`, whose
    followers it wakes after each commit that grew their runs' logs.
    """

    def __init__(
        self,
        path: str,
        connect: Callable[[], sqlite3.Connection],
        translate: Translate,
        *,
        hub_path: str | None = None,
    ) -> None:
        self.path = path
        # A read-only writer (see acquire_writer) shares the file's follow hub.
        self.hub: FollowHub = acquire_hub(hub_path or path, connect)
        self.thread: ConnectionThread[Write] = ConnectionThread(
            f"agentdeck-sqlite-writer:{path}",
            connect,
            translate,
            batch=self._commit,
            linger=_linger,
        )
        self._connect = connect
        self._refs = 0
        self._level: int | None = None
        """The connection's ``synchronous`` level now (only the writer thread touches it)."""
        self._inline: _InlineWriter | None = None
        """The loop-thread writer while there is one (see the module docstring)."""
        self._inline_allowed = True
        """False for good once a port above ``NORMAL`` or a second live loop used the file."""
        self._mode = threading.Lock()
        self.state_writes = 0
        """Engine-state writes submitted in this process and not yet answered (see
        :meth:`state_absent`); counted by the stores on this file, on their loops. (Should two
        loops ever race on the count, the inline writer is gone for good by then, and with it
        every use of the count.)"""

    def submit(self, write: Write, translate: Translate) -> asyncio.Future[Any]:
        """Queue ``write``: the future of its outcome, set once the batch that took it
        committed (a plain call returning the future: no coroutine frame per write)."""
        inline = self._inline
        if (
            inline is not None
            and write.level == LIVENESS
            and inline.loop is asyncio.get_running_loop()
        ):
            return inline.enqueue(write, translate)
        if write.level == LIVENESS and self._inline_allowed:
            inline = self._adopt(asyncio.get_running_loop())
            if inline is not None:
                return inline.enqueue(write, translate)
        return self.thread.enqueue(write, translate)

    def _admit(self, port_level: int) -> None:
        """A port joins: one writing above ``NORMAL`` sends every write through the thread."""
        if port_level > LIVENESS:
            self._forbid_inline()

    def _forbid_inline(self) -> None:
        with self._mode:
            self._inline_allowed = False
            retired, self._inline = self._inline, None
        if retired is not None:
            retired.retire()

    def _adopt(self, loop: asyncio.AbstractEventLoop) -> _InlineWriter | None:
        """The inline writer for ``loop``: the current one, or a new one if there is none (or
        its loop is closed); ``None`` -- for good -- if another live loop has it."""
        with self._mode:
            current = self._inline
            if current is not None and current.loop is loop:
                return current
            if current is not None:
                self._inline = None
                if not current.loop.is_closed():
                    self._inline_allowed = False  # two loops write to the file: the thread
                current.retire()
            if not self._inline_allowed:
                return None
            try:
                connection = self._connect()
                connection.execute("PRAGMA synchronous=NORMAL")
                connection.execute("PRAGMA busy_timeout=0")  # never wait on the loop
                connection.execute("PRAGMA wal_autocheckpoint=0")  # the thread checkpoints
            except Exception:
                self._inline_allowed = False  # the thread reports the file's problem
                return None
            self._inline = _InlineWriter(self, loop, connection)
            return self._inline

    def state_absent(self, run_id: str, name: str) -> bool:
        """Whether ``(run_id, name)`` holds no engine state, nor has any on its way from this
        process: then deleting it would change nothing, and needs no transaction.

        Engines delete their state at the end of every run, most of them having written none:
        a transaction that finds nothing to delete still takes the write lock, commits and
        costs its caller a wake-up. The answer is read on the inline connection (one primary
        key lookup, which in WAL mode waits for no lock), so only while this loop writes
        inline; a state write still unanswered means no (its commit may be yet to come), and
        so does any error (the delete then runs as a write and reports it).
        """
        inline = self._inline
        if (
            self.state_writes
            or inline is None
            or inline.retired
            or inline.loop is not asyncio.get_running_loop()
        ):
            return False
        try:
            found = inline.connection.execute(_STATE_HELD, (run_id, name)).fetchall()
        except sqlite3.Error:
            return False
        return not found

    async def call(
        self, fn: Callable[[sqlite3.Connection], _T], level: int, translate: Translate
    ) -> _T:
        """Run ``fn`` alone on the writer's connection (its own transactions, at ``level``)."""

        def at_level(connection: sqlite3.Connection) -> _T:
            self._use(connection, level)
            return fn(connection)

        return await self.thread.call(at_level, translate)

    async def stopped(self) -> None:
        await self.thread.stopped()

    # -- the thread's side --------------------------------------------------------------------

    def _use(self, connection: sqlite3.Connection, wanted: int) -> None:
        if wanted != self._level:
            connection.execute(f"PRAGMA synchronous={_NAMES[wanted]}")
            self._level = wanted

    def _commit(
        self, connection: sqlite3.Connection, writes: Sequence[Write], *, inline: bool = False
    ) -> list[tuple[Any, BaseException | None]]:
        """Decide and write a batch in one transaction at its highest level, then wake
        followers.

        Opens and appends are decided by one :class:`BatchPlan` (a refused one changes nothing
        and gets its refusal). Other writes are all or nothing each: should one fail, the batch
        is rolled back and written again with every such write under a savepoint of its own,
        so the failed one is undone alone and gets its error while the rest commit. (Failures
        are rare; the savepoints' statements are paid only then.)
        """
        if not inline:  # the inline connection is always at NORMAL
            self._use(connection, max([write.level for write in writes]))
        try:
            return self._transact(connection, writes, guarded=False)
        except _PortWriteFailed as failed:
            if len(writes) == 1:
                raise failed.error from None
            return self._transact(connection, writes, guarded=True)

    def _transact(
        self, connection: sqlite3.Connection, writes: Sequence[Write], *, guarded: bool
    ) -> list[tuple[Any, BaseException | None]]:
        events = [write.job for write in writes if type(write.job) in _EVENT_JOBS]
        execute = connection.execute
        execute("BEGIN IMMEDIATE")
        try:
            plan = (
                BatchPlan(
                    _Rows(connection, events),  # type: ignore[arg-type]
                    max_seq=MAX_SEQ,
                    backend=BACKEND,
                    encode=encode,
                )
                if events
                else None
            )
            outcomes: list[tuple[Any, BaseException | None]] = []
            for write in writes:
                job = write.job
                kind = type(job)
                if kind is OpenJob or kind is AppendJob:
                    assert plan is not None
                    try:
                        result: Any = (
                            plan.open(job)  # type: ignore[arg-type]
                            if kind is OpenJob
                            else plan.append(job)  # type: ignore[arg-type]
                        )
                    except AgentDeckError as refused:
                        outcomes.append((None, refused))
                    else:
                        outcomes.append((result, None))
                elif guarded:
                    outcomes.append(_savepoint(connection, job))  # type: ignore[arg-type]
                else:
                    try:
                        outcomes.append((job(connection), None))  # type: ignore[operator]
                    except Exception as exc:
                        raise _PortWriteFailed(exc) from exc
            if plan is not None:
                _write_plan(connection, plan)
            execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                execute("ROLLBACK")
            raise
        if plan is not None and plan.changed:
            self.hub.notify(plan.changed)
        return outcomes


def _busy(error: BaseException) -> bool:
    """Whether ``error`` is SQLite finding the write lock taken (nothing was written)."""
    return (
        isinstance(error, sqlite3.OperationalError)
        and getattr(error, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_BUSY
    )


def _checkpoint(connection: sqlite3.Connection) -> None:
    connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()


class _InlineWriter:
    """Commits the file's ``NORMAL`` write batches on one event loop's thread.

    Its connection is used only from that thread. Writes queued in one loop iteration go in one
    batch (``call_soon``); a lease taken alone waits :data:`LIVENESS_LINGER` for company
    (``call_later``), like on the thread. Each batch runs :meth:`SharedWriter._commit` -- the
    thread's own code -- and its callers' futures are settled directly.
    """

    def __init__(
        self, owner: SharedWriter, loop: asyncio.AbstractEventLoop, connection: sqlite3.Connection
    ) -> None:
        self.owner = owner
        self.loop = loop
        self.connection = connection
        self._pending: list[Queued[Write]] = []
        self._handle: asyncio.Handle | None = None
        self._lingering = False
        self.retired = False
        self._checkpointed = connection.total_changes

    def enqueue(self, write: Write, translate: Translate) -> asyncio.Future[Any]:
        if self.retired:  # only a write racing the retirement: the thread takes it
            return self.owner.thread.enqueue(write, translate)
        future: asyncio.Future[Any] = self.loop.create_future()
        self._pending.append(Queued(write, future, translate))
        if self._handle is None:
            if write.linger:
                self._handle = self.loop.call_later(LIVENESS_LINGER, self.run)
                self._lingering = True
            else:
                self._handle = self.loop.call_soon(self.run)
        elif self._lingering and not write.linger:
            self._handle.cancel()
            self._handle = self.loop.call_soon(self.run)
            self._lingering = False
        return future

    def run(self) -> None:
        """Commit everything queued, :data:`MAX_BATCH` writes per transaction."""
        if self._handle is not None:
            self._handle.cancel()  # when run early (retirement); harmless when it is this call
            self._handle = None
        self._lingering = False
        while self._pending:
            batch = self._pending[:MAX_BATCH]
            del self._pending[:MAX_BATCH]
            self._run_batch(batch)

    def _run_batch(self, batch: list[Queued[Write]]) -> None:
        try:
            results = self.owner._commit(
                self.connection, [queued.job for queued in batch], inline=True
            )
        except BaseException as exc:
            if _busy(exc):  # the lock is taken (rolled back whole): wait for it off the loop
                self.owner.thread.hand(batch)
                return
            settle(answers(batch, None, exc))
            return
        settle(answers(batch, results, None))
        if self.connection.total_changes - self._checkpointed >= WAL_AUTOCHECKPOINT:
            # Rows changed stand in for WAL pages written: cheap, and close enough.
            self._checkpointed = self.connection.total_changes
            self.owner.thread.post(_checkpoint)

    def retire(self) -> None:
        """From any thread: no more writes; those queued commit on the loop, then the
        connection closes (at once if the loop is closed: nobody awaits its writes)."""
        self.retired = True
        if self.loop.is_closed():
            self.connection.close()
            return
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self._finish()
            return
        try:
            self.loop.call_soon_threadsafe(self._finish)
        except RuntimeError:  # closed in the meantime
            self.connection.close()

    def _finish(self) -> None:
        self.run()
        self.connection.close()


class _PortWriteFailed(Exception):
    """A write failed in a batch written without savepoints: roll back, write it guarded."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def _linger(writes: Sequence[Write]) -> float:
    """A batch of liveness writes alone waits a moment for a write that commits anyway.

    Nobody waits on a liveness write to go on (a run's lease is taken beside its play), and it
    is typically followed within milliseconds by one of the run's appends: committed together
    they cost one transaction and one wake-up of the caller's loop rather than two.
    """
    return LIVENESS_LINGER if all(write.linger for write in writes) else 0.0


def _savepoint(
    connection: sqlite3.Connection, write: PortWrite
) -> tuple[Any, BaseException | None]:
    connection.execute("SAVEPOINT agentdeck_write")
    try:
        result = write(connection)
    except Exception as exc:
        connection.execute("ROLLBACK TO agentdeck_write")
        connection.execute("RELEASE agentdeck_write")
        return None, exc
    connection.execute("RELEASE agentdeck_write")
    return result, None


_WRITERS: dict[str, SharedWriter] = {}
_WRITERS_LOCK = threading.RLock()  # reentrant: a port's finalizer may run inside a locked block


def _after_fork_in_child() -> None:
    """A forked child has none of its parent's threads: its ports start writers of their own."""
    global _WRITERS_LOCK
    _WRITERS_LOCK = threading.RLock()
    _WRITERS.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


async def acquire_writer(
    path: str,
    connect: Callable[[], sqlite3.Connection],
    translate: Translate,
    port_level: int = LIVENESS,
    *,
    read_only: bool = False,
) -> SharedWriter:
    """The process's writer for the database at ``path``, started if it is the first, for a
    port whose durable writes commit at ``port_level``.

    Ports opened ``read_only`` share a writer of their own, on a read-only connection, so a
    reader in a process never hands its connection to a port that writes (or the reverse).
    Raises what opening the connection raised (translated by the first port's ``translate``).
    """
    real = os.path.realpath(path)
    key = f"{real} (read-only)" if read_only else real
    with _WRITERS_LOCK:
        writer = _WRITERS.get(key)
        if writer is None:
            writer = _WRITERS[key] = SharedWriter(key, connect, translate, hub_path=real)
            writer.thread.launch()
        writer._refs += 1
        writer._admit(port_level)
    try:
        await writer.thread.ready()
    except BaseException:
        release_writer(writer)
        raise
    return writer


def release_writer(writer: SharedWriter) -> bool:
    """Give ``writer`` back; ``True`` when that was the last use and its thread is stopping
    (after running everything queued before: await :meth:`SharedWriter.stopped` for that)."""
    with _WRITERS_LOCK:
        writer._refs -= 1
        if writer._refs > 0:
            return False
        if _WRITERS.get(writer.path) is writer:
            del _WRITERS[writer.path]
    writer._forbid_inline()  # its queued writes commit first (on its loop)
    writer.thread.request_stop()
    release_hub(writer.hub)
    return True
