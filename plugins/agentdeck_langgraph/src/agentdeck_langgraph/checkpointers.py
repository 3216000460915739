"""LangGraph checkpointers behind AgentDeck's ``CheckpointerFactory`` port, chosen by URL scheme.

=================================  ================================================================
``memory://``                      ``InMemorySaver``: this process only, gone when it exits
``sqlite:///path``                 ``AsyncSqliteSaver`` on one file (SQLAlchemy URL convention;
                                   ``sqlite://rel/path`` is accepted too)
``postgresql://...``,              ``AsyncPostgresSaver`` on a connection pool (``autocommit``,
``postgres://...``                 ``dict_row``, ``prepare_threshold=0``, as LangGraph requires),
                                   tables created by ``setup()`` when the pool opens; needs the
                                   ``agentdeck-langgraph[postgres]`` extra
=================================  ================================================================

Where checkpoints live by default (:func:`checkpoint_url`): ``AGENTDECK_CHECKPOINT`` when set,
otherwise derived from the deck's state root ``AGENTDECK_STATE``, so the event log and the
checkpoints are durable together or not at all (the 4.x trap of a memory log beside a durable
checkpointer, Known Issues #212, cannot be configured by accident):

* ``memory://...`` -> ``memory://``;
* ``sqlite:///x.db`` -> the sibling file ``sqlite:///x-checkpoints.db``. A sibling rather than
  the same file: SQLite has one writer per file, and the event store and the checkpointer
  writing one file from two connections would queue behind each other's locks on every step;
  it also keeps LangGraph's table names (``checkpoints``, ``writes``) out of the store's file;
* ``postgresql://...`` -> the same DSN: PostgreSQL handles concurrent writers, and LangGraph's
  tables (``checkpoints``, ``checkpoint_blobs``, ``checkpoint_writes``,
  ``checkpoint_migrations``) live beside the store's in the same database and schema.

Any other state scheme has no LangGraph checkpointer here; the error says to set
``AGENTDECK_CHECKPOINT``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from agentdeck.errors import ConfigError, StoreError
from agentdeck.plugins.extras import require_extra
from agentdeck.plugins.host import redact_url, scheme_of
from agentdeck.ports import BackendRequest, CheckpointerFactory
from agentdeck.settings import Settings
from agentdeck_langgraph.settings import CheckpointSettings

__all__ = [
    "CHECKPOINT_SETTING",
    "MemoryCheckpointers",
    "PostgresCheckpointers",
    "SqliteCheckpointers",
    "checkpoint_url",
    "is_durable",
    "sqlite_file",
]

CHECKPOINT_SETTING = "AGENTDECK_CHECKPOINT"
STATE_SETTING = "AGENTDECK_STATE"
POSTGRES_MODULES = ("langgraph.checkpoint.postgres.aio", "psycopg", "psycopg_pool")
"""What the PostgreSQL checkpointer imports: the ``agentdeck-langgraph[postgres]`` extra."""
DERIVED_SCHEMES = ("memory", "sqlite", "postgresql", "postgres")
"""State-root schemes a checkpoint location is derived from."""

POOL_MIN_SIZE = 1
POOL_MAX_SIZE = 8
"""Connections the PostgreSQL checkpointer keeps (runs checkpoint concurrently, one per step)."""
OPEN_TIMEOUT = 10.0
"""Seconds the PostgreSQL pool may take to make its first connection when the engine opens."""


def checkpoint_url(settings: Settings | None, state_url: str) -> tuple[str, str]:
    """Where checkpoints live, and the variable that said so (for error messages).

    ``AGENTDECK_CHECKPOINT`` wins; unset, the location derives from ``state_url`` as the module
    doc describes. Raises :class:`ConfigError` for a state root with no derivable checkpointer.
    """
    explicit = settings.section(CheckpointSettings).url if settings is not None else None
    if explicit is not None:
        return explicit, CHECKPOINT_SETTING
    scheme = scheme_of(state_url, setting=STATE_SETTING)
    if scheme == "memory":
        return "memory://", STATE_SETTING
    if scheme == "sqlite":
        state_file = sqlite_file(state_url, setting=STATE_SETTING)
        sibling = state_file.with_name(f"{state_file.stem}-checkpoints{state_file.suffix}")
        return f"sqlite:///{sibling}", STATE_SETTING
    if scheme in ("postgresql", "postgres"):
        return state_url, STATE_SETTING
    raise ConfigError(
        f"{STATE_SETTING}={redact_url(state_url)!r} keeps run state in '{scheme}', where no "
        f"LangGraph checkpointer is available; set {CHECKPOINT_SETTING} to memory://, "
        "sqlite:///path/to/checkpoints.db or postgresql://... for the workflows' checkpoints",
        setting=CHECKPOINT_SETTING,
        accepted=DERIVED_SCHEMES,
    )


def sqlite_file(url: str, *, setting: str | None = CHECKPOINT_SETTING) -> Path:
    """The file a ``sqlite:`` URL names: ``sqlite:///rel``, ``sqlite:////abs`` or
    ``sqlite://rel`` (a query string is ignored). Relative paths stay relative to the working
    directory, resolved when the file is opened."""
    _, _, rest = url.partition("://")
    rest = rest.split("?", 1)[0]
    path = rest[1:] if rest.startswith("/") else rest
    if not path or path == ":memory:":
        raise ConfigError(
            f"{setting or 'the URL'}={redact_url(url)!r} names no file; accepted: "
            "sqlite:///relative/path.db or sqlite:////absolute/path.db",
            setting=setting,
        )
    return Path(path)


def is_durable(factory: CheckpointerFactory) -> bool:
    """Whether checkpoints written through ``factory`` outlive the process.

    Read from the factory's ``durable`` class attribute; a third-party factory that does not
    declare one is taken to be durable (the engine still refuses, with ``ReplayError``, to
    continue a thread it cannot find).
    """
    return bool(getattr(factory, "durable", True))


class MemoryCheckpointers(CheckpointerFactory):
    """``memory://``: an ``InMemorySaver`` that lives as long as the engine holding it."""

    durable: ClassVar[bool] = False

    def __init__(self, request: BackendRequest | None = None) -> None:
        self.url = request.url if request is not None else "memory://"

    @classmethod
    def from_request(cls, request: BackendRequest) -> MemoryCheckpointers:
        return cls(request)

    def open(self) -> AbstractAsyncContextManager[BaseCheckpointSaver[Any]]:
        return self._open()

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[BaseCheckpointSaver[Any]]:
        yield InMemorySaver()


