"""Worker processes driven by JSON lines: the client side of every multi-process test.

A test that races two decks, or kills one, needs real processes: a second event loop in this
one shares the interpreter, the GIL and every module-level cache, so it proves nothing about two
workers on one store. A worker script reads one JSON command a line on stdin and prints one
JSON reply a line on stdout; :class:`JsonLinesWorker` starts it, sends commands, reads replies
(with a deadline, so a hung worker fails the test instead of hanging it) and stops or kills it
by its PID.

Replies are read by a thread per worker into a queue, so two workers can be sent their commands
back to back and both be racing before either reply is read.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_WAIT", "JsonLinesWorker", "WorkerGone", "start_all"]

DEFAULT_WAIT = 60.0
"""Seconds to wait for a reply (generous: each worker starts its own Python)."""


class WorkerGone(AssertionError):
    """The worker exited, or gave no reply in time. An assertion: the test fails with it."""


class JsonLinesWorker:
    """One worker process (``python <script> <args>``) and a thread draining its stdout."""

    def __init__(
        self,
        script: str | Path,
        *args: str,
        env: Mapping[str, str] | None = None,
        wait: float = DEFAULT_WAIT,
    ) -> None:
        self.wait = wait
        self.process = subprocess.Popen(
            [sys.executable, str(script), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._drain, daemon=True).start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send(self, **command: Any) -> None:
        """Write one command line (``op=...`` plus its arguments)."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def reply(self, wait: float | None = None) -> dict[str, Any]:
        """The next reply; :class:`WorkerGone` (with the worker's stderr) if none comes."""
        limit = self.wait if wait is None else wait
        try:
            line = self._lines.get(timeout=limit)
        except queue.Empty:
            raise WorkerGone(f"worker {self.pid} gave no reply within {limit:g} s") from None
        if line is None:
            raise WorkerGone(f"worker {self.pid} exited: {self._stderr()}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def ask(self, **command: Any) -> dict[str, Any]:
        """Send one command and return its reply."""
        self.send(**command)
        return self.reply()

    def remaining(self) -> list[dict[str, Any]]:
        """Every line it printed until its stdout closed (after it died)."""
        lines: list[dict[str, Any]] = []
        while (line := self._lines.get(timeout=self.wait)) is not None:
            lines.append(json.loads(line))
        return lines

    def kill(self) -> int:
        """``SIGKILL`` the worker by its PID and reap it; its exit status."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        return self.process.wait(timeout=self.wait)

    def stop(self) -> None:
        """Ask the worker to exit (``{"op": "exit"}``); kill it if it does not."""
        if self.process.poll() is None:
            try:
                self.send(op="exit")
                self.process.wait(timeout=self.wait)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    def _stderr(self) -> str:
        """What the worker wrote on stderr, once it has exited (its stdout closed first)."""
        try:
            self.process.wait(timeout=self.wait)
        except subprocess.TimeoutExpired:
            return "(it closed its stdout but is still running)"
        if self.process.stderr is None:
            return ""
        return f"status {self.process.returncode}: {self.process.stderr.read()}"


def start_all(workers: Sequence[JsonLinesWorker]) -> None:
    """Wait for each worker's ``{"ready": true}``."""
    for worker in workers:
        reply = worker.reply()
        if reply != {"ready": True}:
            raise WorkerGone(f"worker {worker.pid} did not start: {reply}")
