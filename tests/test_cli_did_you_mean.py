"""A mistyped command, subcommand, choice or invocable name is answered with the closest names."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from agentdeck.cli import main

WORKFLOW = """\
from agentdeck import workflow


@workflow
async def refund(order_id: str) -> str:
    return order_id
"""


@pytest.mark.parametrize(
    ("arguments", "suggested"),
    [
        (["rnus", "list"], "did you mean 'runs'?"),
        (["runs", "lst"], "did you mean 'list'?"),
        (["--log-level", "debug", "runs", "shwo", "r-1"], "did you mean 'show'?"),
        (["runs", "signal", "r-1", "pasue"], "did you mean 'pause'?"),
        (["runs", "list", "--status", "runing"], "did you mean 'running'?"),
        (["completion", "zhs"], "did you mean 'zsh'?"),
    ],
    ids=" ".join,
)
def test_an_unknown_name_exits_2_suggesting_the_closest(
    arguments: list[str], suggested: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(arguments) == 2

    err = capsys.readouterr().err
    assert "invalid choice" in err and err.rstrip().endswith(suggested)


def test_nothing_close_suggests_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["xyzzy"]) == 2

    err = capsys.readouterr().err
    assert "invalid choice: 'xyzzy'" in err and "did you mean" not in err


def test_an_unknown_workflow_name_suggests_the_closest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = tmp_path / ".agentdeck" / "workflows" / "refund"
    bundle.mkdir(parents=True)
    (bundle / "workflow.py").write_text(WORKFLOW, encoding="utf-8")
    for name in ("AGENTDECK_EVENTS", "AGENTDECK_CONTROL", "AGENTDECK_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTDECK_STATE", f"memory://did-you-mean-{uuid.uuid4().hex[:8]}")
    monkeypatch.chdir(tmp_path)

    assert main(["run", "refnud", '{"order_id": "A-1"}']) == 1

    err = capsys.readouterr().err
    assert "available: refund" in err and "did you mean 'refund'?" in err
