"""A worker killed outright mid-run (SIGKILL): another worker takes the run over.

Temporal sees the dead worker's heartbeats stop and hands the play activity to another worker;
that worker waits for the dead one's lease to lapse, records the run paused in its name, and
resumes it from the log. Journaled ``@workflow`` steps are not run again -- at most the one the
kill cut between running and recording.
"""

from __future__ import annotations

import asyncio
import collections
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from worker_support import finished_by

from agentdeck import Deck, RunStatus
from agentdeck.runtime.claiming import WORKER_LOST_REASON
from agentdeck.settings import Settings

WORKFLOW = """
import asyncio
import os

from agentdeck import WorkflowCtx, workflow


def record_step(label: str) -> str:
    with open(os.environ["STEP_LOG"], "a") as log:
        log.write(label + "\\n")
    return label


@workflow
async def long_job(ctx: WorkflowCtx, count: int) -> list:
    done = []
    for i in range(count):
        done.append(await ctx.step(f"s{i}", record_step, f"s{i}"))
        await ctx.safepoint()
        await asyncio.sleep(0.2)
    return done
"""


async def test_a_killed_workers_run_is_finished_by_another_without_repeating_steps(
    tmp_path: Path, temporal_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / ".agentdeck"
    (project / "workflows" / "long_job").mkdir(parents=True)
    (project / "workflows" / "long_job" / "workflow.py").write_text(textwrap.dedent(WORKFLOW))
    steps = tmp_path / "steps.log"
    queue = f"agentdeck-kill-{uuid.uuid4().hex[:8]}"
    env = {
        "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}",
        "AGENTDECK_EXECUTION": f"temporal://{temporal_target}/default?task_queue={queue}"
        "&heartbeat_seconds=2",
        "AGENTDECK_RUNTIME_LEASE_TTL_SECONDS": "2",
        "STEP_LOG": str(steps),
    }
    monkeypatch.setenv("STEP_LOG", str(steps))
    settings = Settings(env=env)

    async with Deck.from_project(project, settings=settings) as client:
        run = await client.runs.start("long_job", {"count": 15})
        doomed = subprocess.Popen(
            [sys.executable, "-m", "agentdeck", "worker", "--project", str(project)],
            env={**os.environ, **env},
        )
        try:
            async with asyncio.timeout(60):
                while not steps.exists() or len(steps.read_text().split()) < 3:
                    await asyncio.sleep(0.05)
        finally:
            doomed.send_signal(signal.SIGKILL)
            doomed.wait()
        assert await run.status() is RunStatus.RUNNING  # nobody closed it: it was cut

        survivor = Deck.from_project(project, settings=settings)
        result = await finished_by(survivor, run, within=90, every=0.2)
        events = [event async for event in run.events()]

    expected = [f"s{i}" for i in range(15)]
    assert result == expected
    ran = collections.Counter(steps.read_text().split())
    assert set(ran) == set(expected)
    assert sum(ran.values()) - len(expected) <= 1  # at most the step the kill cut
    reasons = [e.payload.reason for e in events if e.kind == "run.paused"]
    assert reasons == [WORKER_LOST_REASON]
    assert [e.seq for e in events] == list(range(len(events)))  # gapless
