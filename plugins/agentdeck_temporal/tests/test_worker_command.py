"""``agentdeck worker`` as a process of its own: it plays what a client in another process queued.

The client here is this test's deck; the worker is ``python -m agentdeck worker --project P``,
sharing nothing with it but the SQLite state file and the Temporal task queue.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from agentdeck import Deck, RunStatus
from agentdeck.settings import Settings

WORKFLOW = """
from agentdeck import WorkflowCtx, workflow


@workflow
async def shout(ctx: WorkflowCtx, text: str) -> str:
    loud = await ctx.step("loud", str.upper, text)
    return f"{loud}!"
"""


def _project(root: Path) -> Path:
    project = root / ".agentdeck"
    bundle = project / "workflows" / "shout"
    bundle.mkdir(parents=True)
    (bundle / "workflow.py").write_text(textwrap.dedent(WORKFLOW))
    return project


def _env(root: Path, temporal_target: str) -> dict[str, str]:
    queue = f"agentdeck-cli-{uuid.uuid4().hex[:8]}"
    return {
        "AGENTDECK_STATE": f"sqlite:///{root / 'state.db'}",
        "AGENTDECK_EXECUTION": f"temporal://{temporal_target}/default?task_queue={queue}",
    }


def _default_sigint() -> None:
    """In the worker, before exec: Ctrl-C handled as usual even when this test runs in a
    background job (whose children inherit SIGINT ignored, which Python then keeps)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(("stop", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
async def test_a_worker_process_plays_a_run_another_process_queued(
    tmp_path: Path, temporal_target: str, stop: signal.Signals, status: int
) -> None:
    project = _project(tmp_path)
    env = _env(tmp_path, temporal_target)
    async with Deck.from_project(project, settings=Settings(env=env)) as client:
        run = await client.runs.start("shout", {"text": "from afar"})
        assert await run.status() is RunStatus.QUEUED

        command = ["worker", "--project", str(project), "--concurrency", "2"]
        worker = subprocess.Popen(
            [sys.executable, "-m", "agentdeck", *command],
            env={**os.environ, **env},
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_default_sigint,
        )
        try:
            assert await asyncio.wait_for(run.result(), 60) == "FROM AFAR!"
        finally:
            worker.send_signal(stop)  # Ctrl-C or a process manager: stop, close the deck
            try:
                _, errors = worker.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                worker.kill()
                raise
    assert worker.returncode == status, errors  # ended by itself, not by the signal


def test_a_worker_for_a_deck_whose_runs_play_in_process_refuses_saying_why(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path)
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTDECK_")}
    done = subprocess.run(
        [sys.executable, "-m", "agentdeck", "worker", "--project", str(project)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "AGENTDECK_EXECUTION" in done.stderr and "temporal://" in done.stderr
