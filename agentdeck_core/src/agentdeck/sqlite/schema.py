"""SQLite URLs, connections and the versioned schema shared by the store, control and leases.

Every table lives in one file and one schema, created or migrated by whichever of the three
opens the file first (in one ``BEGIN IMMEDIATE`` transaction, so processes opening it at once
agree): the store's ``prune`` can then drop a finished run's control requests and lease along
with its log. (Schema 2 changed how events are kept: see :mod:`agentdeck.sqlite.events`.)
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import parse_qsl, unquote

from agentdeck.errors import ConfigError, StoreError
from agentdeck.sqlite.events import MAX_SEQ, event_id
from agentdeck.storage.sql import to_micros

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "SqliteTarget",
    "check_readable",
    "connect",
    "ensure_schema",
    "parse_url",
    "store_error",
]

BACKEND = "sqlite"
BUSY_TIMEOUT = 10.0
"""Seconds a connection waits for another process's write lock before giving up."""
WAL_AUTOCHECKPOINT = 4000
"""Pages in the write-ahead log before a commit copies them into the database file.

SQLite's default, 1000 pages (4 MB), makes the writer checkpoint every few hundred small
commits, and a checkpoint is the one write at ``synchronous=NORMAL`` that waits for the disk
(an ``fsync`` of the log, then of the database file): a stall of several milliseconds for the
commit that triggers it. At 4000 (16 MB) checkpoints are four times rarer and each copies a hot
page (the runs table's last leaf, the lease table) once for four times as many commits, so the
checkpoint cost per run drops by about a third. Readers pay nothing for a longer log."""
WAL_SIZE_LIMIT = 2 * WAL_AUTOCHECKPOINT * 4096
"""Bytes the log file is cut back to after a checkpoint when a burst grew it past that."""

_SYNCHRONOUS = {"full": "FULL", "normal": "NORMAL", "extra": "EXTRA"}


@dataclass(frozen=True, slots=True)
class SqliteTarget:
    """Where a ``sqlite://`` URL points and how durably to commit there."""

    path: str
    """Absolute: a relative URL path is resolved against the working directory when the
    backend is built, so a later ``chdir`` cannot move the state."""
    synchronous: str = "NORMAL"


def parse_url(url: str) -> SqliteTarget:
    """``sqlite:///rel/path``, ``sqlite:////abs/path`` or ``sqlite://rel/path``.

    The query may set ``synchronous`` to ``normal`` (the default: a commit survives a crash of
    the process, and the file is never corrupted, but the last commits before a power loss or an
    operating-system crash may be lost), ``full`` (every commit survives power loss, at the cost
    of a flush to disk per commit) or ``extra``.
    """
    scheme, sep, rest = url.partition("://")
    if scheme.lower() != BACKEND or not sep:
        raise ConfigError(
            f"{url!r} is not a SQLite URL; use sqlite:///relative/path.db, "
            "sqlite:////absolute/path.db or sqlite://relative/path.db",
            accepted=["sqlite:///relative/path.db", "sqlite:////absolute/path.db"],
        )
    rest, _, query = rest.partition("?")
    raw = unquote(rest[1:] if rest.startswith("/") else rest)
    if not raw or raw == ":memory:" or raw.startswith("file:"):
        raise ConfigError(
            f"{url!r} names no database file; give a path (sqlite:///state.db), or use "
            "memory:// for state that lives only in this process",
            accepted=["sqlite:///relative/path.db", "sqlite:////absolute/path.db", "memory://"],
        )
    synchronous = "NORMAL"
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name != "synchronous" or value.lower() not in _SYNCHRONOUS:
            raise ConfigError(
                f"{url!r}: unknown option {name}={value!r}; the one option is "
                "synchronous=full|normal|extra",
                accepted=[f"synchronous={level}" for level in _SYNCHRONOUS],
            )
        synchronous = _SYNCHRONOUS[value.lower()]
    return SqliteTarget(path=os.path.abspath(raw), synchronous=synchronous)


def store_error(url: str, exc: BaseException, doing: str = "") -> StoreError:
    """A driver failure as the error callers see (the URL of a file carries no password)."""
    retryable = isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
    what = f"{doing}: " if doing else ""
    return StoreError(
        f"{what}{type(exc).__name__}: {exc}", backend=BACKEND, url=url, retryable=retryable
    )


