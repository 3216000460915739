"""``python -m jack ask``: offline (no key) it runs the whole application on the stand-in model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jack.cli import main

PROVIDER_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "JACK_DOCS_ROOT")


@pytest.fixture(autouse=True)
def no_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)


def test_ask_runs_the_module_and_prints_the_streamed_answer(docs_root: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_ENV}
    finished = subprocess.run(
        [sys.executable, "-m", "jack", "ask", "How do I pause a run?", "--docs-root", docs_root],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.startswith("From Runs and control > Pausing and resuming a run:\n")
    assert "`await run.pause()` records a pause request" in finished.stdout
    assert "Source: docs/runs-and-control#pausing-and-resuming-a-run\n" in finished.stdout
    assert "Offline stand-in model" in finished.stdout
    assert finished.stderr.splitlines() == [
        "[search_docs {'query': 'How do I pause a run?'}]",
        "[read_doc {'slug': 'docs/runs-and-control#pausing-and-resuming-a-run'}]",
    ]


def test_ask_with_events_prints_the_run_as_it_happens(
    docs_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", "How do I cancel a run?", "--events", "--docs-root", str(docs_root)]) == 0
    lines = capsys.readouterr().err.splitlines()
    kinds = [line.split()[1] for line in lines]
    assert kinds[0] == "run.started" and kinds[-1] == "run.completed"
    assert "tool.call.completed" in kinds and "usage.reported" in kinds  # the local view is whole
    assert lines[-1].endswith("run.completed        3 model calls, 45 tokens")


def test_a_question_the_docs_do_not_cover_gets_said_so(
    docs_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", "Kubernetes helm chart?", "--docs-root", str(docs_root)]) == 0
    assert capsys.readouterr().out.startswith("The AgentDeck documentation does not cover that.")


def test_a_docs_root_without_docs_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", "Anything?", "--docs-root", str(tmp_path)]) == 2
    assert "no documentation found under" in capsys.readouterr().err


def test_a_run_that_fails_exits_1_and_says_how_it_ended(
    docs_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("JACK_TOKENS_PER_TURN", "20")  # the stand-in reports 15 tokens per call
    assert main(["ask", "How do I pause a run?", "--docs-root", str(docs_root)]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        "jack: the run ended run.failed (budget_exceeded: total tokens: 30 used, budget 20)"
    )
