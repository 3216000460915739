"""PostgreSQL plumbing shared by the store, control and leases: URLs, the pool, retries, schema.

Every port holds a psycopg 3 :class:`~psycopg_pool.AsyncConnectionPool`; no operation opens a
connection of its own. A connection the server dropped (a restart, ``pg_terminate_backend``, a
network blip) surfaces on its next use; the operation is then retried on a fresh connection after
the pool has checked its idle ones -- unless the failure hit a ``COMMIT``, whose outcome is then
unknown, which is reported as a retryable :class:`~agentdeck.errors.StoreError` instead of risking
a write twice. Driver exceptions never escape: they arrive as ``StoreError`` naming the backend
and the URL, password redacted.

Every call is bounded by the stores' ``connect_timeout_seconds`` (default 5 s): connecting,
waiting for a pooled connection and the retries on fresh ones all share that one deadline, so
during an outage a call fails with a retryable ``StoreError`` within the bound instead of waiting
out a long pool timeout. The pool's own reconnect warnings are silenced; one warning per outage
and one line on recovery come from :mod:`._outage` instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import sql
from psycopg.pq import TransactionStatus
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from psycopg_pool.pool_async import logger as _pool_logger  # its own logger, filtered below

from agentdeck.errors import AgentDeckError, ConfigError, StoreError
from agentdeck.storage.sql import SCHEMA_VERSION
from agentdeck_stores._outage import Outage, outage_for
from agentdeck_stores.settings import DEFAULT_CONNECT_TIMEOUT

__all__ = [
    "BACKEND",
    "CommitUnknown",
    "PgDatabase",
    "PgTarget",
    "parse_url",
    "pipelined_transaction",
    "store_error",
    "transaction",
]

BACKEND = "postgresql"
RETRIES = 3
"""Fresh connections an operation is retried on after its connection was found broken."""
APPLICATION_NAME = "agentdeck-stores"

_T = TypeVar("_T")
_IDENTIFIER = re.compile(r"\A[A-Za-z_][A-Za-z0-9_$]{0,62}\Z")
_SEARCH_PATH = re.compile(r"search_path\s*=\s*([^\s,]+)")
_POOL_OPTIONS = {"pool_min": 1, "pool_max": 4}


class _QuietPools(logging.Filter):
    """Drops psycopg_pool's per-attempt reconnect warnings for the pools this module opens:
    a 10 s outage made about sixty of them; :class:`Outage` says it once instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.WARNING:
            return True
        if "'agentdeck" in record.getMessage():  # "error connecting in 'agentdeck-events'"
            return False
        # "discarding closed connection: <conn>", once per pooled connection an outage broke:
        # the connection knows its pool, and so its name.
        args = record.args if isinstance(record.args, tuple) else ()
        return not any(_ours(getattr(arg, "_pool", None)) for arg in args)


def _ours(pool: object) -> bool:
    return str(getattr(pool, "name", "")).startswith("agentdeck")


_quiet_pools = _QuietPools()


@dataclass(frozen=True, slots=True)
class PgTarget:
    """What a ``postgresql://`` URL asks for, as psycopg takes it."""

    conninfo: str
    schema: str | None
    """The schema the URL names (``?schema=`` or the first ``search_path`` entry in
    ``options``); created if missing. ``None``: the server's default (usually ``public``)."""
    pool_min: int
    pool_max: int


