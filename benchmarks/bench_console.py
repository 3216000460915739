"""The operator console's first screen on a SQLite store of 10,000 runs: how long the server
takes to hand a browser everything ``/ui/`` needs before it can draw the runs table.

The deck is served in a child process (``Native.http()`` over uvicorn on 127.0.0.1, the
console on) so the client's work does not share the server's interpreter. One round fetches, in
a browser's order but one after another (a browser overlaps them, so this is the slow bound):
the HTML shell, its stylesheet and every ES module, ``/ui/session``, then the first page of
``GET /runs?order=newest&limit=50`` -- the request that reads the 10,000-run index. Beside it, the
baseline is one ``GET /health`` round trip on the same connection: what any request costs on
this machine at this moment. The value judged is the first screen's wall clock, in ms.

The store is filled once, straight through the store port (``open_run`` then ``run.completed``
for each run, 500 at a time so the writer group-commits them). Under ``--smoke`` it holds 1,000.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agentdeck.deck.deck import Deck
from agentdeck.model.payloads import RunCompleted, RunStarted
from agentdeck.ports import NewRun
from agentdeck.runtime.ids import new_run_id
from agentdeck.settings import Settings
from benchmarks import Probe, Sample, bench

SMOKE = "--smoke" in sys.argv
RUNS = 1_000 if SMOKE else 10_000
FIRST_PAGE = 50  # what runs.js asks for first
_DIRECTORY = Path(tempfile.mkdtemp(prefix="agentdeck-bench-console-"))
_SERVERS: list[subprocess.Popen[str]] = []


async def _fill(url: str, count: int) -> None:
    """``count`` finished runs in the store at ``url``, written through the store port."""
    deck = Deck(settings=Settings(env={"AGENTDECK_STATE": url}), observers=())
    async with deck:
        store = deck.service.store

        async def one(index: int) -> None:
            run_id = new_run_id()
            started = RunStarted(name=f"job-{index % 7}", invocable_kind="workflow")
            outcome = await store.open_run(NewRun(run_id=run_id, started=started))
            assert outcome.opened
            await store.append(run_id, [RunCompleted()])

        for start in range(0, count, 500):
            await asyncio.gather(*(one(i) for i in range(start, min(start + 500, count))))


async def _serve(url: str) -> None:
    from agentdeck.bindings import Native

    deck = Deck(settings=Settings(env={"AGENTDECK_STATE": url}), observers=())
    exposure = deck.expose(Native.http(console=True))

    async def announce() -> None:
        (_host, port), *_ = await exposure.wait_listening()
        print(json.dumps({"port": port}), flush=True)

    announcing = asyncio.create_task(announce())
    await exposure.serve_async(port=0, log_level="warning")
    announcing.cancel()


def _start_server(url: str) -> str:
    server = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.bench_console", "--serve", url],
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.PIPE,
        text=True,
    )
    _SERVERS.append(server)
    assert server.stdout is not None
    return f"http://127.0.0.1:{json.loads(server.stdout.readline())['port']}"


def _static_names(client: Any) -> list[str]:
    """Every file the shell's module graph loads: the stylesheet, app.js and its imports."""
    import re

    names = ["console.css", "app.js"]
    pending = ["app.js"]
    while pending:
        source = client.get(f"/ui/static/{pending.pop()}").text
        for name in re.findall(r'from "\./([\w-]+\.js)"', source):
            if name not in names:
                names.append(name)
                pending.append(name)
    return names


@bench(
    "console: /ui/ first screen (shell, assets, first GET /runs page), SQLite 10,000 runs",
    budget=300.0,
    unit="ms",
)
def console_first_screen() -> Probe:
    """Shell + CSS + ES modules + /ui/session + the newest 50 runs, served over loopback."""
    import httpx

    url = f"sqlite:///{_DIRECTORY / 'state.db'}"
    asyncio.run(_fill(url, RUNS))
    client = httpx.Client(base_url=_start_server(url), timeout=30.0)
    assets = _static_names(client)
    shown = client.get("/runs", params={"order": "newest", "limit": FIRST_PAGE}).json()["runs"]
    assert len(shown) == FIRST_PAGE, "the store was not filled"

    def first_screen() -> None:
        for path in ("/ui/", *(f"/ui/static/{name}" for name in assets), "/ui/session"):
            client.get(path).raise_for_status()
        page = client.get("/runs", params={"order": "newest", "limit": FIRST_PAGE})
        assert len(page.json()["runs"]) == FIRST_PAGE

    def one_round() -> Sample:
        start = time.perf_counter()
        first_screen()
        subject = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        client.get("/health").raise_for_status()
        baseline = (time.perf_counter() - start) * 1000
        return Sample(value=subject, subject=subject, baseline=baseline)

    return Probe(round=one_round, side_unit="ms")


def _cleanup() -> None:
    for server in _SERVERS:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
    shutil.rmtree(_DIRECTORY, ignore_errors=True)


atexit.register(_cleanup)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="serve a deck for the console row")
    parser.add_argument("--serve", metavar="STATE_URL", required=True)
    asyncio.run(_serve(parser.parse_args().serve))
