"""``agentdeck serve --workers N`` as the deployment guide runs it: the guide's configuration
starts, and ``GET /metrics`` behind several worker processes counts every worker's runs.

Each server is a real process tree on a free loopback port; the test waits for what it prints
and for what the store records (never for time) and stops it with SIGTERM.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import httpx
import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.multiprocess import MultiProcessCollector

WORKFLOW = """\
from agentdeck import workflow


@workflow
async def add(a: int, b: int) -> int:
    return a + b
"""

BOUND = 90.0  # seconds: a hang detector, never a timing
GUIDE = Path(__file__).parents[1] / "docs" / "deployment.md"


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

    def until(self, pattern: str) -> None:
        while True:
            try:
                line = self._lines.get(timeout=BOUND)
            except queue.Empty:
                raise AssertionError(f"{pattern!r} never printed:\n{''.join(self.seen)}") from None
            self.seen.append(line)
            if not line:
                raise AssertionError(f"exited before {pattern!r}:\n{''.join(self.seen)}")
            if re.search(pattern, line):
                return


def free_port() -> int:
    with socket.socket() as probe:  # several workers share one listening socket: pick one
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    bundle = tmp_path / ".agentdeck" / "workflows" / "add"
    bundle.mkdir(parents=True)
    (bundle / "workflow.py").write_text(WORKFLOW, encoding="utf-8")
    return tmp_path / ".agentdeck"


@pytest.fixture
def base_env(tmp_path: Path) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("AGENTDECK_", "OTEL_", "LANGFUSE_", "PROMETHEUS_"))
    }
    env["AGENTDECK_STATE"] = f"sqlite:///{tmp_path / 'state.db'}"  # shared by the workers
    return env


@pytest.fixture
def servers() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()


def serve(
    started: list[subprocess.Popen[str]], project: Path, env: dict[str, str], *flags: str
) -> tuple[subprocess.Popen[str], Lines]:
    process = subprocess.Popen(
        [sys.executable, "-m", "agentdeck", "serve", "--project", str(project), *flags],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=project.parent,
        env=env,
    )
    started.append(process)
    assert process.stderr is not None
    return process, Lines(process.stderr)


def run_once(base: str) -> None:
    """Start one run on a fresh connection (so the workers share them) and wait for its end."""
    with httpx.Client(base_url=base, timeout=BOUND, headers={"Connection": "close"}) as client:
        started = client.post("/runs", json={"name": "add", "input": {"a": 1, "b": 2}})
        assert started.status_code == 201, started.text
        with client.stream("GET", f"/runs/{started.json()['id']}/events") as events:
            kinds = [line for line in events.iter_lines() if line.startswith("event:")]
    assert kinds[-1] == "event: run.completed"


def started_by_worker(directory: Path) -> dict[str, float]:
    """Runs each worker process counted, read from its own files alone."""
    counted: dict[str, float] = {}
    for file in directory.glob("counter_*.db"):
        pid = file.stem.split("_", 1)[1]
        alone = directory.parent / f"alone-{pid}"
        alone.mkdir(exist_ok=True)
        shutil.copy(file, alone / file.name)
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=str(alone))
        counted[pid] = sum(
            sample.value
            for family in registry.collect()
            if family.name == "agentdeck_runs_started"
            for sample in family.samples
            if sample.name == "agentdeck_runs_started_total"
        )
    return counted


def test_one_scrape_counts_the_runs_of_every_worker(
    project: Path,
    base_env: dict[str, str],
    servers: list[subprocess.Popen[str]],
    tmp_path: Path,
) -> None:
    shared = tmp_path / "metrics"
    shared.mkdir()  # empty when the server starts, as prometheus-client requires
    port = free_port()
    env = {**base_env, "PROMETHEUS_MULTIPROC_DIR": str(shared)}
    server, log = serve(servers, project, env, "--port", str(port), "--workers", "2")
    log.until("Application startup complete")
    log.until("Application startup complete")  # both workers opened their deck
    base = f"http://127.0.0.1:{port}"

    sent = 0
    threads: list[threading.Thread] = []
    while sent < 200:  # until both workers have played runs (bounded; the kernel decides)
        threads = [threading.Thread(target=run_once, args=(base,)) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(BOUND)
        sent += len(threads)
        if len([n for n in started_by_worker(shared).values() if n > 0]) >= 2:
            break
    per_worker = started_by_worker(shared)
    assert len([n for n in per_worker.values() if n > 0]) == 2, per_worker
    assert sum(per_worker.values()) == sent

    scraped = httpx.get(f"{base}/metrics", timeout=BOUND)
    server.send_signal(signal.SIGTERM)

    assert scraped.status_code == 200
    text = scraped.text
    assert f'agentdeck_runs_started_total{{name="add"}} {float(sent)}' in text
    assert f'agentdeck_runs_finished_total{{name="add",status="completed"}} {float(sent)}' in text
    assert (
        f'agentdeck_run_duration_seconds_count{{name="add",status="completed"}} {float(sent)}'
        in text
    )
    assert server.wait(timeout=BOUND) == 0


def guide_exports() -> dict[str, str]:
    """The telemetry ``export`` lines of the deployment guide, exactly as written."""
    text = GUIDE.read_text(encoding="utf-8")
    exports = dict(re.findall(r"^export ((?:AGENTDECK_OTEL|OTEL)_\w+)=(\S+)", text, re.M))
    assert exports, "the deployment guide no longer configures telemetry"
    return exports


def guide_serve_flags() -> list[str]:
    """The guide's ``agentdeck serve`` flags, loopback and a free port in place of its own."""
    text = GUIDE.read_text(encoding="utf-8")
    [command] = re.findall(r"^agentdeck serve (.+)$", text, re.M)
    flags = command.split()
    flags[flags.index("--host") + 1] = "127.0.0.1"
    flags[flags.index("--port") + 1] = str(free_port())
    return flags


def test_the_deployment_guides_configuration_serves_as_written(
    project: Path, base_env: dict[str, str], servers: list[subprocess.Popen[str]]
) -> None:
    exports = guide_exports()
    assert exports["AGENTDECK_OTEL_ENDPOINT"].startswith("http://otel-collector:")
    flags = guide_serve_flags()
    workers = int(flags[flags.index("--workers") + 1])
    port = flags[flags.index("--port") + 1]
    server, log = serve(servers, project, {**base_env, **exports}, *flags)
    for _ in range(workers):
        log.until("Application startup complete")  # every worker built its OTLP observer

    health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=BOUND)
    server.send_signal(signal.SIGTERM)

    assert health.status_code == 200
    assert server.wait(timeout=BOUND) == 0