def parse_url(url: str) -> PgTarget:
    """``postgresql://user:pass@host:port/db?...`` (``postgres://`` too).

    Besides libpq's own parameters, the query may carry ``schema=<name>`` (tables go in that
    schema, created on first open), ``pool_min`` and ``pool_max`` (pool size per port, default
    1 and 4). ``application_name`` defaults to ``agentdeck-stores``.
    """
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("postgresql", "postgres"):
        raise ConfigError(
            f"{url!r} is not a PostgreSQL URL; use postgresql://user@host:5432/database",
            accepted=["postgresql://user@host:5432/database"],
        )
    query: list[tuple[str, str]] = []
    schema: str | None = None
    sizes = dict(_POOL_OPTIONS)
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name == "schema":
            schema = _identifier(url, value)
        elif name in sizes:
            sizes[name] = _size(url, name, value)
        else:
            query.append((name, value))
    if schema is not None:
        query = [(k, v) for k, v in query if k != "options"] + [
            ("options", f"-csearch_path={schema}")
        ]
    else:
        for name, value in query:
            found = _SEARCH_PATH.search(value) if name == "options" else None
            if found is not None:
                schema = _identifier(url, found.group(1).strip('"'))
    if not any(name == "application_name" for name, _ in query):
        query.append(("application_name", APPLICATION_NAME))
    if sizes["pool_min"] > sizes["pool_max"]:
        raise ConfigError(
            f"{url!r}: pool_min ({sizes['pool_min']}) is larger than pool_max "
            f"({sizes['pool_max']})",
            accepted=["pool_min <= pool_max"],
        )
    conninfo = urlunsplit(
        parts._replace(scheme="postgresql", query=urlencode(query, quote_via=quote))
    )
    return PgTarget(conninfo, schema, sizes["pool_min"], sizes["pool_max"])


def _identifier(url: str, value: str) -> str:
    if not _IDENTIFIER.match(value):
        raise ConfigError(
            f"{url!r}: schema {value!r} is not a plain SQL identifier (letters, digits, _ and $, "
            "not starting with a digit, at most 63 characters)",
            accepted=["schema=agentdeck"],
        )
    return value


def _size(url: str, name: str, value: str) -> int:
    try:
        size = int(value)
    except ValueError:
        size = 0
    if size < 1:
        raise ConfigError(
            f"{url!r}: {name}={value!r} must be a whole number of connections, at least 1",
            accepted=[f"{name}=4"],
        )
    return size


def store_error(url: str, exc: BaseException, doing: str = "") -> StoreError:
    """A driver failure as the error callers see (``StoreError`` redacts the password)."""
    retryable = isinstance(exc, psycopg.OperationalError | PoolTimeout)
    what = f"{doing}: " if doing else ""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return StoreError(
        f"{what}{type(exc).__name__}: {text}", backend=BACKEND, url=url, retryable=retryable
    )


