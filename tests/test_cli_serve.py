"""``agentdeck serve``: a real server of a project, reachable over HTTP and from ``runs``.

The server is a separate process; the test waits for what it prints (never for time), talks to it
with ``httpx`` on loopback, reads the same run back with the ``runs`` commands through the shared
SQLite file, and stops it with SIGTERM, which drains and exits cleanly.
"""

from __future__ import annotations

import json
import os
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
    for name in list(os.environ):
        if name.startswith(("AGENTDECK_HTTP_", "AGENTDECK_SERVE_")):
            monkeypatch.delenv(name)
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


# =========================================================================== the http settings

QUOTE = """\
from agentdeck import WorkflowCtx, workflow


@workflow
async def quote(item: str, ctx: WorkflowCtx[dict]) -> str:
    price = await ctx.step("price", lambda: 10 if ctx.data["plan"] == "pro" else 12)
    return f"{item} for {ctx.data['tenant']}: {price}"
"""

TENANCY = """\
import os
import sys


def tenant(call):
    return {"tenant": call.namespace, "plan": call.request.headers.get("x-plan", "free")}


print(f"tenancy imported in {os.getpid()}", file=sys.stderr, flush=True)
"""

KEYS = {"key-acme": ["acme"], "key-globex": ["globex"]}
ACME = {"Authorization": "Bearer key-acme", "x-plan": "pro"}
QUOTE_TEA = {"name": "quote", "input": {"item": "tea"}}


@pytest.fixture
def quoting(project: Path) -> Path:
    """The project gains a workflow that needs a context; next to it (the server's working
    directory) a context factory module, ``tenancy:tenant``, and a key file. Returns the file."""
    bundle = project / "workflows" / "quote"
    bundle.mkdir(parents=True)
    (bundle / "workflow.py").write_text(QUOTE, encoding="utf-8")
    (project.parent / "tenancy.py").write_text(TENANCY, encoding="utf-8")
    keys = project.parent / "keys.json"
    keys.write_text(json.dumps(KEYS), encoding="utf-8")
    return keys


def listening(log: Lines) -> str:
    return "http://127.0.0.1:" + log.until(r"Uvicorn running on http://127\.0\.0\.1:(\d+)").group(1)


def events(base: str, run_id: str, headers: dict[str, str]) -> list[tuple[str, Any]]:
    """The run's event stream as (event, data) pairs, as a client receives it."""
    received: list[tuple[str, Any]] = []
    event = ""
    with httpx.stream("GET", f"{base}/runs/{run_id}/events", headers=headers, timeout=BOUND) as r:
        for line in r.iter_lines():
            if line.startswith("event:"):
                event = line.removeprefix("event:").strip()
            elif line.startswith("data:"):
                received.append((event, json.loads(line.removeprefix("data:"))))
    return received


def assert_configured(base: str) -> None:
    """Keys required and scoped to namespaces, the factory's context reaching the workflow,
    and only ``run.*`` events streamed."""
    anonymous = httpx.post(f"{base}/runs", json=QUOTE_TEA, timeout=BOUND)
    wrong = httpx.post(f"{base}/runs", json=QUOTE_TEA, headers={"X-API-Key": "nope"}, timeout=BOUND)
    started = httpx.post(f"{base}/runs", json=QUOTE_TEA, headers=ACME, timeout=BOUND)
    run_id = started.json()["id"]
    received = events(base, run_id, ACME)
    foreign = httpx.get(f"{base}/runs/{run_id}", headers={"X-API-Key": "key-globex"}, timeout=BOUND)

    assert (anonymous.status_code, wrong.status_code) == (401, 401)
    assert started.status_code == 201 and started.json()["namespace"] == "acme"
    assert [kind for kind, _ in received] == ["run.started", "run.completed"]  # no step.*
    assert received[-1][1]["payload"]["output"][0]["data"] == "tea for acme: 10"
    assert foreign.status_code == 404  # another namespace's run does not exist for globex


