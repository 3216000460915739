"""SIGKILL at a random moment of a run's life, and right after a reported success.

Each trial starts a worker process (``deck_worker.py``) that plays one turn of ``ticking`` on
its own session, and kills it with ``SIGKILL`` after a random delay -- before ``run.started``,
between it and the lease, mid-run, or after the end -- or right after the worker reported the
turn's result. A deck in this process, open all along, is the survivor. After every kill:

* no run is left ``running``: the survivor's sweep closes a dead worker's run within one lease
  TTL and one sweep interval (plus slack for this machine);
* the session takes a new turn;
* the log is gapless, and a turn the worker reported finished reads ``completed`` (nothing
  acknowledged is lost).

Trial counts come from ``AGENTDECK_CHAOS_KILL_TRIALS`` (default below) and the random seed
from ``AGENTDECK_CHAOS_SEED``; the figures are printed (``pytest -s``) for the closing note.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections import Counter

from support import LEASE_TTL, SLACK, SWEEP_INTERVAL, deck_on, eventually, spawn, trials

from agentdeck import Run, RunStatus
from agentdeck.model.payloads import RunFailed
from agentdeck.testing.processes import JsonLinesWorker, start_all

KILLS = trials("kill_trials", 8)
TICKS = 100
"""Progress events per turn: a run of a few hundred milliseconds, killed anywhere in it."""
LATEST_KILL = 0.5
"""Seconds: random kills fall between 0 and this, some of them after the turn ended."""


async def test_sigkill_at_a_random_moment_leaves_no_run_running(durable_url: str) -> None:
    seed = int(os.environ.get("AGENTDECK_CHAOS_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    outcomes: Counter[str] = Counter()
    lost = 0
    slowest_close = 0.0
    bound = LEASE_TTL + SWEEP_INTERVAL
    spawned: list[JsonLinesWorker] = []
    try:
        async with deck_on(durable_url) as deck:  # the survivor, sweeping all along
            upcoming = spawn(durable_url)  # each worker starts while the trial before it runs
            spawned.append(upcoming)
            for trial in range(KILLS):
                session = f"killed-{trial}"
                worker = upcoming
                if trial + 1 < KILLS:
                    upcoming = spawn(durable_url)
                    spawned.append(upcoming)
                await asyncio.to_thread(start_all, [worker])
                after_success = trial % 4 == 3
                try:
                    worker.send(op="turn", name="ticking", input={"count": TICKS}, session=session)
                    if after_success:
                        reply = await asyncio.to_thread(worker.reply)
                        assert reply == {"returned": str(TICKS)}, reply
                    else:
                        await asyncio.sleep(rng.uniform(0, LATEST_KILL))
                    worker.kill()
                    killed_at = time.monotonic()
                    replies = [] if after_success else await asyncio.to_thread(worker.remaining)
                finally:
                    worker.stop()
                reported = after_success or {"returned": str(TICKS)} in replies
                runs = await deck.runs.list(session_id=session)
                if not runs:
                    outcomes["killed before run.started"] += 1
                    assert not reported
                else:
                    [run] = runs

                    async def ended(handle: Run = run) -> RunStatus | None:
                        status = await handle.status()
                        return None if status is RunStatus.RUNNING else status

                    status, _ = await eventually(ended, within=bound + SLACK)
                    closed_after = time.monotonic() - killed_at
                    events = [event async for event in run.events()]
                    assert [e.seq for e in events] == list(range(len(events))), "gap in the log"
                    if reported and status is not RunStatus.COMPLETED:
                        lost += 1
                    if status is RunStatus.COMPLETED:
                        outcomes["completed (reported)" if reported else "completed"] += 1
                    else:
                        ending = events[-1].payload
                        assert isinstance(ending, RunFailed), ending
                        assert ending.error_code == "lease_expired", ending
                        outcomes["closed by the sweep"] += 1
                        slowest_close = max(slowest_close, closed_after)
                # The session is free again.
                assert await deck.run("ticking", {"count": 1}, session_id=session) == 1
    finally:
        for leftover in spawned:
            leftover.stop()
    assert lost == 0
    store = durable_url.split(":", 1)[0]
    figures = ", ".join(f"{name}: {count}" for name, count in sorted(outcomes.items()) if count)
    print(
        f"\n[chaos] SIGKILL on {store} (seed {seed}): {KILLS} trials ({figures}); "
        f"0 left running, {lost} lost; slowest close {slowest_close:.2f} s after the kill "
        f"(bound {bound:g} s + slack)"
    )
