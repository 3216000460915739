"""SIGKILL a worker holding many runs, each at its own moment of its life.

One worker process starts ``BATCH_RUNS`` turns of ``ticking`` spread over ``SPREAD`` seconds,
each on its own session and of its own random length, and is killed with ``SIGKILL`` at a
random moment. At that moment its runs stand everywhere a run can stand: not yet started,
recorded but not yet leased, mid-run between safe points, just ended, ended and reported. A
deck in this process, open all along, is the survivor. After the kill:

* no run is left ``running``: every one is closed (``lease_expired``) or completed within one
  lease TTL and one sweep interval of the kill (plus slack for this machine);
* every session takes a new turn;
* every log is gapless, and every turn the worker reported finished reads ``completed``
  (nothing acknowledged is lost).

This is the acceptance count of the failure-paths issue (200 runs per durable store) at the
cost of one worker per store; ``AGENTDECK_CHAOS_BATCH_RUNS`` changes it and
``AGENTDECK_CHAOS_SEED`` fixes the random lengths and the moment of the kill.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections import Counter

from support import LEASE_TTL, SLACK, SWEEP_INTERVAL, deck_on, spawn, trials

from agentdeck import RunStatus
from agentdeck.model.payloads import RunFailed
from agentdeck.testing.processes import start_all

BATCH_RUNS = trials("batch_runs", 200)
LONGEST = 150
"""Ticks of the longest turn (a tick is a progress event, a safe point and 2 ms of sleep)."""
SPREAD = 1.5
"""Seconds over which the worker starts its turns, so that some have not started at the kill."""
EARLIEST_KILL, LATEST_KILL = 0.5, 1.5
"""Seconds after the worker was given the turns: when the kill falls."""


async def test_sigkill_of_a_worker_holding_many_runs_leaves_none_running(
    durable_url: str,
) -> None:
    seed = int(os.environ.get("AGENTDECK_CHAOS_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    sessions = [f"batch-{index}" for index in range(BATCH_RUNS)]
    turns = [
        {"session": s, "input": {"count": rng.randint(1, LONGEST)}, "delay": rng.uniform(0, SPREAD)}
        for s in sessions
    ]
    bound = LEASE_TTL + SWEEP_INTERVAL
    async with deck_on(durable_url) as deck:  # the survivor, sweeping all along
        worker = spawn(durable_url)
        try:
            await asyncio.to_thread(start_all, [worker])
            assert worker.ask(op="many", name="ticking", turns=turns) == {"started": BATCH_RUNS}
            await asyncio.sleep(rng.uniform(EARLIEST_KILL, LATEST_KILL))
            worker.kill()
            killed_at = time.monotonic()
            lines = await asyncio.to_thread(worker.remaining)
        finally:
            worker.stop()
        reported = {line["finished"] for line in lines if "returned" in line}

        # Every run of the batch ends, within the bound, with nobody left to end it but the
        # survivor's sweep.
        deadline = killed_at + bound + SLACK
        batch = set(sessions)
        while running := [
            run for run in await deck.runs.list(status=RunStatus.RUNNING) if run.session_id in batch
        ]:
            assert time.monotonic() < deadline, (
                f"{len(running)} runs still running {bound + SLACK:g} s after the kill "
                f"(seed {seed})"
            )
            await asyncio.sleep(0.1)
        closed_after = time.monotonic() - killed_at
        runs = [run for run in await deck.runs.list() if run.session_id in batch]
        statuses = [await run.status() for run in runs]

        outcomes: Counter[str] = Counter()
        lost: list[str] = []
        pairs = zip(runs, statuses, strict=True)
        by_session = {run.session_id: (run, status) for run, status in pairs}
        for session in sessions:
            if session not in by_session:
                assert session not in reported
                outcomes["killed before run.started"] += 1
                continue
            run, status = by_session[session]
            events = [event async for event in run.events()]
            assert [e.seq for e in events] == list(range(len(events))), f"gap in {run.id}"
            if status is RunStatus.COMPLETED:
                outcomes["completed, reported" if session in reported else "completed"] += 1
                continue
            if session in reported:
                lost.append(run.id)
            ending = events[-1].payload
            assert isinstance(ending, RunFailed), (run.id, ending)
            assert ending.error_code == "lease_expired", (run.id, ending)
            outcomes["closed by the sweep"] += 1
        assert not lost, f"turns reported finished but not completed: {lost} (seed {seed})"

        # Every session is free again: a new turn plays on each.
        async def one_more(session: str) -> int:
            return await deck.run("ticking", {"count": 1}, session_id=session)

        assert await asyncio.gather(*(one_more(s) for s in sessions)) == [1] * BATCH_RUNS

    store = durable_url.split(":", 1)[0]
    figures = ", ".join(f"{name}: {count}" for name, count in sorted(outcomes.items()))
    print(
        f"\n[chaos] SIGKILL of a worker holding {BATCH_RUNS} runs on {store} (seed {seed}): "
        f"{figures}; 0 left running, {len(lost)} lost; all closed {closed_after:.2f} s after "
        f"the kill (bound {bound:g} s + slack)"
    )