def test_serve_builds_its_binding_from_the_http_settings(
    serve: Spawn, quoting: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTDECK_HTTP_API_KEYS_FILE", str(quoting))
    monkeypatch.setenv("AGENTDECK_HTTP_CONTEXT_FACTORY", "tenancy:tenant")
    monkeypatch.setenv("AGENTDECK_HTTP_PUBLIC_KINDS", "run.*")
    server, log = serve("--port", "0")
    base = listening(log)

    assert_configured(base)
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=BOUND) == 0


def test_serve_flags_win_over_the_http_settings(
    serve: Spawn, quoting: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTDECK_HTTP_API_KEYS", '{"env-key": null}')
    monkeypatch.setenv("AGENTDECK_HTTP_CONTEXT_FACTORY", "no_such_module:tenant")
    monkeypatch.setenv("AGENTDECK_HTTP_PUBLIC_KINDS", "step.*")
    server, log = serve(
        "--port",
        "0",
        "--api-keys-file",
        quoting.name,  # relative to the working directory
        "--context-factory",
        "tenancy:tenant",
        "--public-kinds",
        "run.started",
        "--public-kinds",
        "run.completed,run.failed",
    )
    base = listening(log)

    replaced = httpx.get(f"{base}/runs", headers={"X-API-Key": "env-key"}, timeout=BOUND)
    assert replaced.status_code == 401  # the file's keys replace the inline ones
    assert_configured(base)
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=BOUND) == 0


def test_every_worker_serves_the_same_configured_binding(
    serve: Spawn, quoting: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (quoting.parent / "config.yaml").write_text("http:\n  public_kinds: [run.*]\n")
    monkeypatch.setenv("AGENTDECK_HTTP_API_KEYS_FILE", str(quoting))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server, log = serve(
        "--port", str(port), "--workers", "2", "--context-factory", "tenancy:tenant"
    )
    log.until("Application startup complete")
    log.until("Application startup complete")
    importers = {
        int(found.group(1))
        for found in map(re.compile(r"tenancy imported in (\d+)").search, log.seen)
        if found
    }

    # the command checked the factory once itself, then each worker built the binding
    assert server.pid in importers and len(importers - {server.pid}) == 2
    for _ in range(4):  # whichever worker answers
        assert_configured(f"http://127.0.0.1:{port}")
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=BOUND) == 0


def run_serve(*options: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``agentdeck serve`` expected to refuse before listening (bounded if it does not)."""
    return subprocess.run(
        [sys.executable, "-m", "agentdeck", "serve", "--port", "0", *options],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=BOUND,
    )


@pytest.mark.parametrize("workers", [(), ("--workers", "2")], ids=["single", "workers"])
@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("AGENTDECK_HTTP_CONTEXT_FACTORY", "tenancy:missing", "has no attribute 'missing'"),
        ("AGENTDECK_HTTP_API_KEYS_FILE", "absent.json", "no file at 'absent.json'"),
        ("AGENTDECK_HTTP_API_KEYS", "not json", "is not JSON"),
        ("AGENTDECK_HTTP_PUBLIC_KINDS", "not a kind", "is not an event kind"),
    ],
)
def test_bad_http_settings_stop_serve_before_it_listens_naming_the_variable(
    quoting: Path,
    monkeypatch: pytest.MonkeyPatch,
    workers: tuple[str, ...],
    variable: str,
    value: str,
    says: str,
) -> None:
    monkeypatch.setenv(variable, value)

    refused = run_serve(*workers, cwd=quoting.parent)

    assert refused.returncode == 2
    assert variable in refused.stderr and says in refused.stderr
    assert "Uvicorn running" not in refused.stderr


def test_a_bad_flag_value_is_blamed_on_the_flag(quoting: Path) -> None:
    refused = run_serve("--context-factory", "tenancy:missing", cwd=quoting.parent)

    assert refused.returncode == 2
    assert "--context-factory" in refused.stderr and "has no attribute" in refused.stderr
