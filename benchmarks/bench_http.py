"""HTTP/SSE load test: run starts per minute and concurrent event streams, with zero lost events.

Not a ratio row of the harness (``python -m benchmarks`` imports this module and finds no row):
a bounded load test, run on its own against a server in a child process on 127.0.0.1::

    python -m benchmarks.bench_http            # full: 600 starts, 240 concurrent streams
    python -m benchmarks.bench_http --smoke    # tiny: proves it still works, checks no budget

The server serves a deck over ``Native.http()`` on the SQLite store (``AGENTDECK_STATE=
sqlite:///<tmp>/bench.db``) when agentdeck-stores is installed, else on the in-memory store (it
says which). ``AGENTDECK_STATE`` in the environment overrides the choice.

* **starts**: ``POST /runs`` of a one-step workflow, ``CONCURRENCY`` at a time, until ``STARTS``
  have been admitted; the rate is starts per minute over the wall time, and every run must then
  be listed as completed.
* **streams**: ``STREAMS`` runs of a workflow that reports ``TICKS`` times (paced, so the runs
  overlap), one SSE stream each, all open at once; one stream in ten drops its connection
  mid-run and resumes with ``Last-Event-ID``. Every stream's seqs must be exactly 0..last with
  no gap and no duplicate, ending at ``run.completed``.

Exits 1 when an event is lost or duplicated, a run does not complete, or (full mode) a budget is
missed: at least 500 starts per minute and 200 streams open at once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MIN_STARTS_PER_MINUTE = 500
MIN_CONCURRENT_STREAMS = 200
TIMEOUT = 300.0


# =========================================================================== the served deck


def _deck(state_url: str) -> Any:
    from agentdeck import Deck, WorkflowCtx, workflow
    from agentdeck.settings import Settings

    @workflow
    async def quick(value: Any = None) -> Any:
        return value

    @workflow
    async def ticker(ticks: int, pace: float, ctx: WorkflowCtx[Any]) -> int:
        for tick in range(ticks):
            await ctx.report("tick", n=tick)
            await asyncio.sleep(pace)  # the load's pacing, so that every run is live at once
        return ticks

    return Deck(
        workflows=[quick, ticker],
        observers=(),
        settings=Settings(env={"AGENTDECK_STATE": state_url}),
    )


async def _serve(state_url: str) -> None:
    from agentdeck.bindings import Native

    exposure = _deck(state_url).expose(Native.http(heartbeat=5.0))

    async def announce() -> None:
        (_host, port), *_ = await exposure.wait_listening()
        print(json.dumps({"port": port}), flush=True)

    announcing = asyncio.create_task(announce())
    await exposure.serve_async(port=0, log_level="warning", backlog=4096)
    announcing.cancel()


# =========================================================================== the load


@dataclass
class Stream:
    run_id: str
    seqs: list[int] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    reconnects: int = 0


class Gauge:
    """How many streams are open now, and the most that were open at once."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0

    def __enter__(self) -> Gauge:
        self.now += 1
        self.peak = max(self.peak, self.now)
        return self

    def __exit__(self, *_exc: object) -> None:
        self.now -= 1


async def _read(client: Any, stream: Stream, gauge: Gauge, *, drop_after: int | None) -> None:
    """Follow one run to its end, reconnecting with Last-Event-ID when told to drop."""
    headers: dict[str, str] = {}
    while True:
        dropped = False
        with gauge:
            async with client.stream(
                "GET", f"/runs/{stream.run_id}/events", headers=headers
            ) as response:
                if response.status_code == 204:
                    return
                response.raise_for_status()
                current: dict[str, str] = {}
                async for line in response.aiter_lines():
                    if line:
                        name, _, value = line.partition(":")
                        current[name] = value.strip()
                        continue
                    if "id" not in current:
                        current = {}
                        continue
                    stream.seqs.append(int(current["id"]))
                    stream.kinds.append(current.get("event", ""))
                    current = {}
                    if drop_after is not None and len(stream.seqs) == drop_after:
                        dropped = True
                        break
        if not dropped:
            return
        drop_after = None
        stream.reconnects += 1
        headers = {"Last-Event-ID": str(stream.seqs[-1])}


async def _starts(client: Any, count: int, concurrency: int) -> tuple[float, list[str]]:
    ids: list[str] = []
    pending = iter(range(count))

    async def worker() -> None:
        for _ in pending:
            response = await client.post("/runs", json={"name": "quick", "input": {"value": 1}})
            if response.status_code != 201:
                raise RuntimeError(f"start refused: {response.status_code} {response.text}")
            ids.append(response.json()["id"])

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - began, ids


