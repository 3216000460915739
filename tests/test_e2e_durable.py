"""Runs that outlive the process that started them, on a durable store shared by processes.

Each test starts real worker processes (``python -c``) that open a Deck on the same SQLite
state file; nothing is shared but that file (and, for the agent test, the loopback model server
this process runs).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

WORKFLOWS = """
import asyncio
import os

from agentdeck import WorkflowCtx, workflow


def bump(label: str) -> str:
    with open(os.environ["STEP_LOG"], "a") as log:
        log.write(label + "\\n")
    return label


@workflow
async def approval(order_id: str, ctx: WorkflowCtx) -> dict:
    before = await ctx.step("before", bump, "before")
    answer = await ctx.ask({"order": order_id}, options=["yes", "no"])
    after = await ctx.step("after", bump, "after")
    return {"answer": answer, "before": before, "after": after}


@workflow
async def ticking(ctx: WorkflowCtx) -> None:
    for i in range(100_000):
        await ctx.report(f"tick {i}")
        await asyncio.sleep(0.002)
"""

PRELUDE = """
import asyncio, json, sys, warnings
sys.path.insert(0, {path!r})
warnings.simplefilter("ignore")
from agentdeck import Deck, RunStatus, RunSuspendedError
from agentdeck.settings import Settings
from durable_workflows import approval, ticking

def deck():
    return Deck(workflows=[approval, ticking], settings=Settings.load(), observers=())
"""


def worker(tmp_path: Path, body: str, env: dict[str, str], **popen: Any) -> Any:
    code = PRELUDE.format(path=str(tmp_path)) + textwrap.dedent(body)
    return subprocess.Popen(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def run_worker(tmp_path: Path, body: str, env: dict[str, str]) -> str:
    process = worker(tmp_path, body, env)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    return out


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "durable_workflows.py").write_text(WORKFLOWS)
    return {
        "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}",
        "STEP_LOG": str(tmp_path / "steps.log"),
        "AGENTDECK_RUNTIME_LEASE_TTL_SECONDS": "1",
        "AGENTDECK_RUNTIME_SWEEP_INTERVAL_SECONDS": "0.2",
    }


def test_a_workflow_parked_in_one_process_is_answered_from_a_fresh_one(
    tmp_path: Path, env: dict[str, str]
) -> None:
    started = run_worker(
        tmp_path,
        """
        async def main():
            async with deck() as d:
                run = await d.runs.start("approval", {"order_id": "A-1"}, key="order-A-1")
                try:
                    await run
                except RunSuspendedError as parked:
                    print(run.id, parked.status.value)
        asyncio.run(main())
        """,
        env,
    )
    run_id, status = started.split()
    assert status == "waiting_answer"

    finished = run_worker(
        tmp_path,
        """
        async def main():
            async with deck() as d:
                [waiting] = await d.runs.list(status=RunStatus.WAITING_ANSWER)
                await waiting.answer("yes")
                print(json.dumps({"id": waiting.id, "result": await waiting}))
        asyncio.run(main())
        """,
        env,
    )
    outcome = json.loads(finished)
    assert outcome["id"] == run_id
    assert outcome["result"] == {"answer": "yes", "before": "before", "after": "after"}
    # The step before the question ran once, in the first process; the replay took its result
    # from the log.
    assert (tmp_path / "steps.log").read_text().splitlines() == ["before", "after"]


def test_a_killed_workers_session_is_free_within_one_ttl_and_its_run_closed(
    tmp_path: Path, env: dict[str, str]
) -> None:
    process = worker(
        tmp_path,
        """
        async def main():
            async with deck() as d:
                run = await d.runs.start("ticking", session_id="wa-1")
                print(run.id, flush=True)
                await asyncio.sleep(3600)
        asyncio.run(main())
        """,
        env,
    )
    assert process.stdout is not None
    run_id = process.stdout.readline().strip()
    time.sleep(0.5)  # let it tick: events are being appended
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)

    taken_over = run_worker(
        tmp_path,
        """
        import os, time
        from agentdeck import SessionBusyError
        async def main():
            async with deck() as d:
                started = time.monotonic()
                while True:
                    try:
                        run = await d.runs.start("approval", {"order_id": "B"}, session_id="wa-1")
                        break
                    except SessionBusyError:
                        await asyncio.sleep(0.1)
                waited = time.monotonic() - started
                old = await d.runs.get(os.environ["OLD_RUN"])
                events = [e async for e in old.events()]
                print(json.dumps({
                    "waited": waited,
                    "status": (await old.status()).value,
                    "last": events[-1].payload.model_dump(mode="json"),
                    "seqs_gapless": [e.seq for e in events] == list(range(len(events))),
                    "ticks": sum(1 for e in events if e.kind == "report"),
                }))
        asyncio.run(main())
        """,
        {**env, "OLD_RUN": run_id},
    )
    outcome = json.loads(taken_over)
    assert outcome["status"] == "failed"
    assert outcome["last"]["error_code"] == "lease_expired"
    assert outcome["seqs_gapless"] and outcome["ticks"] > 0
    assert outcome["waited"] < 5  # one 1 s TTL, with room for a loaded machine
