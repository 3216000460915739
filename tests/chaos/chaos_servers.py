"""Private Redis and PostgreSQL servers the chaos suite may kill, started and stopped by PID.

The shared servers on 127.0.0.1:6379 and :5432 belong to every test on the machine; a test that
breaks a server must break its own. :class:`PrivateRedis` runs ``redis-server`` on a free port
with an fsynced append-only file; :class:`PrivatePostgres` runs a cluster made by ``initdb`` in
a temporary directory, as the ``postgres`` user when the suite runs as root (PostgreSQL refuses
to run as root). Both can be killed outright (``SIGKILL`` to the PID they reported) and
restarted on the same port, which is what an outage looks like to a client. Nothing is ever
stopped by name.

When a binary is missing the fixtures skip locally but fail under ``CI=true``: in CI a missing
server is a broken setup, not a reason to run fewer checks.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

__all__ = ["PrivatePostgres", "PrivateRedis", "free_port", "require_binary"]

_READY_WITHIN = 30.0


def free_port() -> int:
    """A TCP port nothing on 127.0.0.1 listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def require_binary(name: str) -> str:
    """The path of ``name``; a skip locally, a failure under ``CI=true``, when it is missing."""
    found = shutil.which(name)
    if found is None:
        message = f"{name} is not on PATH; the chaos suite needs it to start a private server"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


def _wait_for_port(port: int, process: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + _READY_WITHIN
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server on port {port} exited with {process.returncode}")
        with socket.socket() as probe:
            probe.settimeout(0.2)
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listened on port {port} within {_READY_WITHIN:g} s")


class PrivateRedis:
    """``redis-server`` on a free port, owned by this test, with an append-only file fsynced
    on every write in a temporary directory: what was acknowledged survives a ``SIGKILL``, as
    on a server configured for durability, so a restart shows what a client left behind."""

    def __init__(self) -> None:
        self.binary = require_binary("redis-server")
        self.port = free_port()
        self._root = Path(tempfile.mkdtemp(prefix="agentdeck-chaos-redis-"))
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self._process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--dir",
                str(self._root),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_for_port(self.port, self._process)

    def kill(self) -> None:
        """``SIGKILL`` the server (an outage, not a shutdown) and reap it."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=10)

    def restart(self) -> None:
        self.kill()
        self.start()

    def destroy(self) -> None:
        self.kill()
        shutil.rmtree(self._root, ignore_errors=True)


class PrivatePostgres:
    """A PostgreSQL cluster made by ``initdb`` in a temporary directory, trust auth, owned by
    this test; run as the ``postgres`` user when we are root."""

    def __init__(self) -> None:
        self.initdb = require_binary("initdb")
        self.postgres = require_binary("postgres")
        self.port = free_port()
        self._root = Path(tempfile.mkdtemp(prefix="agentdeck-chaos-pg-"))
        self.data = self._root / "data"
        self._process: subprocess.Popen[bytes] | None = None
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            runuser = require_binary("runuser")
            shutil.chown(self._root, user="postgres", group="postgres")
            self._as_user = [runuser, "-u", "postgres", "--"]
        subprocess.run(
            [
                *self._as_user,
                self.initdb,
                "-D",
                str(self.data),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        # exec: the PID we hold is the postmaster's own, not runuser's.
        self._process = subprocess.Popen(
            [
                *self._as_user,
                self.postgres,
                "-D",
                str(self.data),
                "-p",
                str(self.port),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                f"unix_socket_directories={self._root}",
                "-c",
                "fsync=off",
                "-c",
                "max_connections=200",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_for_port(self.port, self._process)
        self._wait_until_accepting()

    def _wait_until_accepting(self) -> None:
        import psycopg

        deadline = time.monotonic() + _READY_WITHIN
        while True:
            try:
                with psycopg.connect(self.url, connect_timeout=2):
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def _postmaster_pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def kill(self) -> None:
        """``SIGKILL`` the postmaster and its backends (an outage, not a shutdown)."""
        process, self._process = self._process, None
        pid = self._postmaster_pid()
        children: list[int] = []
        if pid is not None:
            # Stopped first, so it forks no backend between the listing and the kill; killed
            # with its backends, which would otherwise serve their connections a while longer.
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
            listed = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
            children = [int(child) for child in listed.stdout.split()]
            for victim in [*children, pid]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(victim, signal.SIGKILL)
        if process is not None:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        deadline = time.monotonic() + 10
        for victim in [*children, *([pid] if pid is not None else [])]:
            while _alive(victim) and time.monotonic() < deadline:
                time.sleep(0.05)

    def restart(self) -> None:
        self.kill()
        (self.data / "postmaster.pid").unlink(missing_ok=True)
        self.start()

    def destroy(self) -> None:
        self.kill()
        shutil.rmtree(self._root, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
