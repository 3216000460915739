"""Redis store rows: the store against redis-py doing the same round trips bare, in one process.

Each row runs on its own event loop against the local server (``AGENTDECK_TEST_REDIS_URL``, else
``redis://127.0.0.1:6379/0``) under a key prefix of its own; every key written under the
benchmark's prefixes is deleted when the process exits. Baselines write comparable bytes (the
same event JSON, serialized once up front) with the same number of round trips, so a ratio is
what the store adds on top of the driver: folding, envelopes, JSON, the Lua checks and indexes.

The issue's absolute budgets are rows of their own: appends per second with 100 runs appending
at once (``per_s``, the raw pipeline's rate beside it) and microseconds per event reading a
10,000-event run back (``us_op``, beside a raw ``XRANGE`` with each entry ``json.loads``-ed).

Under ``--smoke`` the populations are scaled down (1,000 runs instead of 10,000 to list among, a
1,000-event run to read back) so that every row still runs, quickly; the budgets hold for full
runs.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import itertools
import json
import os
import secrets
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis
import redis.asyncio as aioredis

from agentdeck.model.clock import SystemClock
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunCompleted, RunInterrupted, TextDelta
from agentdeck.ports import BackendRequest, RunQuery
from agentdeck.testing import new_run
from agentdeck.vocabulary import RunStatus
from agentdeck_stores.redisstore import RedisEventStore
from benchmarks import Pair, bench

_T = TypeVar("_T")

SMOKE = "--smoke" in sys.argv
CROWD = 1_000 if SMOKE else 10_000
READ_BACK = 1_000 if SMOKE else 10_000
SERVER = os.environ.get("AGENTDECK_TEST_REDIS_URL") or "redis://127.0.0.1:6379/0"
_BENCH_PREFIX = f"adk_bench_{secrets.token_hex(4)}"
_prefixes = itertools.count()
_PAYLOAD = TextDelta(message_id="m1", text="a token or two of model output")


def _cleanup() -> None:
    client = redis.Redis.from_url(SERVER)
    try:
        batch: list[Any] = []
        for key in client.scan_iter(match=f"{_BENCH_PREFIX}*", count=1000):
            batch.append(key)
            if len(batch) >= 1000:
                client.delete(*batch)
                batch.clear()
        if batch:
            client.delete(*batch)
    except redis.RedisError:
        pass
    finally:
        client.close()


atexit.register(_cleanup)


class _Loop:
    """One event loop per row; each timed call runs one coroutine to completion on it.

    What a row opens on it (stores, clients, follower tasks) is closed when the process exits.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.tasks: list[asyncio.Task[None]] = []
        self.closers: list[Callable[[], Awaitable[object]]] = []
        _LOOPS.append(self)

    def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        if self.tasks:
            self.run(asyncio.gather(*self.tasks, return_exceptions=True))
        for closer in self.closers:
            with contextlib.suppress(Exception):
                self.run(closer())
        self.loop.close()

    def run(self, awaitable: Awaitable[_T]) -> _T:
        async def wrapped() -> _T:
            return await awaitable

        return self.loop.run_until_complete(wrapped())

    def store(self) -> RedisEventStore:
        prefix = f"{_BENCH_PREFIX}_{next(_prefixes)}:"
        store = RedisEventStore.from_request(BackendRequest(url=f"{SERVER}?prefix={prefix}"))
        self.run(store.open())
        self.closers.append(store.close)
        return store

    def raw(self, **options: Any) -> aioredis.Redis:
        client = aioredis.Redis.from_url(SERVER, **options)
        self.closers.append(client.aclose)
        return client


_LOOPS: list[_Loop] = []


def _close_loops() -> None:
    for loop in _LOOPS:
        loop.close()


atexit.register(_close_loops)  # runs before _cleanup (registered earlier), so keys go last


def _open_runs(loop: _Loop, store: RedisEventStore, count: int) -> list[str]:
    async def opens() -> list[str]:
        ids: list[str] = []
        for start in range(0, count, 500):
            outcomes = await asyncio.gather(
                *(store.open_run(new_run()) for _ in range(min(500, count - start)))
            )
            ids.extend(outcome.event.run_id for outcome in outcomes if outcome.event)
        return ids

    return loop.run(opens())


