"""The worker playing a ``@workflow`` is SIGKILLed between steps, again and again.

Two ``agentdeck worker`` processes serve the task queue. Each round lets the run play three
steps and holds it before the next (a gate file the workflow reads), kills the worker that
recorded the latest step, and starts a replacement so that two workers are up again before the
next kill. The other worker must take the run over (record it resumed) within the heartbeat
timeout plus 5 seconds (issue 24's bound), no step may run twice, the log stays gapless, and
the run completes.

Issue 24 asks for 50 kills; ``KILLS`` (override it with ``AGENTDECK_TEST_TEMPORAL_KILLS``) has a
default that keeps the test to well under a minute here.
"""

from __future__ import annotations

import asyncio
import collections
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from agentdeck import Deck, Run, RunStatus
from agentdeck.runtime.claiming import WORKER_LOST_REASON
from agentdeck.settings import Settings

KILLS = int(os.environ.get("AGENTDECK_TEST_TEMPORAL_KILLS", "6"))
"""How many times the playing worker is killed (issue 24's acceptance run uses 50). Six by
default: a takeover that gets slower with each kill of the same run (a backed-off retry) is
already past the bound by the fourth."""

HEARTBEAT_SECONDS = 2
TAKEOVER_BOUND = HEARTBEAT_SECONDS + 5
"""Issue 24: the other worker goes on within the heartbeat timeout plus 5 seconds."""

STEPS_PER_ROUND = 3
STEPS = STEPS_PER_ROUND * (KILLS + 1)

SAFETY = 60.0
"""A bound on waits that only time out when something is broken."""

WORKFLOW = """
import asyncio
import os

from agentdeck import WorkflowCtx, workflow


def record_step(label: str) -> str:
    with open(os.environ["STEP_LOG"], "a") as log:
        log.write(f"{label} {os.getpid()}\\n")
    return label


def allowed() -> int:
    with open(os.environ["STEP_GATE"]) as gate:
        return int(gate.read())


@workflow
async def relay(ctx: WorkflowCtx, count: int) -> list:
    done = []
    for i in range(count):
        while i >= allowed():  # held between steps until the test lets the next one run
            await asyncio.sleep(0.05)
        done.append(await ctx.step(f"s{i}", record_step, f"s{i}"))
        await ctx.safepoint()
    return done
"""


class Workers:
    """``agentdeck worker`` processes of one project, by pid."""

    def __init__(self, project: Path, env: dict[str, str], temporal: Client, queue: str) -> None:
        self.project, self.env, self.temporal, self.queue = project, env, temporal, queue
        self.processes: dict[int, subprocess.Popen[bytes]] = {}

    async def start(self) -> int:
        """Start one and wait until it polls the task queue for play activities."""
        process = subprocess.Popen(
            [sys.executable, "-m", "agentdeck", "worker", "--project", str(self.project)],
            env={**os.environ, **self.env},
        )
        self.processes[process.pid] = process
        async with asyncio.timeout(SAFETY):
            while process.pid not in await self.polling():
                assert process.poll() is None, "the worker exited"
                await asyncio.sleep(0.1)
        return process.pid

    async def polling(self) -> set[int]:
        """Pids of the processes Temporal saw polling the queue (identity ``pid@host``)."""
        described = await self.temporal.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(
                namespace="default",
                task_queue=TaskQueue(name=self.queue),
                task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
            )
        )
        return {int(poller.identity.split("@")[0]) for poller in described.pollers}

    def kill(self, pid: int) -> None:
        process = self.processes.pop(pid)
        process.send_signal(signal.SIGKILL)
        process.wait()

    def stop_all(self) -> None:
        for pid in list(self.processes):
            self.kill(pid)


def recorded(steps: Path) -> list[tuple[str, int]]:
    """``(step, pid)`` for every step body that ran, in order."""
    if not steps.exists():
        return []
    return [
        (label, int(pid))
        for label, pid in (line.split() for line in steps.read_text().splitlines())
    ]


STEP = "step.completed"


def open_gate(gate: Path, steps: int) -> None:
    """Let the run play up to ``steps`` steps: written whole, so no reader sees it empty."""
    staged = gate.with_suffix(".next")
    staged.write_text(str(steps))
    staged.replace(gate)


async def logged(run: Run, kind: str) -> int:
    """How many events of ``kind`` the run's log holds."""
    return len([event async for event in run.events() if event.kind == kind])


async def test_repeated_kills_of_the_playing_worker_lose_nothing_and_repeat_no_step(
    tmp_path: Path, temporal_target: str
) -> None:
    project = tmp_path / ".agentdeck"
    (project / "workflows" / "relay").mkdir(parents=True)
    (project / "workflows" / "relay" / "workflow.py").write_text(textwrap.dedent(WORKFLOW))
    steps = tmp_path / "steps.log"
    gate = tmp_path / "gate"
    queue = f"agentdeck-kills-{uuid.uuid4().hex[:8]}"
    env = {
        "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}",
        "AGENTDECK_EXECUTION": f"temporal://{temporal_target}/default?task_queue={queue}"
        f"&heartbeat_seconds={HEARTBEAT_SECONDS}",
        "AGENTDECK_RUNTIME_LEASE_TTL_SECONDS": str(HEARTBEAT_SECONDS),
        "STEP_LOG": str(steps),
        "STEP_GATE": str(gate),
    }
    open_gate(gate, STEPS_PER_ROUND)
    workers = Workers(project, env, await Client.connect(temporal_target), queue)
    takeovers: list[float] = []
    try:
        await asyncio.gather(workers.start(), workers.start())
        async with Deck.from_project(project, settings=Settings(env=env)) as client:
            run = await client.runs.start("relay", {"count": STEPS})
            for round_ in range(KILLS):
                # The run is held between steps once this round's are run and in the log: the
                # kill lands there, never inside a step.
                allowed = STEPS_PER_ROUND * (round_ + 1)
                async with asyncio.timeout(SAFETY):
                    while len(recorded(steps)) < allowed or await logged(run, STEP) < allowed:
                        await asyncio.sleep(0.02)
                victim = recorded(steps)[-1][1]
                workers.kill(victim)
                killed_at = time.monotonic()
                replacement = asyncio.ensure_future(workers.start())
                # The other worker claims it back: the run resumes from its log.
                async with asyncio.timeout(SAFETY):
                    while await logged(run, "run.resumed") < round_ + 1:
                        await asyncio.sleep(0.02)
                takeovers.append(time.monotonic() - killed_at)
                await replacement  # two workers again before the next kill
                open_gate(gate, allowed + STEPS_PER_ROUND)
            async with asyncio.timeout(SAFETY):
                while (await run.status()) is not RunStatus.COMPLETED:
                    await asyncio.sleep(0.1)
            result = await run.result()
            events = [event async for event in run.events()]
    finally:
        workers.stop_all()

    expected = [f"s{i}" for i in range(STEPS)]
    assert result == expected
    ran = collections.Counter(label for label, _ in recorded(steps))
    assert ran == collections.Counter(expected)  # every step ran exactly once
    reasons = [e.payload.reason for e in events if e.kind == "run.paused"]
    assert reasons == [WORKER_LOST_REASON] * KILLS  # each kill seen, none missed
    assert [e.seq for e in events] == list(range(len(events)))  # gapless
    print(f"takeovers after {KILLS} kills: max {max(takeovers):.2f} s, all {takeovers}")
    assert max(takeovers) <= TAKEOVER_BOUND, takeovers