def connect(target: SqliteTarget, *, read_only: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, busy-waiting.

    ``read_only`` opens the existing file read-only (SQLite's ``mode=ro``): no directory, file
    or journal-mode change is made, and any write is refused by SQLite itself.
    """
    if read_only:
        return _connect_read_only(target)
    Path(target.path).parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(
        target.path,
        timeout=BUSY_TIMEOUT,
        isolation_level=None,
        check_same_thread=False,
        cached_statements=256,
    )
    try:
        # Python's ``timeout`` already set it; set again here so the order is explicit: every
        # statement below may meet another process's lock and must wait for it, not fail.
        connection.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
        _switch_to_wal(connection, target.path)
        connection.execute(f"PRAGMA synchronous={target.synchronous}")
        connection.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT}")
        connection.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
    except BaseException:
        connection.close()
        raise
    return connection


def _connect_read_only(target: SqliteTarget) -> sqlite3.Connection:
    connection = sqlite3.connect(
        f"{Path(target.path).as_uri()}?mode=ro",
        uri=True,
        timeout=BUSY_TIMEOUT,
        isolation_level=None,
        check_same_thread=False,
        cached_statements=256,
    )
    try:
        connection.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
        connection.execute("PRAGMA query_only=1")
    except BaseException:
        connection.close()
        raise
    return connection


def check_readable(connection: sqlite3.Connection, url: str, path: str) -> None:
    """What a read-only open checks instead of creating the schema: the file holds AgentDeck's
    state, in a schema version this release reads."""
    ours = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'agentdeck_schema'"
    ).fetchone()
    if ours is None:
        _refuse_a_foreign_file(connection, url, path)
        raise ConfigError(
            f"{path} holds no AgentDeck state yet (no schema); nothing has been recorded "
            "there, and a read-only open does not create it"
        )
    (current,) = connection.execute("SELECT max(version) FROM agentdeck_schema").fetchone()
    if current is None or int(current) != SCHEMA_VERSION:
        raise StoreError(
            f"the database has schema version {current}, and this release reads "
            f"{SCHEMA_VERSION}: open it writable once (any deck on it) to migrate it, or "
            "upgrade agentdeck-core if it is newer",
            backend=BACKEND,
            url=url,
        )


def _switch_to_wal(connection: sqlite3.Connection, path: str) -> None:
    """Put the file in WAL mode, waiting out other processes that are doing the same.

    The switch of a *new* file needs its exclusive lock, and SQLite does not run the busy
    handler for it: a process that meets another one's lock gets "database is locked" at once,
    or the pragma quietly answers the old mode. Several processes making the first open of one
    file together (a server and a CLI command started at once) would then fail, so the switch
    is retried until the file says ``wal`` or :data:`BUSY_TIMEOUT` passes. Once a file is in
    WAL mode the pragma is a read, and the first attempt succeeds.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT
    pause = 0.001
    while True:
        try:
            (mode,) = connection.execute("PRAGMA journal_mode=WAL").fetchone()
        except sqlite3.OperationalError as exc:
            if not _is_locked(exc) or time.monotonic() >= deadline:
                raise
        else:
            if str(mode).lower() == "wal":
                return
            if time.monotonic() >= deadline:
                raise StoreError(
                    f"{path} stayed in journal mode {mode!r}: another process held it for "
                    f"{BUSY_TIMEOUT:g}s while this one switched it to WAL",
                    backend=BACKEND,
                    url=f"sqlite:///{path}",
                    retryable=True,
                )
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _is_locked(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


SCHEMA_VERSION = 2
"""The schema version this release writes (the PostgreSQL store keeps its own)."""


def _refuse_long_logs(connection: sqlite3.Connection, url: str) -> None:
    """Before schema 2: a run past :data:`MAX_SEQ` would not fit its key (none is expected)."""
    (longest,) = connection.execute("SELECT max(seq) FROM agentdeck_events").fetchone()
    if longest is not None and longest > MAX_SEQ:
        raise StoreError(
            f"a run in this database has {longest + 1} events, more than schema "
            f"{SCHEMA_VERSION} keeps per run ({MAX_SEQ + 1}); open it with an AgentDeck "
            "older than the schema, or prune that run first",
            backend=BACKEND,
            url=url,
        )


def _move_events(connection: sqlite3.Connection, url: str) -> None:
    """Schema 1's events into schema 2's table: keyed by ordinal and seq, the time and payload
    taken out of each stored envelope (as JSON, so a kind this release does not know moves
    as it is)."""
    rows = connection.execute(
        "SELECT r.ordinal, e.seq, e.data FROM agentdeck_runs AS r "
        "JOIN agentdeck_events AS e ON e.run_id = r.run_id ORDER BY r.ordinal, e.seq"
    )
    while batch := rows.fetchmany(1000):
        moved = []
        for ordinal, seq, data in batch:
            envelope = json.loads(data)
            moved.append(
                (
                    event_id(ordinal, seq),
                    to_micros(datetime.fromisoformat(envelope["ts"])),
                    json.dumps(envelope["payload"], separators=(",", ":")),
                )
            )
        connection.executemany(
            "INSERT INTO agentdeck_events_v2 (id, ts, data) VALUES (?, ?, ?)", moved
        )


Migration = str | Callable[[sqlite3.Connection, str], None]
"""A statement, or a step given the connection and the URL: a check (raising to refuse the
upgrade) or a move of rows."""

MIGRATIONS: dict[int, tuple[Migration, ...]] = {
    1: (
        """CREATE TABLE agentdeck_runs (
            ordinal INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL UNIQUE,
            ns TEXT NOT NULL,
            name TEXT NOT NULL,
            invocable_kind TEXT NOT NULL,
            session_id TEXT,
            run_key TEXT,
            parent_run_id TEXT,
            status TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            wake_at INTEGER,
            holds_session INTEGER NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX agentdeck_runs_ns ON agentdeck_runs (ns, ordinal)",
        "CREATE INDEX agentdeck_runs_ns_status ON agentdeck_runs (ns, status, ordinal)",
        """CREATE INDEX agentdeck_runs_ns_session ON agentdeck_runs (ns, session_id, ordinal)
            WHERE session_id IS NOT NULL""",
        """CREATE UNIQUE INDEX agentdeck_runs_session_holder ON agentdeck_runs (ns, session_id)
            WHERE holds_session = 1""",
        """CREATE UNIQUE INDEX agentdeck_runs_key ON agentdeck_runs (ns, run_key)
            WHERE run_key IS NOT NULL""",
        """CREATE INDEX agentdeck_runs_wake ON agentdeck_runs (status, wake_at)
            WHERE wake_at IS NOT NULL""",
        "CREATE INDEX agentdeck_runs_ns_name ON agentdeck_runs (ns, name, ordinal)",
        """CREATE INDEX agentdeck_runs_parent ON agentdeck_runs (parent_run_id, ordinal)
            WHERE parent_run_id IS NOT NULL""",
        """CREATE TABLE agentdeck_events (
            run_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        ) WITHOUT ROWID""",
        """CREATE TABLE agentdeck_engine_state (
            run_id TEXT NOT NULL,
            name TEXT NOT NULL,
            value BLOB NOT NULL,
            PRIMARY KEY (run_id, name)
        ) WITHOUT ROWID""",
        """CREATE TABLE agentdeck_control (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL,
            verb TEXT NOT NULL,
            reason TEXT,
            requested_at INTEGER NOT NULL,
            UNIQUE (run_id, verb)
        )""",
        """CREATE TABLE agentdeck_leases (
            run_id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            expires_at INTEGER NOT NULL
        ) WITHOUT ROWID""",
        "CREATE INDEX agentdeck_leases_expiry ON agentdeck_leases (expires_at, run_id)",
    ),
    2: (
        _refuse_long_logs,
        """CREATE TABLE agentdeck_events_v2 (
            id INTEGER PRIMARY KEY,
            ts INTEGER NOT NULL,
            data TEXT NOT NULL
        )""",
        _move_events,
        "DROP TABLE agentdeck_events",
        "ALTER TABLE agentdeck_events_v2 RENAME TO agentdeck_events",
    ),
}
"""Schema version -> the steps that bring the previous version to it."""

assert max(MIGRATIONS) == SCHEMA_VERSION


def _refuse_a_foreign_file(connection: sqlite3.Connection, url: str, path: str) -> None:
    """Refuse a database that holds another program's tables and none of ours.

    A state URL that points at the wrong file (an application's own database, a LangGraph
    checkpoint file) would otherwise get AgentDeck's tables added beside the owner's, silently.
    A file with AgentDeck's schema table is ours, whatever else was put in it later; an empty or
    new file is initialised. There is no override: a separate file costs nothing.
    """
    ours = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'agentdeck_schema'"
    ).fetchone()
    if ours is not None:
        return
    foreign = [
        name
        for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        )
        if not name.startswith(("agentdeck_", "sqlite_"))
    ]
    if foreign:
        shown = ", ".join(foreign[:5]) + (
            f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
        )
        raise ConfigError(
            f"{path} is another program's SQLite database (it has the tables {shown} and no "
            "AgentDeck schema); it was left untouched. Point the AgentDeck state at a file of its "
            f"own, e.g. sqlite:///{Path(path).with_name('agentdeck-state.db')}"
        )


def ensure_schema(connection: sqlite3.Connection, url: str, path: str | None = None) -> None:
    """Create or migrate the schema to :data:`SCHEMA_VERSION`, atomically.

    ``path`` (the file, for messages; the URL when not given) is checked first: a file holding
    another program's tables is refused, see :func:`_refuse_a_foreign_file`.
    """
    connection.execute("BEGIN IMMEDIATE")
    try:
        _refuse_a_foreign_file(connection, url, path or url)
        connection.execute("CREATE TABLE IF NOT EXISTS agentdeck_schema (version INTEGER NOT NULL)")
        row = connection.execute("SELECT max(version) FROM agentdeck_schema").fetchone()
        current = int(row[0]) if row[0] is not None else 0
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"the database has schema version {current}, written by a newer AgentDeck "
                f"(this one reads up to {SCHEMA_VERSION}); upgrade agentdeck-core",
                backend=BACKEND,
                url=url,
            )
        for version in range(current + 1, SCHEMA_VERSION + 1):
            for step in MIGRATIONS[version]:
                if isinstance(step, str):
                    connection.execute(step)
                else:
                    step(connection, url)
        if current < SCHEMA_VERSION:
            connection.execute("DELETE FROM agentdeck_schema")
            connection.execute(
                "INSERT INTO agentdeck_schema (version) VALUES (?)", (SCHEMA_VERSION,)
            )
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
