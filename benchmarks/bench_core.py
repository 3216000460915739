"""Core runtime rows: trivial ``@workflow`` runs per second, and the ask -> answer -> complete
cycle as the store fills up, on a real ``Deck`` playing the native workflow engine.

Every subject is ``deck.run(...)`` (and, for the cycle, ``run.answer(...)`` then the result) on an
open deck: the runtime opens the run in the store, holds a lease, plays the body on the native
engine, records its events, folds them, counts them for the metrics and hands the result back.

* **Runs per second** (unit ``per_s``, a floor). The memory rows' baseline is the same ``async``
  body awaited bare. The SQLite rows put the deck's whole state (``AGENTDECK_STATE``: events,
  control, leases) in a file in a temporary directory at the store's default level
  (``synchronous=NORMAL``); their baseline is a bare ``sqlite3`` loop committing what the deck
  commits for a run -- the run and its ``run.started`` in one transaction, ``run.completed``, the
  run's new state and its lease in another, the leases released later -- one transaction per
  step sequentially, one per step for all 100 runs together in the concurrent row (the best
  group commit could do). At ``synchronous=full`` each of those commits is a disk flush: on a
  disk whose flush takes milliseconds the baseline itself cannot reach the floor sequentially.
* **Ask/answer cycle** (unit ``x``, a ceiling): start a workflow that asks, answer it through a
  handle from ``deck.runs.get``, wait for its result -- on a store already holding 10,000
  finished runs of the same workflow (the subject) vs one holding 10 (the baseline), for every
  store: memory, SQLite, PostgreSQL (a schema of its own on the local server, dropped at exit)
  and Redis (a key prefix of its own, deleted at exit). Both stores also gain the runs the
  cycles themselves finish, a few hundred, which leaves the 1,000-to-1 size difference intact.

Under ``--smoke`` the populations are scaled down (1,000 finished runs instead of 10,000) and the
SQLite sequential rows play fewer runs a call, so every row still runs quickly.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import itertools
import os
import secrets
import shutil
import sqlite3
import sys
import tempfile
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import psycopg
import redis

from agentdeck import Deck, WorkflowCtx, workflow
from agentdeck.model.clock import SystemClock
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunCompleted, RunStarted
from agentdeck.ports import NewRun
from agentdeck.runtime.config import NonDurableStoreWarning
from agentdeck.runtime.ids import new_run_id
from agentdeck.settings import Settings
from benchmarks import Pair, bench

_T = TypeVar("_T")

SMOKE = "--smoke" in sys.argv
FINISHED = 1_000 if SMOKE else 10_000
"""Finished runs the crowded store holds for the ask/answer rows (10 in the sparse one)."""
SEQUENTIAL = 50
"""Runs one call of a sequential memory row plays, one after the other."""
SEQUENTIAL_SQLITE = 5 if SMOKE else 20
CONCURRENT = 100
POSTGRES = (
    os.environ.get("AGENTDECK_TEST_POSTGRES_URL") or "postgresql://postgres@127.0.0.1:5432/test"
)
REDIS = os.environ.get("AGENTDECK_TEST_REDIS_URL") or "redis://127.0.0.1:6379/0"
_TOKEN = secrets.token_hex(4)
_names = itertools.count()
_DIRECTORY = Path(tempfile.mkdtemp(prefix="agentdeck-bench-core-"))
_SCHEMAS: list[str] = []
_PREFIXES: list[str] = []

# The memory ask/answer row parks runs on the memory store on purpose.
warnings.filterwarnings("ignore", category=NonDurableStoreWarning)


@workflow
async def trivial(x: int = 0) -> int:
    """The smallest useful body: what the runtime costs around a body that costs nothing."""
    return x + 1


@workflow
async def approval(ctx: WorkflowCtx[None], item: str = "invoice") -> str:
    """Asks one question and returns the answer."""
    answer = await ctx.ask(f"approve {item}?", options=["yes", "no"])
    return f"{item}: {answer}"


# =========================================================================== plumbing


def _cleanup() -> None:
    shutil.rmtree(_DIRECTORY, ignore_errors=True)
    if _SCHEMAS:
        with contextlib.suppress(psycopg.Error), psycopg.connect(POSTGRES, autocommit=True) as conn:
            for schema in _SCHEMAS:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    if _PREFIXES:
        client = redis.Redis.from_url(REDIS)
        try:
            for prefix in _PREFIXES:
                batch = list(client.scan_iter(match=f"{prefix}*", count=1000))
                for start in range(0, len(batch), 1000):
                    client.delete(*batch[start : start + 1000])
        except redis.RedisError:
            pass
        finally:
            client.close()


atexit.register(_cleanup)


class _Loop:
    """One event loop per row; each timed call runs one coroutine to completion on it.

    Rows are measured one after another, so a new row's loop first closes the earlier rows'
    decks: their threads (SQLite readers, writers, follow watchers) and their stores' memory
    would otherwise weigh on every row measured after them.
    """

    def __init__(self) -> None:
        _close_loops()
        gc.collect()  # and their runs are freed before this row is measured
        self.loop = asyncio.new_event_loop()
        self.decks: list[Deck] = []
        _LOOPS.append(self)

    def run(self, awaitable: Awaitable[_T]) -> _T:
        async def wrapped() -> _T:
            return await awaitable

        return self.loop.run_until_complete(wrapped())

    def deck(self, state: str | None) -> Deck:
        """An open deck of this module's workflows on ``state`` (memory when ``None``)."""
        env = {"AGENTDECK_STATE": state if state is not None else "memory://"}
        deck = Deck(workflows=[trivial, approval], observers=(), settings=Settings(env=env))
        self.run(deck.open())
        self.decks.append(deck)
        # Close the decks before the stores' own exit hooks stop their threads (atexit runs
        # the last registered first): a deck closing after that would wait on them for ever.
        atexit.unregister(_close_loops)
        atexit.register(_close_loops)
        return deck

    def close(self) -> None:
        for deck in self.decks:
            with contextlib.suppress(Exception):
                self.run(deck.aclose())
        self.loop.close()


