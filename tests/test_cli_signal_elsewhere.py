"""``agentdeck runs signal RUN VERB --control-db PATH`` reaching a run whose events the command
cannot read (the 4.x documented form).

A *child* process plays a workflow on ``memory://`` events -- a log no other process can read --
with its control requests in a SQLite file. The command, run as its own process with nothing but
that file, records each request in the control store, says on stderr that it could not see the
run's log, and exits 0; the child's run acts on it at its next safe point (a resume: at its
deck's next sweep), with the reason in its log.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

BOUND = 60.0  # seconds: a hang detector for waits on other processes, never a timing

CHILD = """\
import asyncio, json, sys, warnings

warnings.simplefilter("ignore")
from agentdeck import Deck, RunFailedError, RunSuspendedError, WorkflowCtx, workflow
from agentdeck.vocabulary import RunStatus


@workflow
async def slow(ctx: WorkflowCtx) -> str:
    while True:  # until cancelled: a pause or cancel takes effect at the safe point
        await ctx.safepoint()
        await asyncio.sleep(0.01)


def say(**message) -> None:
    print(json.dumps(message), flush=True)


async def main() -> None:
    async with Deck(workflows=[slow], observers=()) as deck:
        run = await deck.runs.start("slow")
        say(run_id=run.id)
        try:
            await run
        except RunSuspendedError as stopped:
            say(status=stopped.status.value)
        while await run.status() is RunStatus.PAUSED:
            await asyncio.sleep(0.01)
        say(status=(await run.status()).value)
        try:
            await run
        except RunFailedError as ended:
            say(status=ended.status.value)
        say(log=[
            {"kind": e.kind, "reason": getattr(e.payload, "reason", None)}
            async for e in run.events()
        ])


asyncio.run(main())
"""


class Lines:
    """The lines a child process prints, read by a thread so a wait can be bounded."""

    def __init__(self, stream: IO[str]) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line)
        self._lines.put("")

    def next(self) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=BOUND)
        except queue.Empty:
            raise AssertionError(f"no output within {BOUND} s") from None
        assert line, "the child stopped"
        message: dict[str, Any] = json.loads(line)
        return message


def _env(**settings: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AGENTDECK_")}
    return {**clean, **settings, "NO_COLOR": "1"}


def _signal(root: Path, run_id: str, verb: str, reason: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            *(sys.executable, "-m", "agentdeck", "runs", "signal", run_id, verb),
            *("--control-db", str(root / "control.db"), "--reason", reason),
        ],
        env=_env(),
        cwd=root,
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
    )


def test_a_run_in_another_process_is_paused_resumed_and_cancelled_through_the_control_db(
    tmp_path: Path,
) -> None:
    (tmp_path / "child.py").write_text(CHILD, encoding="utf-8")
    child = subprocess.Popen(
        [sys.executable, str(tmp_path / "child.py")],
        env=_env(
            AGENTDECK_EVENTS="memory://",
            AGENTDECK_CONTROL=f"sqlite:///{tmp_path / 'control.db'}",
            AGENTDECK_RUNTIME_SWEEP_INTERVAL_SECONDS="0.1",
        ),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        lines = Lines(child.stdout)
        run_id = lines.next()["run_id"]

        paused = _signal(tmp_path, run_id, "pause", "lunch break")
        assert paused.returncode == 0, paused.stderr
        assert f"could not see the log of run {run_id}" in paused.stderr
        assert "pause request was recorded in the control store" in paused.stderr
        assert lines.next() == {"status": "paused"}

        resumed = _signal(tmp_path, run_id, "resume", "back from lunch")
        assert resumed.returncode == 0, resumed.stderr
        assert lines.next() == {"status": "running"}

        cancelled = _signal(tmp_path, run_id, "cancel", "order withdrawn")
        assert cancelled.returncode == 0, cancelled.stderr
        assert f"cancel requested for run {run_id}" in cancelled.stdout
        assert lines.next() == {"status": "cancelled"}

        log = lines.next()["log"]
        kinds = [entry["kind"] for entry in log]
        assert kinds[-3:] == ["control.requested", "control.observed", "run.cancelled"]
        assert log[-3]["reason"] == log[-1]["reason"] == "order withdrawn"
        assert {"kind": "run.paused", "reason": "lunch break"} in log
        assert {"kind": "run.resumed", "reason": "back from lunch"} in log
        child.wait(timeout=BOUND)  # it closes its deck and exits on its own
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=BOUND)
        assert child.stderr is not None
        errors = child.stderr.read()
        for stream in (child.stdout, child.stderr, child.stdin):
            if stream is not None:
                stream.close()
    assert child.returncode == 0, errors
