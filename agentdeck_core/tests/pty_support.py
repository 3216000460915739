"""A command on a pseudo-terminal, driven the way a person at a keyboard would (stdlib only).

The child gets the pty as its controlling terminal, so a typed Ctrl-C (``\\x03``) reaches it as
SIGINT from the terminal driver and Ctrl-D (``\\x04``) as end of input, exactly as at a real
terminal. Waiting is for output, never for time: :meth:`PtyProcess.expect` reads until the text
appears and fails (showing everything read) only if the child stops or a generous bound passes.
Loaded by path from the tests that need it (the core's and the repository's cross-package ones).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import select
import struct
import subprocess
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["PtyProcess"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
BOUND = 60.0
"""Seconds an expectation may take before the test fails: a hang detector, not a timing."""


def _take_terminal() -> None:
    # In the child, after setsid(): make the pty (its stdin) the controlling terminal.
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PtyProcess:
    """``argv`` running on a fresh pseudo-terminal 120 columns wide."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.process = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
            preexec_fn=_take_terminal,  # the child only execs afterwards
        )
        os.close(slave)
        self.fd = master
        self.output = ""
        """Everything read so far: ANSI sequences removed, ``\\r\\n`` as ``\\n``."""
        self._position = 0
        self._closed = False

    def expect(self, text: str) -> str:
        """Read until ``text`` appears after the previous match; return what came before it."""
        deadline = time.monotonic() + BOUND
        while True:
            found = self.output.find(text, self._position)
            if found >= 0:
                before = self.output[self._position : found]
                self._position = found + len(text)
                return before
            if self._closed or not self._read(deadline - time.monotonic()):
                unread = self.output[self._position :]
                raise AssertionError(
                    f"{text!r} never appeared; the terminal showed:\n{unread}"
                    f"\n--- everything ---\n{self.output}"
                )

    def send(self, keys: str) -> None:
        os.write(self.fd, keys.encode("utf-8"))

    def sendline(self, line: str) -> None:
        self.send(line + "\r")  # Enter; the terminal driver turns it into "\n"

    def interrupt(self) -> None:
        self.send("\x03")

    def end_input(self) -> None:
        self.send("\x04")

    def wait(self) -> int:
        """Read everything until the child closes the terminal; its exit status."""
        deadline = time.monotonic() + BOUND
        while not self._closed and self._read(deadline - time.monotonic()):
            pass
        return self.process.wait(timeout=max(1.0, deadline - time.monotonic()))

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def _read(self, timeout: float) -> bool:
        """Read what is available within ``timeout``; ``False`` when nothing more will come."""
        if timeout <= 0:
            return False
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # EIO: the child closed its end
            chunk = b""
        if not chunk:
            self._closed = True
            return False
        text = chunk.decode("utf-8", errors="replace").replace("\r\n", "\n")
        self.output += _ANSI.sub("", text)
        return True
