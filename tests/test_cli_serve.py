"""``agentdeck serve``: a real server of a project, reachable over HTTP and from ``runs``.

The server is a separate process; the test waits for what it prints (never for time), talks to it
with ``httpx`` on loopback, reads the same run back with the ``runs`` commands through the shared
SQLite file, and stops it with SIGTERM, which drains and exits cleanly.
"""

from __future__ import annotations

import json
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from agentdeck.cli import main

WORKFLOW = """\
from agentdeck import WorkflowCtx, workflow


@workflow
async def approve(order_id: str, ctx: WorkflowCtx) -> dict:
    decision = await ctx.ask({"question": f"approve {order_id}?"}, options=["y", "n"])
    return {"order_id": order_id, "approved": decision == "y"}
"""

BOUND = 60.0  # seconds: a hang detector, never a timing
Spawn = Callable[..., Any]


class Lines:
    """A child's output lines, read by a thread so every wait is bounded."""

    def __init__(self, stream: IO[str]) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line)
        self._lines.put("")

    def until(self, pattern: str) -> re.Match[str]:
        while True:
            try:
                line = self._lines.get(timeout=BOUND)
            except queue.Empty:
                raise AssertionError(f"{pattern!r} never printed:\n{''.join(self.seen)}") from None
            self.seen.append(line)
            if not line:
                raise AssertionError(f"exited before {pattern!r}:\n{''.join(self.seen)}")
            found = re.search(pattern, line)
            if found:
                return found


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bundle = tmp_path / ".agentdeck" / "workflows" / "approve"
    bundle.mkdir(parents=True)
    (bundle / "workflow.py").write_text(WORKFLOW, encoding="utf-8")
    for name in ("AGENTDECK_EVENTS", "AGENTDECK_CONTROL", "AGENTDECK_CONFIG", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTDECK_STATE", f"sqlite:///{tmp_path / 'state.db'}")
    monkeypatch.setenv("AGENTDECK_RUNTIME_SWEEP_INTERVAL_SECONDS", "0.1")  # the server's sweep
    monkeypatch.chdir(tmp_path)
    return tmp_path / ".agentdeck"


@pytest.fixture
def serve(project: Path) -> Iterator[Spawn]:
    started: list[subprocess.Popen[str]] = []

    def start(*options: str) -> tuple[subprocess.Popen[str], Lines]:
        process = subprocess.Popen(
            [sys.executable, "-m", "agentdeck", "serve", "--project", str(project), *options],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=project.parent,
        )
        started.append(process)
        assert process.stderr is not None
        return process, Lines(process.stderr)

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_serve_answers_over_http_and_the_cli_reads_the_same_run(
    serve: Spawn, capsys: pytest.CaptureFixture[str]
) -> None:
    server, log = serve("--port", "0")
    port = int(log.until(r"Uvicorn running on http://127\.0\.0\.1:(\d+)").group(1))
    base = f"http://127.0.0.1:{port}"

    health = httpx.get(f"{base}/health", timeout=BOUND)
    started = httpx.post(
        f"{base}/runs", json={"name": "approve", "input": {"order_id": "H-1"}}, timeout=BOUND
    )
    run_id = started.json()["id"]
    assert main(["runs", "tail", run_id, "--json"]) == 3  # it parked on its question
    capsys.readouterr()
    assert main(["runs", "answer", run_id, "y"]) == 0  # recorded; the server plays it on
    capsys.readouterr()
    assert main(["runs", "tail", run_id, "--json"]) == 0
    kinds = [json.loads(line)["kind"] for line in capsys.readouterr().out.splitlines()]
    server.send_signal(signal.SIGTERM)

    assert health.status_code == 200 and health.json()["workflows"] == ["approve"]
    assert started.status_code == 201
    assert kinds[-3:] == ["answer.recorded", "run.resumed", "run.completed"]
    assert server.wait(timeout=BOUND) == 0


def test_serve_with_workers_hands_over_to_uvicorn(serve: Spawn) -> None:
    with socket.socket() as probe:  # a free port: several workers share one listening socket
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server, log = serve("--port", str(port), "--workers", "2")
    log.until("Application startup complete")
    log.until("Application startup complete")  # both workers opened their deck

    health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=BOUND)
    server.send_signal(signal.SIGTERM)

    assert health.status_code == 200 and health.json()["workflows"] == ["approve"]
    assert server.wait(timeout=BOUND) == 0


def test_serve_refuses_zero_workers(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--workers", "0"]) == 2
    assert "--workers takes a number >= 1" in capsys.readouterr().err


def test_serve_of_a_broken_project_fails_before_starting(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "workflows" / "approve" / "workflow.py").write_text("def (:\n", encoding="utf-8")

    assert main(["serve", "--workers", "2"]) == 2
    assert "workflow.py" in capsys.readouterr().err
