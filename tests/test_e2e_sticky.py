"""Sticky continuation across processes, on one SQLite state file.

A process that holds a ``@workflow`` body suspended continues it where it stood; any other
process -- a fresh one, or one running beside it -- replays the run from the log. Each worker is
a real ``python -c`` process; the body writes its *non-step* code to ``TICK_LOG`` and its steps
to ``STEP_LOG``, so the files tell what ran where.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

WORKFLOWS = """
import asyncio
import os

from agentdeck import WorkflowCtx, workflow

REACHED = asyncio.Event()
GO_ON = asyncio.Event()


def note(variable: str, line: str) -> str:
    with open(os.environ[variable], "a") as log:
        log.write(line + "\\n")
    return line


@workflow
async def ticker(ctx: WorkflowCtx) -> int:
    for i in range(40):
        note("TICK_LOG", str(i))
        await ctx.step("tick", note, "STEP_LOG", f"tick-{i}")
        if i == 6 and os.environ.get("HOLD_AT_SIX") == "1":
            REACHED.set()
            await GO_ON.wait()
        await ctx.safepoint()
    return 40


@workflow
async def asker(ctx: WorkflowCtx) -> list:
    answers = []
    for i in range(4):
        note("TICK_LOG", str(i))
        await ctx.step("before", note, "STEP_LOG", f"before-{i}")
        if i in (1, 2):
            answers.append(await ctx.ask({"tick": i}))
    return answers
"""

PRELUDE = """
import asyncio, json, sys, warnings
sys.path.insert(0, {path!r})
warnings.simplefilter("ignore")
from agentdeck import Deck, RunSuspendedError
from agentdeck.settings import Settings
import sticky_workflows as flows

def deck():
    return Deck(workflows=[flows.ticker, flows.asker], settings=Settings.load(), observers=())

async def paused_at_six(d):
    run = await d.runs.start("ticker")
    await flows.REACHED.wait()
    await run.pause("operator")
    flows.GO_ON.set()
    try:
        await run
    except RunSuspendedError as parked:
        assert parked.status.value == "paused", parked.status
    return run
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
    out, err = process.communicate(timeout=180)
    assert process.returncode == 0, err
    return out


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "sticky_workflows.py").write_text(WORKFLOWS)
    return {
        "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}",
        "TICK_LOG": str(tmp_path / "ticks.log"),
        "STEP_LOG": str(tmp_path / "steps.log"),
    }


def test_paused_at_six_and_resumed_by_the_same_process_runs_its_code_40_times(
    tmp_path: Path, env: dict[str, str]
) -> None:
    out = run_worker(
        tmp_path,
        """
        async def main():
            async with deck() as d:
                run = await paused_at_six(d)
                await run.resume()
                print(json.dumps(await run))
        asyncio.run(main())
        """,
        {**env, "HOLD_AT_SIX": "1"},
    )
    assert json.loads(out) == 40
    assert lines(tmp_path / "ticks.log") == [str(i) for i in range(40)]
    assert lines(tmp_path / "steps.log") == [f"tick-{i}" for i in range(40)]


def test_paused_in_one_process_and_resumed_by_a_fresh_one_replays_from_the_log(
    tmp_path: Path, env: dict[str, str]
) -> None:
    started = run_worker(
        tmp_path,
        """
        async def main():
            async with deck() as d:
                print((await paused_at_six(d)).id)
        asyncio.run(main())
        """,
        {**env, "HOLD_AT_SIX": "1"},
    )
    finished = run_worker(
        tmp_path,
        f"""
        async def main():
            async with deck() as d:
                run = await d.runs.get({started.strip()!r})
                await run.resume()
                print(json.dumps(await run))
        asyncio.run(main())
        """,
        env,
    )
    assert json.loads(finished) == 40
    # The fresh process held no body: it replayed the non-step code from the top...
    ticks = [str(i) for i in range(7)] + [str(i) for i in range(40)]
    assert lines(tmp_path / "ticks.log") == ticks
    # ...and took the steps the first one had done from the log.
    assert lines(tmp_path / "steps.log") == [f"tick-{i}" for i in range(40)]


def test_a_body_suspended_in_a_live_process_drops_when_another_one_moved_the_run(
    tmp_path: Path, env: dict[str, str]
) -> None:
    holder = worker(
        tmp_path,
        """
        async def main():
            async with deck() as d:
                run = await d.runs.start("asker")
                try:
                    await run
                except RunSuspendedError:
                    pass
                print(run.id, flush=True)
                await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
                await run.answer("second")
                print(json.dumps(await run), flush=True)
        asyncio.run(main())
        """,
        env,
        stdin=subprocess.PIPE,
    )
    assert holder.stdout is not None and holder.stdin is not None
    run_id = holder.stdout.readline().strip()
    assert run_id, holder.stderr.read() if holder.stderr else ""
    # Another process answers the first question while the holder keeps its body parked on it.
    run_worker(
        tmp_path,
        f"""
        async def main():
            async with deck() as d:
                run = await d.runs.get({run_id!r})
                await run.answer("first")
                try:
                    await run
                except RunSuspendedError as parked:
                    assert parked.status.value == "waiting_answer"
        asyncio.run(main())
        """,
        env,
    )
    out, err = holder.communicate("go on\n", timeout=180)
    assert holder.returncode == 0, err
    assert json.loads(out) == ["first", "second"]
    # Holder to the first ask, the other process's replay to the second, the holder's replay
    # to the end: the body it kept was dropped rather than continued on a log it did not write.
    ticks = ["0", "1", "0", "1", "2", "0", "1", "2", "3"]
    assert lines(tmp_path / "ticks.log") == ticks
    assert lines(tmp_path / "steps.log") == [f"before-{i}" for i in range(4)]