def _event_json(seq: int) -> str:
    return Event.record(_PAYLOAD, seq=seq, run_id="run-raw", ts=SystemClock().now()).to_json()


def _stream_entries(reply: Any) -> list[Any]:
    """The entries of an ``XREAD`` reply for one stream (a RESP3 map or a RESP2 list)."""
    if isinstance(reply, dict):
        return [entry for entries in reply.values() for entry in entries[0]]
    return [entry for _, entries in reply or [] for entry in entries]


# =========================================================================== appends


@bench(
    "redis store: appends/s, 100 runs appending at once (vs raw redis-py pipeline)",
    budget=10_000,
    unit="per_s",
)
def concurrent_appends() -> Pair:
    """100 runs each append one event (one call) vs a raw XADD+HSET pipeline for 100 streams."""
    loop = _Loop()
    store = loop.store()
    runs = _open_runs(loop, store, 100)
    raw = loop.raw()
    prefix = f"{_BENCH_PREFIX}_raw{next(_prefixes)}:"
    event = _event_json(1)
    seqs = itertools.count(1)

    async def subject() -> None:
        await asyncio.gather(*(store.append(run_id, [_PAYLOAD]) for run_id in runs))

    async def baseline() -> None:
        n = next(seqs)
        pipe = raw.pipeline(transaction=False)
        for i in range(100):
            pipe.xadd(f"{prefix}log:{i}", {"e": event}, id=f"{n}-1")
            pipe.hset(f"{prefix}run:{i}", mapping={"last_seq": n, "status": "running"})
        await pipe.execute()

    return Pair(
        subject=lambda: loop.run(subject()),
        baseline=lambda: loop.run(baseline()),
        ops_per_call=100,
    )


@bench("redis store: one run appending vs a raw round trip", budget=3.0)
def sequential_appends() -> Pair:
    """One append to one run (a whole round trip each) vs a raw XADD+HSET pipeline."""
    loop = _Loop()
    store = loop.store()
    (run_id,) = _open_runs(loop, store, 1)
    raw = loop.raw()
    key = f"{_BENCH_PREFIX}_raw{next(_prefixes)}:"
    event = _event_json(1)
    seqs = itertools.count(1)

    async def baseline() -> None:
        n = next(seqs)
        pipe = raw.pipeline(transaction=False)
        pipe.xadd(f"{key}log", {"e": event}, id=f"{n}-1")
        pipe.hset(f"{key}run", mapping={"last_seq": n, "status": "running"})
        await pipe.execute()

    return Pair(
        subject=lambda: loop.run(store.append(run_id, [_PAYLOAD])),
        baseline=lambda: loop.run(baseline()),
    )