class CommitUnknown(Exception):
    """The connection broke while a ``COMMIT`` was in flight: the write may or may not stand."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class _Broken(Exception):
    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class PgDatabase:
    """A pool and the retry policy around it, for one port."""

    def __init__(
        self,
        url: str,
        target: PgTarget,
        name: str,
        *,
        timeout: float | None = None,
        read_only: bool = False,
    ) -> None:
        self.url = url
        self.target = target
        self._name = name
        self.timeout = timeout if timeout is not None else DEFAULT_CONNECT_TIMEOUT
        """Seconds one call may take to reach the server (connect, checkout and retries)."""
        self._outage: Outage = outage_for(BACKEND, url)
        self.read_only = read_only
        """Opened for a reader: no DDL at open, and every session is read-only on the server."""
        self._pool: AsyncConnectionPool[Any] | None = None
        self.schema: str | None = None
        """The schema the tables live in (known after :meth:`open`)."""
        self.absent = False
        """Read-only and the tables do not exist (yet): the store reads as empty, and nothing
        is created for it (known after :meth:`open`)."""

    async def open(self) -> None:
        """Check the server answers, create or migrate the schema (read-only: check that the
        tables are there and of a version this release reads, creating nothing), then open
        the pool."""
        if _quiet_pools not in _pool_logger.filters:
            _pool_logger.addFilter(_quiet_pools)
        try:
            connection = await asyncio.wait_for(
                psycopg.AsyncConnection.connect(
                    self.target.conninfo, autocommit=True, connect_timeout=self._libpq_timeout
                ),
                self.timeout,
            )
        except (psycopg.Error, TimeoutError) as exc:
            raise store_error(self.url, exc, f"cannot connect within {self.timeout:g} s") from None
        try:
            if self.read_only:
                self.schema = await _inspect_schema(connection, self.target.schema, self.url)
                self.absent = self.schema is None
            else:
                self.schema = await _ensure_schema(connection, self.target.schema, self.url)
        except psycopg.Error as exc:
            doing = "cannot read the schema" if self.read_only else "cannot create the schema"
            raise store_error(self.url, exc, doing) from None
        finally:
            await connection.close()
        if self.absent:
            return  # nothing to read, so no pool either
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            self.target.conninfo,
            min_size=self.target.pool_min,
            max_size=self.target.pool_max,
            open=False,
            kwargs={"autocommit": True, "connect_timeout": self._libpq_timeout},
            configure=_read_only_session if self.read_only else None,
            timeout=self.timeout,
            # A connection attempt that fails is retried with a backoff that doubles; left at
            # psycopg_pool's 5 min, a slot lost in an outage can sit out seconds to minutes after
            # the server is back while calls time out waiting. Giving up after one call's
            # timeout frees the slot, and the next call that finds no connection grows the pool
            # again at once.
            reconnect_timeout=self.timeout,
            name=self._name,
        )
        try:
            await pool.open(wait=True, timeout=self.timeout)
        except (psycopg.Error, PoolTimeout) as exc:
            await pool.close()
            raise store_error(self.url, exc, "cannot open the connection pool") from None
        self._pool = pool

    @property
    def _libpq_timeout(self) -> int:
        # libpq takes whole seconds and reads anything below 2 as 2.
        return max(2, math.ceil(self.timeout))

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def run(self, work: Callable[[psycopg.AsyncConnection[Any]], Awaitable[_T]]) -> _T:
        """``work`` on a pooled connection, retried on a fresh one if the connection broke."""
        pool = self._pool
        if pool is None:
            raise StoreError("it is closed (or was never opened)", backend=BACKEND, url=self.url)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        started = time.monotonic()
        attempt = 0
        while True:
            try:
                left = max(0.001, deadline - loop.time())
                async with pool.connection(timeout=left) as connection:
                    try:
                        result = await work(connection)
                    except psycopg.OperationalError as exc:
                        if connection.broken or connection.closed:
                            raise _Broken(exc) from exc
                        raise
                self._outage.reached(started)
                return result
            except _Broken as broken:
                attempt += 1
                if attempt > RETRIES or loop.time() >= deadline:
                    self._outage.failed(broken.cause, started)
                    raise store_error(self.url, broken.cause) from None
                await asyncio.sleep(0.02 * attempt)  # let a restarting server come back
                with contextlib.suppress(psycopg.Error, PoolTimeout, TimeoutError):
                    # drop the other dead connections; the retry reports any
                    await asyncio.wait_for(pool.check(), max(0.001, deadline - loop.time()))
            except CommitUnknown as unknown:
                self._outage.failed(unknown.cause, started)
                raise store_error(
                    self.url,
                    unknown.cause,
                    "the connection broke during COMMIT, so whether it took effect is unknown",
                ) from None
            except AgentDeckError:
                raise
            except PoolTimeout as exc:
                self._outage.failed(exc, started)
                raise store_error(
                    self.url, exc, f"no connection to the server within {self.timeout:g} s"
                ) from None
            except psycopg.Error as exc:
                if isinstance(exc, psycopg.OperationalError):
                    self._outage.failed(exc, started)
                raise store_error(self.url, exc) from None


async def transaction(
    connection: psycopg.AsyncConnection[Any], work: Callable[[], Awaitable[_T]]
) -> _T:
    """``work`` in an explicit transaction; a broken ``COMMIT`` raises :class:`CommitUnknown`."""
    await connection.execute("BEGIN")
    try:
        result = await work()
    except BaseException:
        if not (connection.broken or connection.closed):
            with contextlib.suppress(psycopg.Error):  # the pool discards a bad connection
                await connection.execute("ROLLBACK")
        raise
    try:
        await connection.execute("COMMIT")
    except psycopg.OperationalError as exc:
        if connection.broken or connection.closed:
            raise CommitUnknown(exc) from exc
        raise
    return result


async def pipelined_transaction(
    connection: psycopg.AsyncConnection[Any], work: Callable[[], Awaitable[_T]]
) -> _T:
    """``work`` in a transaction sent in pipeline mode: ``BEGIN`` travels with ``work``'s first
    statement, and its writes travel with the ``COMMIT`` -- two round trips when ``work`` reads
    once, then writes. A broken ``COMMIT`` raises :class:`CommitUnknown`.

    ``work`` must execute its statements with ``prepare=False``: psycopg would remember a
    statement it prepared in a pipeline that then aborted (a lost race) as prepared, though the
    server dropped it.
    """
    committing = False
    try:
        async with connection.pipeline() as pipeline:
            await connection.execute("BEGIN", prepare=False)
            result = await work()
            await connection.execute("COMMIT", prepare=False)
            committing = True
            await pipeline.sync()
    except BaseException as exc:
        broken = connection.broken or connection.closed
        if committing and broken and isinstance(exc, psycopg.OperationalError):
            raise CommitUnknown(exc) from exc
        if not broken and connection.info.transaction_status != TransactionStatus.IDLE:
            with contextlib.suppress(psycopg.Error):  # the pool discards a bad connection
                await connection.execute("ROLLBACK")
        raise
    return result


# =========================================================================== schema


MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE agentdeck_runs (
            ordinal bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            run_id text NOT NULL UNIQUE,
            ns text NOT NULL,
            name text NOT NULL,
            invocable_kind text NOT NULL,
            session_id text,
            run_key text,
            parent_run_id text,
            status text NOT NULL,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            last_seq integer NOT NULL,
            wake_at timestamptz,
            holds_session boolean NOT NULL DEFAULT false
        )""",
        "CREATE INDEX agentdeck_runs_ns ON agentdeck_runs (ns, ordinal)",
        "CREATE INDEX agentdeck_runs_ns_status ON agentdeck_runs (ns, status, ordinal)",
        """CREATE INDEX agentdeck_runs_ns_session ON agentdeck_runs (ns, session_id, ordinal)
            WHERE session_id IS NOT NULL""",
        """CREATE UNIQUE INDEX agentdeck_runs_session_holder ON agentdeck_runs (ns, session_id)
            WHERE holds_session""",
        """CREATE UNIQUE INDEX agentdeck_runs_key ON agentdeck_runs (ns, run_key)
            WHERE run_key IS NOT NULL""",
        """CREATE INDEX agentdeck_runs_wake ON agentdeck_runs (status, wake_at)
            WHERE wake_at IS NOT NULL""",
        "CREATE INDEX agentdeck_runs_ns_name ON agentdeck_runs (ns, name, ordinal)",
        """CREATE INDEX agentdeck_runs_parent ON agentdeck_runs (parent_run_id, ordinal)
            WHERE parent_run_id IS NOT NULL""",
        """CREATE TABLE agentdeck_events (
            run_id text NOT NULL,
            seq integer NOT NULL,
            data jsonb NOT NULL,
            PRIMARY KEY (run_id, seq)
        )""",
        """CREATE TABLE agentdeck_engine_state (
            run_id text NOT NULL,
            name text NOT NULL,
            value bytea NOT NULL,
            PRIMARY KEY (run_id, name)
        )""",
        """CREATE TABLE agentdeck_control (
            id bigint GENERATED ALWAYS AS IDENTITY,
            run_id text NOT NULL,
            verb text NOT NULL,
            reason text,
            requested_at timestamptz NOT NULL,
            PRIMARY KEY (run_id, verb)
        )""",
        """CREATE TABLE agentdeck_leases (
            run_id text PRIMARY KEY,
            owner text NOT NULL,
            expires_at timestamptz NOT NULL
        )""",
        "CREATE INDEX agentdeck_leases_expiry ON agentdeck_leases (expires_at, run_id)",
    ),
}
"""Schema version -> the statements that bring the previous version to it."""

