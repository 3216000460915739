"""Memory store rows: the in-process store against plain Python lists doing the same writes.

The memory store's "driver" is a list per run, so the baselines are list operations on events
built up front: a ratio is what the store adds (payload checks, the status fold, envelopes,
indexes, the lock), and the absolute rows are the issue's budgets -- appends per second with
100 runs appending at once (``per_s``) and microseconds per event reading a 10,000-event run
back (``us_op``). Each row runs its coroutines on an event loop of its own.

Under ``--smoke`` the populations are scaled down (1,000 runs instead of 10,000 to list among, a
1,000-event run to read back) so that every row still runs, quickly; the budgets hold for full
runs.
"""

from __future__ import annotations

import asyncio
import atexit
import sys
from collections.abc import Awaitable, Callable
from typing import TypeVar

from agentdeck.memory.store import MemoryEventStore
from agentdeck.model.clock import SystemClock
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunInterrupted, TextDelta
from agentdeck.ports import RunQuery
from agentdeck.testing import new_run
from agentdeck.vocabulary import RunStatus
from benchmarks import Pair, bench

_T = TypeVar("_T")

SMOKE = "--smoke" in sys.argv
CROWD = 1_000 if SMOKE else 10_000
READ_BACK = 1_000 if SMOKE else 10_000
_PAYLOAD = TextDelta(message_id="m1", text="a token or two of model output")
_LOOPS: list[asyncio.AbstractEventLoop] = []


def _loop() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    _LOOPS.append(loop)
    return loop


def _close_loops() -> None:
    for loop in _LOOPS:
        loop.close()


atexit.register(_close_loops)


def _runner(loop: asyncio.AbstractEventLoop) -> Callable[[Awaitable[_T]], _T]:
    def run(awaitable: Awaitable[_T]) -> _T:
        async def wrapped() -> _T:
            return await awaitable

        return loop.run_until_complete(wrapped())

    return run


def _open_runs(
    store: MemoryEventStore, run: Callable[[Awaitable[list[str]]], list[str]], count: int
) -> list[str]:
    async def opens() -> list[str]:
        outcomes = [await store.open_run(new_run()) for _ in range(count)]
        return [outcome.event.run_id for outcome in outcomes if outcome.event is not None]

    return run(opens())


def _event(seq: int) -> Event:
    return Event.record(_PAYLOAD, seq=seq, run_id="run-raw", ts=SystemClock().now())


@bench(
    "memory store: appends/s, 100 runs appending at once (vs list.append)",
    budget=100_000,
    unit="per_s",
)
def concurrent_appends() -> Pair:
    """100 runs each append one event, concurrently, vs appending a built event to 100 lists."""
    loop = _loop()
    run = _runner(loop)
    store = MemoryEventStore()
    runs = _open_runs(store, run, 100)
    lists: list[list[Event]] = [[] for _ in range(100)]
    event = _event(1)

    async def subject() -> None:
        await asyncio.gather(*(store.append(run_id, [_PAYLOAD]) for run_id in runs))

    def baseline() -> None:
        for log in lists:
            log.append(event)

    return Pair(subject=lambda: run(subject()), baseline=baseline, ops_per_call=100)


@bench("memory store: append latency at 9,000+ events vs at under 1,000", budget=1.5)
def append_latency_flat() -> Pair:
    """An append to a run 9,000+ events long vs one to a run under 1,000 (flat as it grows)."""
    loop = _loop()
    run = _runner(loop)
    store = MemoryEventStore()
    (late,) = _open_runs(store, run, 1)
    for _ in range(9):
        run(store.append(late, [_PAYLOAD] * 1_000))
    early: list[str] = []
    appended = [0]

    def append_early() -> None:
        if not early or appended[0] >= 1_000:  # stay within a run's first 1,000 events
            early[:] = _open_runs(store, run, 1)
            appended[0] = 0
        appended[0] += 1
        run(store.append(early[0], [_PAYLOAD]))

    return Pair(subject=lambda: run(store.append(late, [_PAYLOAD])), baseline=append_early)


@bench("memory store: list(status=WAITING_ANSWER), 10 among 10,000 vs among 100", budget=1.5)
def list_waiting() -> Pair:
    """Listing the 10 waiting runs among 10,000 vs among 100: answered by the status index."""
    loop = _loop()
    run = _runner(loop)

    def crowd(total: int) -> MemoryEventStore:
        store = MemoryEventStore()
        runs = _open_runs(store, run, total)
        for run_id in runs[:: total // 10]:
            run(store.append(run_id, [RunInterrupted(interrupt_id="q")]))
        return store

    crowded, sparse = crowd(CROWD), crowd(100)
    query = RunQuery(status=RunStatus.WAITING_ANSWER, limit=100)

    def listing(store: MemoryEventStore) -> Callable[[], object]:
        def list_once() -> object:
            page = run(store.list_runs(query))
            assert len(page.runs) == 10, len(page.runs)
            return page

        return list_once

    return Pair(subject=listing(crowded), baseline=listing(sparse))


@bench(
    "memory store: read a 10,000-event run back, per event (vs a list copy)",
    budget=10.0,
    unit="us_op",
)
def read_run() -> Pair:
    """A 10,000-event run read back vs copying a list of as many built events."""
    loop = _loop()
    run = _runner(loop)
    store = MemoryEventStore()
    (run_id,) = _open_runs(store, run, 1)
    for start in range(1, READ_BACK, 1_000):  # one seq 0 (run.started) and READ_BACK - 1 more
        run(store.append(run_id, [_PAYLOAD] * min(1_000, READ_BACK - start)))
    events = [_event(seq) for seq in range(READ_BACK)]

    def subject() -> object:
        read = run(store.read(run_id))
        assert len(read) == READ_BACK, len(read)
        return read

    return Pair(subject=subject, baseline=lambda: list(events), ops_per_call=READ_BACK)
