"""The journal file: an append-only sequence of JSON records, one per line, fsynced per write.

Everything the store changes is one record -- a batch of events, an engine-state write, a prune
-- and a record is acknowledged only once it has reached the disk, so the file alone rebuilds
the store after a crash. A record cut off by a crash (a last line without its newline, or one
that does not parse) was never acknowledged: :meth:`JournalFile.replay` drops it and truncates
the file there. Damage anywhere else is a :class:`~agentdeck.errors.StoreError`, never a guess.

One process owns a journal at a time: :meth:`JournalFile.open` takes an exclusive ``flock`` on
it (POSIX), so a second store on the same file -- in this process or another -- is refused
rather than allowed to interleave writes.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentdeck.errors import StoreError

__all__ = ["BACKEND", "JournalFile"]

BACKEND = "journal"


class JournalFile:
    """One open journal file. Blocking I/O: the store calls it from a worker thread."""

    def __init__(self, path: Path, url: str) -> None:
        self.path = path
        self._url = url
        self._fd: int | None = None
        self._size = 0

    def open(self) -> None:
        """Create the file (and its directory) if missing, and take it for this store alone."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        except OSError as failed:
            raise self._error(f"cannot open the journal: {failed.strerror}") from failed
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise self._error(
                "the journal is in use by another store (a journal has one owner at a time; "
                "close the other deck, or use a shared store such as sqlite:// or postgresql://)"
            ) from None
        self._fd = fd
        self._size = os.fstat(fd).st_size

    def replay(self) -> Iterator[dict[str, Any]]:
        """Every acknowledged record, oldest first; a torn last record is cut off the file."""
        fd = self._require_open()
        with open(os.dup(fd), "rb", closefd=True) as reader:
            reader.seek(0)
            offset = 0
            for number, line in enumerate(reader, start=1):
                complete = line.endswith(b"\n")
                try:
                    record = json.loads(line) if complete else None
                except ValueError:
                    record = None
                if not isinstance(record, dict):
                    if reader.read(1):  # more follows: this is damage, not a torn last write
                        raise self._error(f"line {number} of the journal is not a record")
                    os.ftruncate(fd, offset)
                    os.fsync(fd)
                    self._size = offset
                    return
                offset += len(line)
                yield record

    def write(self, record: dict[str, Any]) -> None:
        """Append one record and return once it is on disk; on failure, leave no trace of it."""
        fd = self._require_open()
        data = memoryview((json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8"))
        try:
            while data:
                written = os.write(fd, data)
                data = data[written:]
            os.fsync(fd)
        except OSError as failed:
            os.ftruncate(fd, self._size)  # a partial line would poison every later record
            raise self._error(f"cannot write the journal: {failed.strerror}") from failed
        self._size = os.fstat(fd).st_size

    def close(self) -> None:
        """Release the file and its lock. Idempotent."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the flock

    def _require_open(self) -> int:
        if self._fd is None:
            raise self._error("the store is not open (call open() first)")
        return self._fd

    def _error(self, message: str) -> StoreError:
        return StoreError(message, backend=BACKEND, url=self._url)