class SqliteCheckpointers(CheckpointerFactory):
    """``sqlite:///path``: an ``AsyncSqliteSaver`` on one file (its directory is created)."""

    durable: ClassVar[bool] = True

    def __init__(self, url: str) -> None:
        self.url = url
        self.path = sqlite_file(url)

    @classmethod
    def from_request(cls, request: BackendRequest) -> SqliteCheckpointers:
        return cls(request.url)

    def open(self) -> AbstractAsyncContextManager[BaseCheckpointSaver[Any]]:
        return self._open()

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[BaseCheckpointSaver[Any]]:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        path = self.path.expanduser()
        async with AsyncExitStack() as stack:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                opened = AsyncSqliteSaver.from_conn_string(str(path))
                saver = await stack.enter_async_context(opened)
                await saver.setup()
            except (OSError, sqlite3.Error) as exc:
                raise _unavailable("sqlite", self.url, exc) from exc
            yield saver


class PostgresCheckpointers(CheckpointerFactory):
    """``postgresql://dsn``: an ``AsyncPostgresSaver`` on a ``psycopg_pool`` connection pool.

    Needs the ``agentdeck-langgraph[postgres]`` extra; without it, constructing one raises
    :class:`~agentdeck.errors.ExtraNotInstalledError` saying so.

    The pool's connections use the options LangGraph's saver needs (``autocommit=True``,
    ``row_factory=dict_row``, ``prepare_threshold=0``); ``setup()`` creates or migrates its
    tables once per open. A DSN's ``options=-csearch_path=...`` is honoured, so checkpoints can
    live in their own schema.
    """

    durable: ClassVar[bool] = True

    def __init__(self, url: str, *, open_timeout: float = OPEN_TIMEOUT) -> None:
        # Checked when a location is chosen, before anything connects: a missing extra is named.
        require_extra(
            *POSTGRES_MODULES,
            feature=f"the {url.partition('://')[0].lower()}:// LangGraph checkpointer",
            distribution="agentdeck-langgraph",
            extra="postgres",
        )
        self.url = url
        self.open_timeout = open_timeout

    @classmethod
    def from_request(cls, request: BackendRequest) -> PostgresCheckpointers:
        return cls(request.url)

    def open(self) -> AbstractAsyncContextManager[BaseCheckpointSaver[Any]]:
        return self._open()

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[BaseCheckpointSaver[Any]]:
        import psycopg
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg import AsyncConnection
        from psycopg.rows import DictRow, dict_row
        from psycopg_pool import AsyncConnectionPool

        pool: AsyncConnectionPool[AsyncConnection[DictRow]] = AsyncConnectionPool(
            conninfo=self.url,
            min_size=POOL_MIN_SIZE,
            max_size=POOL_MAX_SIZE,
            kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": 0},
            open=False,
        )
        async with AsyncExitStack() as stack:
            stack.push_async_callback(pool.close)
            try:
                await pool.open(wait=True, timeout=self.open_timeout)
                saver = AsyncPostgresSaver(pool)
                await saver.setup()
            except psycopg.Error as exc:  # a PoolTimeout is one too
                raise _unavailable("postgresql", self.url, exc) from exc
            yield saver


def _unavailable(backend: str, url: str, exc: BaseException) -> StoreError:
    """The error a checkpointer that cannot open raises: never a bare driver exception."""
    return StoreError(
        f"cannot open the LangGraph checkpointer ({type(exc).__name__}: {exc})",
        backend=f"{backend} checkpoint",
        url=url,
        retryable=True,
    )
