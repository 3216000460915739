"""The worker playing an agent is SIGKILLed while the model streams its answer.

Two ``agentdeck``-style worker processes serve the task queue; the loopback model server in this
process plays the model for both. The agent calls a tool (recorded as completed), then the model
streams a long answer slowly; once a few of its ``text.delta`` events are in the log, the worker
that claimed the run is killed. The other worker must take the run over within the heartbeat
timeout plus 5 seconds (issue 24's bound), finish it from the agent's saved state without
running the completed tool call again, and leave the log gapless.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from types import ModuleType

from agentdeck import Deck, RunStatus
from agentdeck.runtime.claiming import WORKER_LOST_REASON
from agentdeck.settings import Settings
from agentdeck_openai.testing import LoopbackModelServer, reply, tool_call

HEARTBEAT_SECONDS = 2
LEASE_TTL_SECONDS = 4
"""Longer than the heartbeat timeout: the survivor's first attempts find the dead worker's lease
still live and are refused (BUSY) -- an expected refusal that must stay off its stderr."""
TAKEOVER_BOUND = HEARTBEAT_SECONDS + 5
"""Issue 24: the other worker goes on within the heartbeat timeout plus 5 seconds."""
SAFETY = 60.0
"""A bound on waits that only time out when something is broken."""

AGENTS = '''
import os

from agentdeck import Agent, tool


@tool
def refund(order_id: str) -> str:
    """Refund an order."""
    with open(os.environ["REFUND_LOG"], "a") as log:
        log.write(order_id + "\\n")
    return f"refunded {order_id}"


clerk = Agent(name="clerk", instructions="Refund when asked.", tools=[refund])
'''

WORKER = """
import asyncio, sys
sys.path.insert(0, sys.argv[1])
from agentdeck import Deck
from agentdeck.settings import Settings
from killed_agents import clerk

asyncio.run(Deck(agents=[clerk], settings=Settings.load(), observers=()).work(concurrency=2))
"""


def load_agents(directory: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("killed_agents", directory / "killed_agents.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_a_worker_killed_mid_stream_leaves_the_agent_run_to_the_other_worker(
    tmp_path: Path, temporal_target: str, model_server: LoopbackModelServer
) -> None:
    (tmp_path / "killed_agents.py").write_text(AGENTS)
    refunds = tmp_path / "refunds.log"
    model_server.script.add(tool_call("refund", {"order_id": "A-7"}, call_id="call_1"))
    long_answer = " ".join(f"word{i}" for i in range(60))
    model_server.script.add(reply(long_answer, deltas=60, delay=0.1))  # cut by the kill
    model_server.script.add(reply("Refunded A-7."))
    queue = f"agentdeck-agent-kill-{uuid.uuid4().hex[:8]}"
    env = {
        **model_server.env(),
        "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}",
        "AGENTDECK_EXECUTION": f"temporal://{temporal_target}/default?task_queue={queue}"
        f"&heartbeat_seconds={HEARTBEAT_SECONDS}",
        "AGENTDECK_RUNTIME_LEASE_TTL_SECONDS": str(LEASE_TTL_SECONDS),
        "REFUND_LOG": str(refunds),
    }
    # Each worker's stderr goes to a file: a pipe nobody reads until the end could fill up and
    # stall a worker that logs.
    logs = [tmp_path / f"worker-{index}.log" for index in range(2)]
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(tmp_path)],
            env={**os.environ, **env},
            stderr=log.open("w"),
        )
        for log in logs
    ]
    clerk = load_agents(tmp_path).clerk
    try:
        async with Deck(agents=[clerk], settings=Settings(env=env), observers=()) as client:
            run = await client.runs.start("clerk", "refund order A-7")
            async with asyncio.timeout(SAFETY):
                while True:
                    events = [event async for event in run.events()]
                    if sum(event.kind == "text.delta" for event in events) >= 3:
                        break
                    await asyncio.sleep(0.05)
            [claim] = [event for event in events if event.kind == "run.claimed"]
            playing = int(claim.payload.worker.split(":")[1])
            [doomed] = [worker for worker in workers if worker.pid == playing]
            doomed.send_signal(signal.SIGKILL)
            killed_at = time.monotonic()
            doomed.wait(timeout=SAFETY)
            assert refunds.read_text().split() == ["A-7"]  # the tool call completed before

            async with asyncio.timeout(SAFETY):
                while "run.resumed" not in [event.kind async for event in run.events()]:
                    await asyncio.sleep(0.05)
            taken_over_after = time.monotonic() - killed_at
            async with asyncio.timeout(SAFETY):
                while (await run.status()) is not RunStatus.COMPLETED:
                    await asyncio.sleep(0.1)
            outcome = await run.result()
            events = [event async for event in run.events()]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGINT)
        for worker in workers:
            try:
                worker.wait(timeout=SAFETY)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
        logged = {worker.pid: log.read_text() for worker, log in zip(workers, logs, strict=True)}

    deltas = sum(e.kind == "text.delta" for e in events)
    print(
        f"\n[temporal] agent killed mid-stream: taken over {taken_over_after:.2f} s after the kill"
    )
    assert taken_over_after <= TAKEOVER_BOUND, taken_over_after
    assert deltas >= 3
    assert outcome.output == "Refunded A-7."
    assert refunds.read_text().split() == ["A-7"]  # not run again by the survivor
    completed_calls = [e for e in events if e.kind == "tool.call.completed"]
    assert len(completed_calls) == 1
    reasons = [e.payload.reason for e in events if e.kind == "run.paused"]
    assert reasons == [WORKER_LOST_REASON]
    assert [e.seq for e in events] == list(range(len(events)))  # gapless
    # Waiting for the dead worker's lease is an expected refusal: nothing on the survivor's stderr.
    [survivor] = [pid for pid in logged if pid != playing]
    assert "AgentDeckRunBusy" not in logged[survivor], logged[survivor]
