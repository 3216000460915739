"""``agentdeck build``, ``run`` and ``serve``: the commands that load a project directory.

Projects are real ``.agentdeck/`` directories written into a temporary directory; ``run`` keeps
its runs in a named in-memory store (``AGENTDECK_STATE=memory://<name>``), so a later command
in this process reads the same runs.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest

from agentdeck.cli import main

APPROVE = """\
from agentdeck import WorkflowCtx, workflow


@workflow
async def approve(order_id: str, ctx: WorkflowCtx) -> dict:
    await ctx.report("checking", order_id=order_id)
    decision = await ctx.ask({"question": f"approve {order_id}?"}, options=["y", "n"])
    return {"order_id": order_id, "approved": decision == "y"}
"""

GREET = """\
from agentdeck import WorkflowCtx, workflow


@workflow
async def greet(name: str, ctx: WorkflowCtx) -> str:
    await ctx.step("lookup", lambda: name.upper())
    return f"hello {name}"


@workflow
async def explode(ctx: WorkflowCtx) -> str:
    raise RuntimeError("boom: secret detail")
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, source in (("approve", APPROVE), ("greet", GREET)):
        bundle = tmp_path / ".agentdeck" / "workflows" / name
        bundle.mkdir(parents=True)
        (bundle / "workflow.py").write_text(source, encoding="utf-8")
    for name in ("AGENTDECK_EVENTS", "AGENTDECK_CONTROL", "AGENTDECK_CONFIG", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTDECK_STATE", f"memory://cli-project-{uuid.uuid4().hex[:10]}")
    monkeypatch.chdir(tmp_path)
    return tmp_path / ".agentdeck"


# =========================================================================== build


def test_build_validates_a_project_and_lists_what_it_compiled(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["build"]) == 0
    text = capsys.readouterr().out
    assert main(["build", str(project), "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)

    assert text.strip() == "+ .agentdeck: approve (workflow), explode (workflow), greet (workflow)"
    assert listing == {
        "ok": True,
        "project": str(project),
        "invocables": {"approve": "workflow", "explode": "workflow", "greet": "workflow"},
    }


def test_build_fails_with_status_1_naming_the_broken_bundle(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = project / "workflows" / "broken"
    broken.mkdir()
    (broken / "workflow.py").write_text("def oops(:\n", encoding="utf-8")

    assert main(["build"]) == 1
    err = capsys.readouterr().err
    assert main(["build", "--json"]) == 1
    outcome = json.loads(capsys.readouterr().out)

    assert "broken" in err and "workflow.py" in err
    assert outcome["ok"] is False and "workflow.py" in outcome["error"]


def test_build_of_a_missing_directory_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)

    assert main(["build", "nowhere"]) == 1
    assert "project directory" in capsys.readouterr().err


# =========================================================================== run


def test_run_streams_a_workflow_to_its_result(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "greet", '{"name": "ada"}']) == 0

    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("> greet (workflow) run ")
    assert lines[1:] == [". step lookup -> ADA", "-> hello ada", "+ completed"]


def test_run_json_prints_the_canonical_events(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "greet", "ada", "--json", "--key", "k-1"]) == 0

    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["kind"] for e in events] == ["run.started", "step.completed", "run.completed"]
    assert events[0]["payload"]["key"] == "k-1"
    assert events[0]["payload"]["input"] == [{"type": "data", "data": "ada"}]  # not JSON: text


def test_a_parked_run_exits_3_and_can_be_answered_by_the_next_command(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "approve", '{"order_id": "A-1"}', "--namespace", "acme"]) == 3
    out = capsys.readouterr().out
    run_id = out.splitlines()[0].split()[-1]

    # The command closed its deck right after the run parked; nothing it did in closing (its
    # runtime asks playing runs to pause) may hold the answer back.
    assert "? approve A-1?  [y/n]" in out
    assert f"answer it with: agentdeck runs answer {run_id} VALUE" in out
    assert main(["runs", "answer", run_id, "y", "--project", str(project)]) == 0
    answered = capsys.readouterr().out
    assert '-> {"order_id": "A-1", "approved": true}' in answered
    assert main(["runs", "list", "--namespace", "acme", "--json"]) == 0
    [record] = json.loads(capsys.readouterr().out)["runs"]
    assert record["status"] == "completed"


def test_a_failing_run_exits_1_without_leaking_the_exception_text(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "explode"]) == 1

    out = capsys.readouterr().out
    assert "x failed (engine_error in explode): RuntimeError" in out
    assert "secret detail" not in out


def test_run_of_an_unknown_name_lists_what_there_is(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "nobody", "hi"]) == 1

    assert "available: approve, explode, greet" in capsys.readouterr().err


def test_run_of_input_with_the_wrong_type_exits_1_naming_the_parameter_and_starts_nothing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "greet", '{"name": ["ada"]}']) == 1

    captured = capsys.readouterr()
    assert "workflow 'greet' input 'name' must be str" in captured.err
    assert "> greet" not in captured.out  # refused before a run was started


def test_run_reads_its_input_from_stdin_given_a_dash(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO('{"name": "bob"}'))

    assert main(["run", "greet", "-"]) == 0
    assert "-> hello bob" in capsys.readouterr().out


# =========================================================================== serve


def test_serve_without_the_http_plugin_exits_1_naming_it(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whatever is installed here, make the plugin's package unimportable, as if it were not.
    monkeypatch.setitem(sys.modules, "agentdeck_http", None)

    assert main(["serve", "--port", "0"]) == 1

    err = capsys.readouterr().err
    assert "agentdeck serve needs the agentdeck-http plugin" in err
    assert "pip install agentdeck-http" in err