assert max(MIGRATIONS) == SCHEMA_VERSION


async def _read_only_session(connection: psycopg.AsyncConnection[Any]) -> None:
    """Every transaction of a reader's connection is read-only: the server refuses a write."""
    await connection.execute("SET default_transaction_read_only = on")


async def _inspect_schema(
    connection: psycopg.AsyncConnection[Any], schema: str | None, url: str
) -> str | None:
    """The schema holding the tables, for a reader: ``None`` when the schema or its tables do not
    exist yet (an empty store); :class:`StoreError` when they were written by a newer release.
    Reads the catalogs only, so it takes no lock and creates nothing."""
    cursor = await connection.execute(
        "SELECT n.nspname FROM pg_namespace n WHERE n.nspname = coalesce(%s, current_schema())",
        (schema,),
    )
    row = await cursor.fetchone()
    if row is None:
        return None
    found = str(row[0])
    cursor = await connection.execute(
        "SELECT count(*) FROM pg_tables WHERE schemaname = %s AND tablename = 'agentdeck_schema'",
        (found,),
    )
    row = await cursor.fetchone()
    if row is None or not row[0]:
        return None
    cursor = await connection.execute(
        sql.SQL("SELECT max(version) FROM {}.agentdeck_schema").format(sql.Identifier(found))
    )
    row = await cursor.fetchone()
    version = int(row[0]) if row is not None and row[0] is not None else 0
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"schema {found!r} has version {version}, written by a newer agentdeck-stores "
            f"(this one reads up to {SCHEMA_VERSION}); upgrade agentdeck-stores",
            backend=BACKEND,
            url=url,
        )
    if version < SCHEMA_VERSION:
        raise StoreError(
            f"schema {found!r} has version {version}, older than this agentdeck-stores "
            f"({SCHEMA_VERSION}); a reader migrates nothing: open the store once for writing "
            "(any deck, or `agentdeck serve`) to migrate it",
            backend=BACKEND,
            url=url,
        )
    return found


