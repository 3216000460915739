"""With no settings at all, a parked approval and a paused run survive a restart.

The acceptance line of the durable default: in a project directory, with every ``AGENTDECK_*``
variable scrubbed from the environment, process 1 starts a workflow that parks on a question and
another that it pauses, then exits; process 2, fresh, in the same directory, lists both runs,
answers the one and resumes the other, and both complete. Nothing is shared between the two but
the default state file, ``.agentdeck/state.db`` of the project.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

WORKFLOWS = """
import os
from pathlib import Path

from agentdeck import WorkflowCtx, workflow


def note(label: str) -> str:
    with Path(os.environ["STEP_LOG"]).open("a") as log:
        log.write(label + "\\n")
    return label


@workflow
async def approval(order_id: str, ctx: WorkflowCtx) -> dict:
    before = await ctx.step("before", note, "before")
    answer = await ctx.ask({"question": f"Refund {order_id}?"}, options=["approve", "reject"])
    return {"order_id": order_id, "answer": answer, "before": before}


@workflow
async def counting(ctx: WorkflowCtx) -> int:
    total = 0
    for i in range(40):
        total += await ctx.step(f"tick {i}", lambda i=i: i)
        if i == 5:
            note("reached 5")
            await ctx.report("ready to be paused")
            while True:  # holds here until the pause is seen at a safe point
                await ctx.safepoint()
                if os.environ.get("FREE_RUNNING"):
                    break
    return total
"""

PARK_AND_PAUSE = """
import asyncio, json
from agentdeck import Deck, RunStatus, RunSuspendedError

async def main():
    async with Deck.from_project() as deck:
        approval = await deck.runs.start("approval", {"order_id": "A-1"})
        try:
            await approval
        except RunSuspendedError as parked:
            assert parked.status is RunStatus.WAITING_ANSWER
        counting = await deck.runs.start("counting")
        async for event in counting.events(follow=True):
            if event.kind == "report":
                break
        await counting.pause("lunch")
        try:
            await counting
        except RunSuspendedError as paused:
            assert paused.status is RunStatus.PAUSED
        print(json.dumps({"approval": approval.id, "counting": counting.id}))

asyncio.run(main())
"""

ANSWER_AND_RESUME = """
import asyncio, json
from agentdeck import Deck, RunStatus

async def main():
    async with Deck.from_project() as deck:
        listed = {run.id: (await run.status()).value for run in await deck.runs.list()}
        [waiting] = await deck.runs.list(status=RunStatus.WAITING_ANSWER)
        [paused] = await deck.runs.list(status=RunStatus.PAUSED)
        await waiting.answer("approve")
        await paused.resume()
        print(json.dumps({
            "listed": listed,
            "approval": await waiting,
            "counting": await paused,
            "statuses": [(await waiting.status()).value, (await paused.status()).value],
        }))

asyncio.run(main())
"""


def _scrubbed_environment(step_log: Path, **extra: str) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("AGENTDECK_")}
    environ.update(STEP_LOG=str(step_log), PYTHONWARNINGS="ignore", **extra)
    return environ


def _run(code: str, project: Path, env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_parked_approval_and_a_paused_run_survive_a_restart_with_no_settings(
    tmp_path: Path,
) -> None:
    project = tmp_path / "shop"
    bundle = project / ".agentdeck" / "workflows" / "refunds"
    bundle.mkdir(parents=True)
    (bundle / "workflow.py").write_text(WORKFLOWS, encoding="utf-8")
    step_log = tmp_path / "steps.log"
    assert not any(key.startswith("AGENTDECK_") for key in _scrubbed_environment(step_log))

    first = _run(PARK_AND_PAUSE, project, _scrubbed_environment(step_log))

    state = project / ".agentdeck" / "state.db"
    assert state.is_file()  # the default location, created on first use
    second = _run(ANSWER_AND_RESUME, project, _scrubbed_environment(step_log, FREE_RUNNING="1"))

    assert second["listed"] == {
        first["approval"]: "waiting_answer",
        first["counting"]: "paused",
    }
    assert second["approval"] == {"order_id": "A-1", "answer": "approve", "before": "before"}
    assert second["counting"] == sum(range(40))
    assert second["statuses"] == ["completed", "completed"]
    # Replayed in the fresh process from the log: the step before the question ran once, and
    # the paused body's code before its pause is re-run only up to where it stood.
    assert step_log.read_text().splitlines().count("before") == 1
    # Process 2 built the project with the state file inside its directory: the loader reads
    # agents/, workflows/ and skills/ only.
    assert state.is_file()
