"""A client process admits, answers and reads agent runs without importing any engine SDK.

The client is a Python process of its own (``python -c CLIENT``) building its deck from the same
project directory as the worker; it starts a run of an agent whose tool needs an approval, waits
until a worker parks it, answers it, waits for the result, and then reports which modules it
imported. The worker is a deck in this test's process (so the Agents SDK is loaded *here*, and
the client's ``sys.modules`` is the only witness that counts). The recorded ``code_digest`` the
client computed without the SDK must be the worker's, or the worker would refuse to play.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

from agentdeck import Deck
from agentdeck.settings import Settings
from agentdeck_openai.testing import LoopbackModelServer, reply, tool_call

SAFETY = 120.0
"""A bound on waits that only time out when something is broken (never a timing assertion)."""

AGENT = """
from agentdeck import Agent, tool


@tool
def refund(order_id: str) -> str:
    \"\"\"Refund an order.\"\"\"
    return f"refunded {order_id}"


clerk = Agent(
    name="clerk", instructions="Refund when asked.", tools=[refund], interrupt_on=["refund"]
)
"""

CLIENT = """
import asyncio, json, sys
from agentdeck import Deck, InterruptResult
from agentdeck.errors import RunSuspendedError

HEAVY = ("agents", "openai", "langgraph", "langchain_core", "agentdeck_openai.engine",
         "agentdeck_langgraph.engine")


async def main(project):
    async with Deck.from_project(project) as deck:
        run = await deck.runs.start("clerk", "refund order C-1")
        try:
            await run.result()
        except RunSuspendedError as suspended:
            assert isinstance(suspended.pending, InterruptResult), suspended.pending
            tool = suspended.pending.payload["tool"]
        await run.answer({"approved": True})
        outcome = await run.result()
        status = await (await deck.runs.get(run.id)).status()
        started = [e async for e in run.events()][0].payload
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY or m in HEAVY)
    print(json.dumps({
        "parked_on": tool,
        "output": getattr(outcome, "output", outcome),
        "status": str(status),
        "digest": started.code_digest,
        "loaded": loaded,
    }))


asyncio.run(main(sys.argv[1]))
"""


async def test_a_client_process_admits_answers_and_reads_with_no_engine_sdk_imported(
    tmp_path: Path, temporal_target: str, model_server: LoopbackModelServer
) -> None:
    project = tmp_path / ".agentdeck"
    bundle = project / "agents" / "clerk"
    bundle.mkdir(parents=True)
    (bundle / "agent.py").write_text(textwrap.dedent(AGENT))
    queue = f"agentdeck-client-{uuid.uuid4().hex[:8]}"
    env = {
        **model_server.env(),
        "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}",
        "AGENTDECK_EXECUTION": f"temporal://{temporal_target}/default?task_queue={queue}",
    }
    model_server.script.add(tool_call("refund", {"order_id": "C-1"}, call_id="call_1"))
    model_server.script.add(reply("Refunded C-1."))

    worker_deck = Deck.from_project(project, settings=Settings(env=env), observers=())
    worker = asyncio.create_task(worker_deck.work(concurrency=1))
    try:
        client = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            CLIENT,
            str(project),
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(client.communicate(), SAFETY)
        assert client.returncode == 0, err.decode()
        report = json.loads(out.decode().strip().splitlines()[-1])
        compiled = worker_deck.invocables["clerk"]
    finally:
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)

    assert report["loaded"] == []  # not the Agents SDK, not LangGraph, not their engines
    assert report["parked_on"] == "refund"
    assert report["output"] == "Refunded C-1."
    assert report["status"] == "completed"
    assert compiled.compiled is not None  # the worker played on the full engine
    assert report["digest"] == compiled.code_digest  # the client's digest is the worker's


NO_MODEL = """
from agentdeck import Agent

drifter = Agent(name="drifter", instructions="Say hi.")
"""


def test_agentdeck_build_checks_what_the_workers_will_compile_not_only_what_a_client_needs(
    tmp_path: Path, temporal_target: str
) -> None:
    project = tmp_path / ".agentdeck"
    bundle = project / "agents" / "drifter"
    bundle.mkdir(parents=True)
    (bundle / "agent.py").write_text(textwrap.dedent(NO_MODEL))
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("OPENAI_MODEL", "OPENAI_DEFAULT_MODEL")
    }
    env.update(
        AGENTDECK_STATE=f"sqlite:///{tmp_path / 'state.db'}",
        AGENTDECK_EXECUTION=f"temporal://{temporal_target}/default?task_queue=unused",
    )

    # A client deck admits without the model (the worker needs it, the client does not)...
    client = Deck.from_project(project, settings=Settings(env=env)).build()
    assert client.invocables["drifter"].compiled is None
    asyncio.run(client.aclose())  # unloads the project's modules
    # ...but `agentdeck build`, the check before deploying, compiles as the workers will.
    checked = subprocess.run(
        [sys.executable, "-m", "agentdeck", "build", str(project)],
        env=env,
        capture_output=True,
        text=True,
        timeout=SAFETY,
    )
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "agent 'drifter' has no model" in checked.stderr
