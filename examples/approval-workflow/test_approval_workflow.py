"""The approval-workflow example: a refund parked in one process is answered from another, on
one SQLite file; a bad answer is refused; the CLI answers the same runs."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from agentdeck import AnswerRefused, Deck, RunStatus, Settings

HERE = Path(__file__).resolve().parent
PROJECT_ARGS = ("--project", ".agentdeck")


def _load_main() -> ModuleType:
    spec = importlib.util.spec_from_file_location("approval_workflow_main", HERE / "main.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


example = _load_main()


def readme_block(marker: str) -> str:
    """The ```text block that follows `marker` in the README."""
    after = (HERE / "README.md").read_text(encoding="utf-8").split(marker, 1)[1]
    return after.split("```text\n", 1)[1].split("```", 1)[0]


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh SQLite file and refund ledger for this test, and the example's directory as the
    working directory (where its `config.yaml` is)."""
    url = f"sqlite:///{tmp_path / 'approvals.db'}"
    monkeypatch.setenv("AGENTDECK_STATE", url)
    monkeypatch.setenv("REFUND_LEDGER", str(tmp_path / "refunds.jsonl"))
    monkeypatch.chdir(HERE)
    return url


def _python(*args: str) -> subprocess.CompletedProcess[str]:
    """Run a command in a process of its own, as a second terminal would."""
    return subprocess.run(
        [sys.executable, *args], cwd=HERE, capture_output=True, text=True, timeout=120
    )


async def _recorded(url: str, run_id: str) -> tuple[RunStatus, list[str]]:
    async with Deck(settings=Settings(env={"AGENTDECK_STATE": url})) as reader:
        run = await reader.runs.get(run_id)
        return await run.status(), [event.kind async for event in run.events()]


def test_a_refund_parked_by_one_process_is_answered_by_another(state: str) -> None:
    started = _python("main.py", "start", "A-1003")
    assert started.returncode == 0, started.stderr
    [run_id] = re.findall(r"python main\.py answer (\S+) approve", started.stdout)
    assert asyncio.run(_recorded(state, run_id))[0] is RunStatus.WAITING_ANSWER

    answered = _python("main.py", "answer", run_id, "approve")
    assert answered.returncode == 0, answered.stderr

    assert started.stdout.replace(run_id, "<run id>") == readme_block("Expected output of start")
    assert answered.stdout == readme_block("Expected output of answer")
    status, kinds = asyncio.run(_recorded(state, run_id))
    assert status is RunStatus.COMPLETED
    assert kinds == [
        "run.started",
        "step.completed",
        "report",
        "run.interrupted",
        "answer.recorded",
        "run.resumed",
        "step.completed",
        "run.completed",
    ]
    # The refund happened once, in the answering process; the replay did not repeat the look-up.
    assert Path(os.environ["REFUND_LEDGER"]).read_text().splitlines() == [
        '{"order_id": "A-1003", "amount": 120.0}'
    ]


def test_an_answer_that_is_not_an_option_is_refused_and_the_run_stays_parked(
    state: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert example.main(["start", "A-1004"]) == 0
    [run_id] = re.findall(r"answer (\S+) approve", capsys.readouterr().out)

    assert example.main(["answer", run_id, "maybe"]) == 2
    assert "one of the offered options" in capsys.readouterr().err

    status, kinds = asyncio.run(_recorded(state, run_id))
    assert status is RunStatus.WAITING_ANSWER
    assert kinds[-1] == AnswerRefused.KIND
    assert example.main(["pending"]) == 0
    assert capsys.readouterr().out == f"{run_id}  refund  Refund 35.50 EUR to Ada for A-1004?\n"
    assert not Path(os.environ["REFUND_LEDGER"]).exists()


def test_the_cli_answers_the_same_runs(state: str, capsys: pytest.CaptureFixture[str]) -> None:
    example.main(["start", "A-1003"])
    [run_id] = re.findall(r"answer (\S+) approve", capsys.readouterr().out)

    done = subprocess.run(
        [sys.executable, "-m", "agentdeck", "runs", "answer", run_id, "reject", *PROJECT_ARGS],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )

    assert done.returncode == 0, done.stdout + done.stderr
    status, kinds = asyncio.run(_recorded(state, run_id))
    assert status is RunStatus.COMPLETED and kinds[-1] == "run.completed"
    assert not Path(os.environ["REFUND_LEDGER"]).exists(), "a rejected refund is never issued"