_LOOPS: list[_Loop] = []


def _close_loops() -> None:
    while _LOOPS:
        _LOOPS.pop().close()


atexit.register(_close_loops)  # before _cleanup (registered earlier); see also _Loop.deck


def _state_url(backend: str) -> str | None:
    name = f"adk_bench_core_{_TOKEN}_{next(_names)}"
    if backend == "memory":
        return None
    if backend == "sqlite":
        return f"sqlite:///{_DIRECTORY / name}.db"
    if backend == "postgres":
        _SCHEMAS.append(name)
        return f"{POSTGRES}?schema={name}"
    prefix = f"{name}:"
    _PREFIXES.append(prefix)
    return f"{REDIS}?prefix={prefix}"


# =========================================================================== runs per second


def _sequential(loop: _Loop, deck: Deck, count: int) -> Callable[[], None]:
    async def runs() -> None:
        for n in range(count):
            assert await deck.run("trivial", n) == n + 1

    return lambda: loop.run(runs())


def _concurrent(loop: _Loop, deck: Deck, count: int) -> Callable[[], None]:
    async def runs() -> None:
        results = await asyncio.gather(*(deck.run("trivial", n) for n in range(count)))
        assert results == [n + 1 for n in range(count)]

    return lambda: loop.run(runs())


def _bare(loop: _Loop, count: int, *, together: bool) -> Callable[[], None]:
    """The same body awaited ``count`` times without AgentDeck (gathered when ``together``)."""
    body = trivial.fn

    async def sequential() -> None:
        for n in range(count):
            assert await body(n) == n + 1

    async def gathered() -> None:
        assert await asyncio.gather(*(body(n) for n in range(count))) == [
            n + 1 for n in range(count)
        ]

    return lambda: loop.run(gathered() if together else sequential())


