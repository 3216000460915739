"""The ``agentdeck`` command's start-up: how long a user waits for ``--help`` and for
``runs list --json`` on a SQLite store of 10,000 runs, wall clock, every plugin installed.

Each round starts the command as a fresh process (``python -m agentdeck ...`` with this
interpreter, so the environment benchmarked is the one every plugin is installed in) and, beside
it, the bare interpreter (``python -c pass``): the baseline shows what no command can go below on
this machine at this moment. The value judged is the command's own wall clock, in milliseconds.

The store is filled once, straight through the store port (``open_run`` then ``run.completed``
for each run, 500 at a time so the writer group-commits them). ``runs list`` shows the newest
100 of them, as it does by default. Under ``--smoke`` the store holds 1,000 runs.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentdeck.deck.deck import Deck
from agentdeck.model.payloads import RunCompleted, RunStarted
from agentdeck.ports import NewRun
from agentdeck.runtime.ids import new_run_id
from agentdeck.settings import CoreSettings, Settings
from benchmarks import Probe, Sample, bench

SMOKE = "--smoke" in sys.argv
RUNS = 1_000 if SMOKE else 10_000
_DIRECTORY = Path(tempfile.mkdtemp(prefix="agentdeck-bench-cli-"))


def _wall_ms(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1000


def _probe(arguments: list[str], env: dict[str, str]) -> Probe:
    command = [sys.executable, "-m", "agentdeck", *arguments]
    bare = [sys.executable, "-c", "pass"]
    _wall_ms(command, env)  # warm the file cache and the bytecode once, as a second call would

    def one_round() -> Sample:
        subject = _wall_ms(command, env)
        baseline = _wall_ms(bare, env)
        return Sample(value=subject, subject=subject, baseline=baseline)

    return Probe(round=one_round, side_unit="ms")


def _environment(**extra: str) -> dict[str, str]:
    # Bytecode is written and read as in a user's installation (pip compiles it): a
    # PYTHONDONTWRITEBYTECODE set for the test runs would time the compiler instead.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("AGENTDECK_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(extra)
    return env


async def _fill(url: str, count: int) -> None:
    """``count`` finished runs in the store at ``url``, written through the store port."""
    deck = Deck(
        settings=Settings.load(overrides={CoreSettings.section: {"state": url}}), observers=()
    )
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


@bench("cli: agentdeck --help, wall clock", budget=150.0, unit="ms")
def cli_help() -> Probe:
    """``python -m agentdeck --help`` as a fresh process (beside it: ``python -c pass``)."""
    return _probe(["--help"], _environment())


@bench(
    "cli: agentdeck runs list --json, SQLite store of 10,000 runs, wall clock",
    budget=300.0,
    unit="ms",
)
def cli_runs_list() -> Probe:
    """``runs list --json`` (the newest 100) on a SQLite file holding 10,000 finished runs."""
    url = f"sqlite:///{_DIRECTORY / 'state.db'}"
    asyncio.run(_fill(url, RUNS))
    return _probe(["runs", "list", "--json"], _environment(AGENTDECK_STATE=url))


def _cleanup() -> None:
    shutil.rmtree(_DIRECTORY, ignore_errors=True)


atexit.register(_cleanup)