async def _ensure_schema(
    connection: psycopg.AsyncConnection[Any], schema: str | None, url: str
) -> str:
    """Create the schema the URL names (if any) and migrate its tables, serialized by an
    advisory lock so processes opening a fresh database at once agree. Returns the schema."""
    async with connection.transaction():
        if schema is not None:
            await connection.execute(
                "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"agentdeck-schema:{schema}",)
            )
            await connection.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema))
            )
        cursor = await connection.execute("SELECT current_schema()")
        row = await cursor.fetchone()
        current_schema = row[0] if row is not None else None
        if current_schema is None:
            raise StoreError(
                "no schema to create tables in (the search_path names none that exists); "
                "add ?schema=<name> to the URL",
                backend=BACKEND,
                url=url,
            )
        await connection.execute(
            "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"agentdeck-tables:{current_schema}",)
        )
        await connection.execute(
            "CREATE TABLE IF NOT EXISTS agentdeck_schema (version integer NOT NULL)"
        )
        cursor = await connection.execute("SELECT max(version) FROM agentdeck_schema")
        row = await cursor.fetchone()
        version = int(row[0]) if row is not None and row[0] is not None else 0
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"schema {current_schema!r} has version {version}, written by a newer "
                f"agentdeck-stores (this one reads up to {SCHEMA_VERSION}); upgrade "
                "agentdeck-stores",
                backend=BACKEND,
                url=url,
            )
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[step]:
                await connection.execute(statement)
        if version < SCHEMA_VERSION:
            await connection.execute("DELETE FROM agentdeck_schema")
            await connection.execute(
                "INSERT INTO agentdeck_schema (version) VALUES (%s)", (SCHEMA_VERSION,)
            )
        return str(current_schema)