class _RawSqlite:
    """A bare ``sqlite3`` loop committing, per run, what the deck commits for a trivial run.

    Tables shaped like the store's (runs indexed by status and name, events keyed by run and seq,
    leases keyed by run); event bodies serialized once, up front. A deck commits two
    transactions per run at the file's level (``level``, the store's default): the run and its
    ``run.started``;
    then ``run.completed`` with the run's new state and the lease taken beside the play (the
    store's writer commits them together). The leases of finished runs are released later, in
    one transaction for all of them and without an fsync of its own (``NORMAL``), as the
    runtime's tidy-up and the store's liveness writes do. ``runs(count, together=False)``
    commits each run's two steps on their own, as a sequential deck must; ``together=True``
    commits each step once for all ``count`` runs, as a perfect group commit would.
    """

    STEPS = 2  # open (run + run.started); completed (event + run) with the lease taken

    def __init__(self) -> None:
        path = _DIRECTORY / f"raw_{_TOKEN}_{next(_names)}.db"
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.synchronous = ""  # set per transaction (only when it changes), as the store does
        self.level = "NORMAL"  # the store's default level for opens and appends
        self.conn.executescript(
            """
            CREATE TABLE runs (ordinal INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT UNIQUE,
                name TEXT, status TEXT, last_seq INTEGER, updated_at INTEGER);
            CREATE INDEX runs_status ON runs (status, ordinal);
            CREATE INDEX runs_name ON runs (name, ordinal);
            CREATE TABLE events (run_id TEXT, seq INTEGER, data TEXT,
                PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
            CREATE TABLE leases (run_id TEXT PRIMARY KEY, owner TEXT, expires_at INTEGER);
            """
        )
        ts = SystemClock().now()
        started = RunStarted(name="trivial", invocable_kind="workflow")
        self.started = Event.record(started, seq=0, run_id="r", ts=ts).to_json()
        self.completed = Event.record(RunCompleted(), seq=1, run_id="r", ts=ts).to_json()

    def _commit(
        self, synchronous: str, statements: list[tuple[str, list[tuple[Any, ...]]]]
    ) -> None:
        if synchronous != self.synchronous:
            self.conn.execute(f"PRAGMA synchronous={synchronous}")
            self.synchronous = synchronous
        self.conn.execute("BEGIN IMMEDIATE")
        for sql, rows in statements:
            self.conn.executemany(sql, rows)
        self.conn.execute("COMMIT")

    def runs(self, count: int, *, together: bool) -> None:
        ids = [new_run_id() for _ in range(count)]
        steps: list[Callable[[list[str]], list[tuple[str, list[tuple[Any, ...]]]]]] = [
            lambda batch: [
                (
                    "INSERT INTO runs (run_id, name, status, last_seq, updated_at) "
                    "VALUES (?, 'trivial', 'running', 0, 0)",
                    [(r,) for r in batch],
                ),
                ("INSERT INTO events VALUES (?, 0, ?)", [(r, self.started) for r in batch]),
            ],
            lambda batch: [
                ("INSERT INTO leases VALUES (?, 'me', 1)", [(r,) for r in batch]),
                ("INSERT INTO events VALUES (?, 1, ?)", [(r, self.completed) for r in batch]),
                (
                    "UPDATE runs SET status = 'completed', last_seq = 1, updated_at = 1 "
                    "WHERE run_id = ?",
                    [(r,) for r in batch],
                ),
            ],
        ]
        if together:
            for step in steps:
                self._commit(self.level, step(ids))
        else:
            for run_id in ids:
                for step in steps:
                    self._commit(self.level, step([run_id]))
        self._commit("NORMAL", [("DELETE FROM leases WHERE run_id = ?", [(r,) for r in ids])])


@bench("core: trivial @workflow runs/s, sequential, memory store", budget=15_000, unit="per_s")
def runs_sequential_memory() -> Pair:
    """deck.run() of a trivial @workflow, one after another, vs the body awaited bare."""
    loop = _Loop()
    deck = loop.deck(None)
    return Pair(
        subject=_sequential(loop, deck, SEQUENTIAL),
        baseline=_bare(loop, SEQUENTIAL, together=False),
        ops_per_call=SEQUENTIAL,
        collector=True,
    )


