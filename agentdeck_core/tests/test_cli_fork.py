"""``agentdeck runs retry`` and ``agentdeck runs fork``: a new run played by the command with the
project's engines, linked to its origin, which ``agentdeck runs show`` prints."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest

from agentdeck import Deck, RunFailedError
from agentdeck.cli import main
from agentdeck.settings import Settings


@pytest.fixture
def state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    url = f"memory://cli-fork-{uuid.uuid4().hex[:10]}"
    for name in ("AGENTDECK_EVENTS", "AGENTDECK_CONTROL", "AGENTDECK_CONFIG", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTDECK_STATE", url)
    monkeypatch.chdir(tmp_path)
    return url


async def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = await asyncio.to_thread(main, list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def write_project(root: Path) -> tuple[Path, Path, Path]:
    """A project whose workflow runs five steps, appending each step it executes to a file;
    step 3 raises while the ``down`` file exists."""
    calls, down = root / "calls.txt", root / "down"
    bundle = root / ".agentdeck" / "workflows" / "five"
    bundle.mkdir(parents=True)
    (bundle / "workflow.py").write_text(
        "from pathlib import Path\n\n"
        "from agentdeck import WorkflowCtx, workflow\n\n"
        f"CALLS, DOWN = Path({str(calls)!r}), Path({str(down)!r})\n\n\n"
        "def body(n: int):\n"
        "    def run(value: int) -> int:\n"
        "        with CALLS.open('a') as log:\n"
        "            log.write(f'step{n}\\n')\n"
        "        if n == 3 and DOWN.exists():\n"
        "            raise RuntimeError('down')\n"
        "        return value + n\n"
        "    return run\n\n\n"
        "@workflow\n"
        "async def five(ctx: WorkflowCtx) -> int:\n"
        "    value = 0\n"
        "    for n in range(1, 6):\n"
        "        value = await ctx.step(f'step{n}', body(n), value)\n"
        "    return value\n",
        encoding="utf-8",
    )
    return root / ".agentdeck", calls, down


async def test_retry_and_fork_from_the_command_line_reuse_steps_and_show_their_origin(
    state: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project, calls, down = write_project(tmp_path)
    down.touch()
    settings = Settings(env={"AGENTDECK_STATE": state})
    async with Deck.from_project(project, settings=settings, observers=()) as deck:
        failed = await deck.runs.start("five")
        with pytest.raises(RunFailedError):
            await failed
        down.unlink()
        calls.write_text("")

        status, out, err = await cli(
            capsys, "runs", "retry", failed.id, "--project", str(project), "--json"
        )
        assert status == 0, err
        retried = json.loads(out)
        assert retried["retry_of"] == failed.id and retried["status"] == "completed"
        assert calls.read_text().split() == ["step3", "step4", "step5"]

        status, out, err = await cli(capsys, "runs", "show", retried["id"])
        assert status == 0, err
        assert f"retry of run {failed.id}" in out

        calls.write_text("")
        status, out, err = await cli(
            capsys, "runs", "fork", retried["id"], "--at", "4", "--project", str(project)
        )
        assert status == 0, err
        assert calls.read_text().split() == ["step5"]
        fork_id = out.splitlines()[0].split()[1].rstrip(":")
        assert out.splitlines()[-1] == f"run {fork_id} is completed"
        assert await (await deck.runs.get(fork_id)) == 15

        status, out, err = await cli(capsys, "runs", "show", fork_id)
        assert f"forked from run {retried['id']} at step 4" in out

        status, out, err = await cli(
            capsys, "runs", "fork", failed.id, "--at", "9", "--project", str(project)
        )
        assert status != 0 and "cannot be forked at operation 9" in err


async def test_retry_needs_the_project_that_plays_the_run(
    state: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = await cli(capsys, "runs", "retry", "some-run")
    assert status == 2 and "--project" in err
