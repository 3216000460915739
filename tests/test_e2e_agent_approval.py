"""A tool approval parked by one process is answered by a fresh one, over a shared SQLite state
file, while the loopback model server in this process plays the model for both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from agentdeck_openai.testing import LoopbackModelServer, Script, reply, tool_call

AGENTS = '''
import os

from agentdeck import Agent, tool


@tool
def refund(order_id: str) -> str:
    """Refund an order."""
    with open(os.environ["REFUND_LOG"], "a") as log:
        log.write(order_id + "\\n")
    return f"refunded {order_id}"


clerk = Agent(
    name="clerk", instructions="Refund when asked.", tools=[refund], interrupt_on=["refund"]
)
'''

PRELUDE = """
import asyncio, json, sys, warnings
sys.path.insert(0, {path!r})
warnings.simplefilter("ignore")
from agentdeck import Deck, InterruptResult, RunStatus
from agentdeck.settings import Settings
from e2e_agents import clerk

def deck():
    return Deck(agents=[clerk], settings=Settings.load(), observers=())
"""


def run_worker(tmp_path: Path, body: str, env: dict[str, str]) -> str:
    code = PRELUDE.format(path=str(tmp_path)) + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_an_approval_parked_in_one_process_is_answered_in_a_fresh_one(tmp_path: Path) -> None:
    (tmp_path / "e2e_agents.py").write_text(AGENTS)
    script = Script([tool_call("refund", {"order_id": "A-7"}, call_id="call_1"), reply("Done.")])
    with LoopbackModelServer(script) as server:
        env = {
            **server.env(),
            "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}",
            "REFUND_LOG": str(tmp_path / "refunds.log"),
        }
        parked = run_worker(
            tmp_path,
            """
            async def main():
                async with deck() as d:
                    result = await d.run("clerk", "refund order A-7")
                    assert isinstance(result, InterruptResult), result
                    print(json.dumps({"run": result.run_id, "payload": result.payload}))
            asyncio.run(main())
            """,
            env,
        )
        first = json.loads(parked)
        assert first["payload"]["tool"] == "refund"
        assert not (tmp_path / "refunds.log").exists()  # nothing ran before the approval

        answered = run_worker(
            tmp_path,
            """
            async def main():
                async with deck() as d:
                    [waiting] = await d.runs.list(status=RunStatus.WAITING_ANSWER)
                    await waiting.answer({"approved": True})
                    result = await waiting
                    kinds = [e.kind async for e in waiting.events()]
                    print(json.dumps({"run": waiting.id, "output": result.output, "kinds": kinds}))
            asyncio.run(main())
            """,
            env,
        )
    second = json.loads(answered)
    assert second["run"] == first["run"] and second["output"] == "Done."
    assert "approval.decided" in second["kinds"] and second["kinds"][-1] == "run.completed"
    assert (tmp_path / "refunds.log").read_text().splitlines() == ["A-7"]