@bench("core: trivial @workflow runs/s, 100 concurrent, memory store", budget=15_000, unit="per_s")
def runs_concurrent_memory() -> Pair:
    """100 deck.run() of a trivial @workflow gathered at once vs the body gathered bare."""
    loop = _Loop()
    deck = loop.deck(None)
    return Pair(
        subject=_concurrent(loop, deck, CONCURRENT),
        baseline=_bare(loop, CONCURRENT, together=True),
        ops_per_call=CONCURRENT,
        collector=True,
    )


@bench("core: trivial @workflow runs/s, sequential, SQLite state", budget=2_000, unit="per_s")
def runs_sequential_sqlite() -> Pair:
    """deck.run() one after another, all state in SQLite, vs raw sqlite3 committing the same."""
    loop = _Loop()
    deck = loop.deck(_state_url("sqlite"))
    raw = _RawSqlite()
    return Pair(
        subject=_sequential(loop, deck, SEQUENTIAL_SQLITE),
        baseline=lambda: raw.runs(SEQUENTIAL_SQLITE, together=False),
        ops_per_call=SEQUENTIAL_SQLITE,
        collector=True,
    )


@bench("core: trivial @workflow runs/s, 100 concurrent, SQLite state", budget=2_000, unit="per_s")
def runs_concurrent_sqlite() -> Pair:
    """100 deck.run() gathered, all state in SQLite, vs raw sqlite3 with one commit per step."""
    loop = _Loop()
    deck = loop.deck(_state_url("sqlite"))
    raw = _RawSqlite()
    return Pair(
        subject=_concurrent(loop, deck, CONCURRENT),
        baseline=lambda: raw.runs(CONCURRENT, together=True),
        ops_per_call=CONCURRENT,
        collector=True,
    )


# =========================================================================== ask/answer cycle


def _finish_runs(loop: _Loop, deck: Deck, count: int) -> None:
    """``count`` finished runs of ``approval`` written straight to the deck's store (in batches
    of 500 at once, so durable stores group-commit them)."""
    store = deck.service.store
    invocable = deck.invocables["approval"]

    async def one() -> None:
        run_id = new_run_id()
        started = RunStarted(
            name="approval", invocable_kind="workflow", code_digest=invocable.code_digest
        )
        outcome = await store.open_run(NewRun(run_id=run_id, started=started))
        assert outcome.opened
        await store.append(run_id, [RunCompleted()])

    async def all_of_them() -> None:
        for start in range(0, count, 500):
            await asyncio.gather(*(one() for _ in range(min(500, count - start))))

    loop.run(all_of_them())


def _cycle(loop: _Loop, deck: Deck) -> Callable[[], None]:
    async def cycle() -> None:
        parked = await deck.run("approval", "invoice")
        run = await deck.runs.get(parked.run_id)
        await run.answer("yes")
        assert await run.result() == "invoice: yes"

    return lambda: loop.run(cycle())


def _ask_answer(backend: str) -> Pair:
    loop = _Loop()
    crowded, sparse = loop.deck(_state_url(backend)), loop.deck(_state_url(backend))
    _finish_runs(loop, crowded, FINISHED)
    _finish_runs(loop, sparse, 10)
    return Pair(subject=_cycle(loop, crowded), baseline=_cycle(loop, sparse))


@bench("core: ask/answer/complete, 10,000 finished runs stored vs 10, memory", budget=1.2)
def ask_answer_memory() -> Pair:
    """Start a workflow that asks, answer it, get its result: crowded store vs sparse one."""
    return _ask_answer("memory")


@bench("core: ask/answer/complete, 10,000 finished runs stored vs 10, SQLite", budget=1.2)
def ask_answer_sqlite() -> Pair:
    """Start a workflow that asks, answer it, get its result: crowded store vs sparse one."""
    return _ask_answer("sqlite")


@bench("core: ask/answer/complete, 10,000 finished runs stored vs 10, PostgreSQL", budget=1.2)
def ask_answer_postgres() -> Pair:
    """Start a workflow that asks, answer it, get its result: crowded store vs sparse one."""
    return _ask_answer("postgres")


@bench("core: ask/answer/complete, 10,000 finished runs stored vs 10, Redis", budget=1.2)
def ask_answer_redis() -> Pair:
    """Start a workflow that asks, answer it, get its result: crowded store vs sparse one."""
    return _ask_answer("redis")