@bench("redis store: append latency at 9,000+ events vs at under 1,000", budget=1.5)
def append_latency_flat() -> Pair:
    """An append to a run 9,000+ events long vs one to a run under 1,000 (flat as a run grows)."""
    loop = _Loop()
    store = loop.store()
    (late,) = _open_runs(loop, store, 1)

    async def grow(run_id: str, events: int) -> None:
        for _ in range(events // 100):
            await store.append(run_id, [_PAYLOAD] * 100)

    loop.run(grow(late, 9_000))
    early: list[str] = []
    appended = [0]

    def append_early() -> None:
        if not early or appended[0] >= 1_000:
            early[:] = _open_runs(loop, store, 1)
            appended[0] = 0
        appended[0] += 1
        loop.run(store.append(early[0], [_PAYLOAD]))

    return Pair(subject=lambda: loop.run(store.append(late, [_PAYLOAD])), baseline=append_early)


@bench("redis store: a turn on a session with 1,000 earlier turns vs on a new one", budget=1.5)
def turn_on_long_session() -> Pair:
    """Open and finish a run on a session with 1,000+ earlier turns vs on a fresh session."""
    loop = _Loop()
    store = loop.store()
    fresh = itertools.count()

    async def turn(session_id: str) -> None:
        outcome = await store.open_run(new_run(session_id=session_id))
        assert outcome.event is not None, outcome
        await store.append(outcome.event.run_id, [RunCompleted()])

    async def history() -> None:
        for _ in range(1_000):
            await turn("long")

    loop.run(history())
    return Pair(
        subject=lambda: loop.run(turn("long")),
        baseline=lambda: loop.run(turn(f"new-{next(fresh)}")),
    )


# =========================================================================== listing, reading


def _crowd(loop: _Loop, total: int, waiting: int) -> RedisEventStore:
    store = loop.store()
    runs = _open_runs(loop, store, total)
    step = total // waiting

    async def park() -> None:
        await asyncio.gather(
            *(store.append(run_id, [RunInterrupted(interrupt_id="q")]) for run_id in runs[::step])
        )

    loop.run(park())
    return store


@bench("redis store: list(status=WAITING_ANSWER), 10 among 10,000 vs among 100", budget=1.5)
def list_waiting() -> Pair:
    """Listing the 10 waiting runs among 10,000 vs among 100: answered from the status index."""
    loop = _Loop()
    crowded, sparse = _crowd(loop, CROWD, 10), _crowd(loop, 100, 10)
    query = RunQuery(status=RunStatus.WAITING_ANSWER, limit=100)

    def listing(store: RedisEventStore) -> Callable[[], object]:
        def run() -> object:
            page = loop.run(store.list_runs(query))
            assert len(page.runs) == 10, len(page.runs)
            return page

        return run

    return Pair(subject=listing(crowded), baseline=listing(sparse))


@bench(
    "redis store: read a 10,000-event run back, per event (vs raw XRANGE + json.loads)",
    budget=10.0,
    unit="us_op",
)
def read_run() -> Pair:
    """A 10,000-event run read back as Events vs a raw XRANGE + json.loads of each entry."""
    loop = _Loop()
    store = loop.store()
    (run_id,) = _open_runs(loop, store, 1)
    for start in range(1, READ_BACK, 1_000):  # one seq 0 (run.started) and READ_BACK - 1 more
        loop.run(store.append(run_id, [_PAYLOAD] * min(1_000, READ_BACK - start)))
    raw = loop.raw()
    log = f"{store.prefix}log:{run_id}"

    def subject() -> object:
        events = loop.run(store.read(run_id))
        assert len(events) == READ_BACK, len(events)
        return events

    async def baseline() -> object:
        entries: Any = await raw.xrange(log, "-", "+")
        return [json.loads(fields[b"e"]) for _, fields in entries]

    return Pair(subject=subject, baseline=lambda: loop.run(baseline()), ops_per_call=READ_BACK)


# =========================================================================== following


@bench("redis store: follow latency (append -> follower) vs raw XADD -> XREAD", budget=3.0)
def follow_latency() -> Pair:
    """Append one event and wait until a follower has it vs a raw XADD seen by a raw XREAD."""
    loop = _Loop()
    store = loop.store()
    (run_id,) = _open_runs(loop, store, 1)
    seen: asyncio.Queue[object] = asyncio.Queue()
    raw_seen: asyncio.Queue[object] = asyncio.Queue()
    raw, reader = loop.raw(), loop.raw(socket_timeout=None)
    stream = f"{_BENCH_PREFIX}_raw{next(_prefixes)}:log"
    event = _event_json(1)
    seqs = itertools.count(1)

    async def follow() -> None:
        async for followed in store.follow(run_id, from_seq=1):
            seen.put_nowait(followed)

    async def raw_follow() -> None:
        last: Any = "0-0"
        while True:
            reply: Any = await reader.xread({stream: last}, count=100, block=0)
            for entry in _stream_entries(reply):
                last = entry[0]
                raw_seen.put_nowait(entry)

    loop.tasks += [loop.loop.create_task(follow()), loop.loop.create_task(raw_follow())]

    async def subject() -> None:
        await store.append(run_id, [_PAYLOAD])
        await seen.get()

    async def baseline() -> None:
        await raw.xadd(stream, {"e": event}, id=f"{next(seqs)}-1")
        await raw_seen.get()

    return Pair(subject=lambda: loop.run(subject()), baseline=lambda: loop.run(baseline()))