async def _completed(client: Any, ids: list[str]) -> int:
    """How many of ``ids`` the server lists as completed (waiting for stragglers to finish)."""
    wanted = set(ids)
    deadline = time.monotonic() + TIMEOUT
    while True:
        done: set[str] = set()
        cursor = None
        while True:
            params: dict[str, Any] = {"status": "completed", "limit": 500}
            if cursor:
                params["cursor"] = cursor
            page = (await client.get("/runs", params=params)).json()
            done.update(run["id"] for run in page["runs"] if run["id"] in wanted)
            cursor = page["next_cursor"]
            if not cursor:
                break
        if done == wanted or time.monotonic() > deadline:
            return len(done)
        await asyncio.sleep(0.2)


async def _streams(
    client: Any, count: int, ticks: int, pace: float
) -> tuple[float, list[Stream], int]:
    gauge = Gauge()
    streams: list[Stream] = []
    began = time.perf_counter()

    async def one(index: int) -> None:
        response = await client.post(
            "/runs", json={"name": "ticker", "input": {"ticks": ticks, "pace": pace}}
        )
        response.raise_for_status()
        stream = Stream(run_id=response.json()["id"])
        streams.append(stream)
        drop = ticks // 2 if index % 10 == 0 else None
        await _read(client, stream, gauge, drop_after=drop)

    await asyncio.gather(*(one(i) for i in range(count)))
    return time.perf_counter() - began, streams, gauge.peak


def _gapless(stream: Stream) -> str | None:
    expected = list(range(len(stream.seqs)))
    if stream.seqs != expected:
        return f"run {stream.run_id}: seqs {stream.seqs[:5]}... are not 0..{len(expected) - 1}"
    if not stream.kinds or stream.kinds[-1] != "run.completed":
        return f"run {stream.run_id}: ended at {stream.kinds[-1:]} instead of run.completed"
    return None


async def _load(port: int, *, smoke: bool) -> list[str]:
    import httpx

    starts = 20 if smoke else 600
    concurrency = 4 if smoke else 32
    streams = 12 if smoke else 240
    ticks = 6 if smoke else 30
    pace = 0.05 if smoke else 0.25
    problems: list[str] = []
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", timeout=TIMEOUT, limits=limits
    ) as client:
        elapsed, ids = await _starts(client, starts, concurrency)
        per_minute = len(ids) / elapsed * 60
        completed = await _completed(client, ids)
        print(
            f"starts:  {len(ids)} runs in {elapsed:.2f}s = {per_minute:,.0f} starts/minute "
            f"({concurrency} at a time); completed: {completed}"
        )
        if completed != len(ids):
            problems.append(f"{len(ids) - completed} started runs did not complete")
        if not smoke and per_minute < MIN_STARTS_PER_MINUTE:
            problems.append(f"{per_minute:.0f} starts/minute < {MIN_STARTS_PER_MINUTE}")

        elapsed, followed, peak = await _streams(client, streams, ticks, pace)
        events = sum(len(s.seqs) for s in followed)
        reconnects = sum(s.reconnects for s in followed)
        broken = [p for p in (_gapless(s) for s in followed) if p is not None]
        print(
            f"streams: {len(followed)} runs followed, {peak} streams open at once, {events} "
            f"events in {elapsed:.2f}s ({events / elapsed:,.0f} events/s), {reconnects} "
            f"resumed with Last-Event-ID; lost or duplicated: {len(broken)} streams"
        )
        problems.extend(broken[:10])
        if not smoke and peak < MIN_CONCURRENT_STREAMS:
            problems.append(f"only {peak} streams were open at once (< {MIN_CONCURRENT_STREAMS})")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--smoke", action="store_true", help="a tiny run; no budget enforced")
    parser.add_argument("--serve", metavar="STATE_URL", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        asyncio.run(_serve(args.serve))
        return 0

    directory = Path(tempfile.mkdtemp(prefix="agentdeck-bench-http-"))
    state_url = os.environ.get("AGENTDECK_STATE", "")
    if not state_url:
        try:
            import agentdeck_stores  # noqa: F401
        except ImportError:
            state_url = "memory://"
            print("store:   memory:// (agentdeck-stores is not installed; no SQLite store)")
        else:
            state_url = f"sqlite:///{directory / 'bench.db'}"
    print(f"store:   {state_url}")
    server = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.bench_http", "--serve", state_url],
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = json.loads(server.stdout.readline())["port"]
        problems = asyncio.run(asyncio.wait_for(_load(port, smoke=args.smoke), TIMEOUT))
    finally:
        server.terminate()  # SIGTERM: the server drains and exits
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(directory, ignore_errors=True)
    for problem in problems:
        print(f"FAILED: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
