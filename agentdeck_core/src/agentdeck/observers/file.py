"""``FileObserver``: one JSON line per event, appended to a file, readable back into events."""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

import anyio.to_thread

from agentdeck.errors import ConfigError, EventSchemaError
from agentdeck.model.events import Event
from agentdeck.ports import Observer

__all__ = ["FileObserver"]

_STOP = None


class FileObserver(Observer):
    """Appends each event as one line of JSON -- exactly :meth:`Event.to_json` -- to ``path``.

    :meth:`emit` only queues the line; a writer thread the observer owns appends whatever has
    queued since its last write in one batch and flushes it, so the event loop never waits on
    the disk and a ``tail -f`` sees events as they happen. :meth:`close` writes out the rest and
    stops the thread. The file is opened for appending when the deck opens (a missing directory
    refuses the open), so several decks' runs can share one file across restarts.

    :meth:`read` turns such a file back into :class:`~agentdeck.model.events.Event` objects.
    """

    def __init__(
        self, path: str | os.PathLike[str], view: Callable[[Event], bool] | None = None
    ) -> None:
        self.path = Path(path)
        self.view = view
        self._lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._failure: OSError | None = None

    async def start(self) -> None:
        if self._writer is not None:
            return
        try:
            file = await anyio.to_thread.run_sync(self._open)
        except OSError as exc:
            raise ConfigError(
                f"FileObserver cannot append to {str(self.path)!r}: {exc.strerror or exc}; "
                "give it a path in an existing, writable directory",
                setting="path",
            ) from None
        self._failure = None
        self._writer = threading.Thread(
            target=self._write_until_stopped,
            args=(file,),
            name=f"agentdeck-file-observer:{self.path.name}",
            daemon=True,
        )
        self._writer.start()

    async def emit(self, event: Event) -> None:
        if self._writer is None:
            raise ConfigError(
                "FileObserver received an event before start(); a deck starts its observers "
                "when it opens, a caller driving one by hand must await start() first"
            )
        if self._failure is not None:
            # Surfaces to the deck's observer hub, which disables this observer and retries.
            raise self._failure
        self._lines.put(event.to_json() + "\n")

    async def close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is None:
            return
        self._lines.put(_STOP)
        # Abandoned (not cancelled) when the caller's time runs out: the daemon thread finishes
        # its last batch on its own.
        await anyio.to_thread.run_sync(writer.join, abandon_on_cancel=True)

    @staticmethod
    def read(path: str | os.PathLike[str]) -> Iterator[Event]:
        """The events a :class:`FileObserver` wrote to ``path``, in the order they were written.

        A malformed line is an :class:`~agentdeck.errors.EventSchemaError` naming its line
        number. A last line without its newline was cut short by a crash mid-write and is not
        an event: it is skipped.
        """
        with open(path, encoding="utf-8", newline="\n") as file:
            for number, line in enumerate(file, start=1):
                if not line.strip():
                    continue
                try:
                    yield Event.from_json(line)
                except EventSchemaError as exc:
                    if not line.endswith("\n"):
                        return
                    raise EventSchemaError(
                        f"{os.fspath(path)} line {number}: {exc.message}",
                        kind=exc.kind,
                        field=exc.field,
                    ) from None

    def _open(self) -> TextIO:
        return open(self.path, "a", encoding="utf-8", newline="\n")

    def _write_until_stopped(self, file: TextIO) -> None:
        with file:
            stopping = False
            while not stopping:
                batch = [self._lines.get()]
                while True:
                    try:
                        batch.append(self._lines.get_nowait())
                    except queue.Empty:
                        break
                stopping = _STOP in batch
                try:
                    file.writelines(line for line in batch if line is not None)
                    file.flush()
                except OSError as exc:  # a full disk, say: lost lines, reported by emit
                    self._failure = exc
                else:
                    self._failure = None

    def __repr__(self) -> str:
        return f"FileObserver({str(self.path)!r}, view={self.view!r})"
