"""Waking followers of a SQLite store: at once for this process's appends, by polling for others'.

SQLite has no notifications, so there are two paths:

* every store on one database file in this process shares one :class:`FollowHub`; a writer
  wakes the hub's followers of the runs it committed, right after the commit -- no polling;
* appends by *other processes* are noticed by the hub's watcher thread, which runs only while
  some follower is parked, reads ``PRAGMA data_version`` (it changes when another connection
  commits), and checks the parked runs' ``last_seq`` when it did. It polls with backoff: every
  10 ms while the file keeps changing, slowing to every 250 ms when it does not.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable

from agentdeck.storage.sql import chunks

__all__ = ["FollowHub", "acquire_hub", "release_hub"]

POLL_MIN = 0.01
POLL_MAX = 0.25


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def wake(futures: Iterable[asyncio.Future[None]]) -> None:
    """Resolve futures from any thread, each on its own loop."""
    for future in futures:
        if future.done():
            continue
        with contextlib.suppress(RuntimeError):  # a closed loop took its follower with it
            future.get_loop().call_soon_threadsafe(_resolve, future)


class FollowHub:
    """The parked followers of one database file in this process."""

    def __init__(self, path: str, connect: Callable[[], sqlite3.Connection]) -> None:
        self.path = path
        self._connect = connect
        self._cond = threading.Condition()
        self._parked: dict[str, dict[asyncio.Future[None], int]] = {}
        """run id -> {future: the seq its follower waits for}."""
        self._refs = 0
        self._stopping = False
        self._watcher: threading.Thread | None = None

    # -- followers ----------------------------------------------------------------------------

    def park(self, run_id: str, position: int) -> asyncio.Future[None]:
        """A future resolved once ``run_id`` may have an event at ``position`` (or on close)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with self._cond:
            first = not self._parked
            self._parked.setdefault(run_id, {})[future] = position
            if first:
                self._ensure_watcher()
                self._cond.notify_all()
        return future

    def unpark(self, run_id: str, future: asyncio.Future[None]) -> None:
        with self._cond:
            parked = self._parked.get(run_id)
            if parked is not None:
                parked.pop(future, None)
                if not parked:
                    del self._parked[run_id]

    def notify(self, run_ids: Iterable[str]) -> None:
        """Wake the followers of runs a writer in this process just committed to."""
        with self._cond:
            if not self._parked:
                return
            due = [future for run_id in run_ids for future in self._parked.get(run_id, {})]
        wake(due)

    # -- the watcher for other processes' commits ---------------------------------------------

    def _ensure_watcher(self) -> None:
        if self._watcher is None or not self._watcher.is_alive():
            self._watcher = threading.Thread(
                target=self._watch, name=f"agentdeck-sqlite-watch:{self.path}", daemon=True
            )
            self._watcher.start()

    def _watch(self) -> None:
        try:
            connection = self._connect()
        except Exception:  # the followers' own reads report the file's problem
            return
        try:
            version = _data_version(connection)
            interval = POLL_MIN
            while True:
                with self._cond:
                    while not self._parked and not self._stopping:
                        self._cond.wait()
                        interval = POLL_MIN
                    if self._stopping:
                        return
                    self._cond.wait(timeout=interval)
                    if self._stopping:
                        return
                    waiting = {run_id: dict(futures) for run_id, futures in self._parked.items()}
                if not waiting:
                    continue
                current = _data_version(connection)
                if current == version:
                    interval = min(interval * 2, POLL_MAX)
                    continue
                version, interval = current, POLL_MIN
                wake(_due(connection, waiting))
        except sqlite3.Error:
            return
        finally:
            connection.close()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()


def _data_version(connection: sqlite3.Connection) -> int:
    row = connection.execute("PRAGMA data_version").fetchone()
    return int(row[0])


def _due(
    connection: sqlite3.Connection, waiting: dict[str, dict[asyncio.Future[None], int]]
) -> list[asyncio.Future[None]]:
    """The parked futures whose runs now have the event their followers wait for."""
    last: dict[str, int] = {}
    for batch in chunks(list(waiting), 500):
        marks = ", ".join("?" * len(batch))
        rows = connection.execute(
            f"SELECT run_id, last_seq FROM agentdeck_runs WHERE run_id IN ({marks})", batch
        )
        last.update((run_id, seq) for run_id, seq in rows)
    return [
        future
        for run_id, futures in waiting.items()
        if run_id in last
        for future, position in futures.items()
        if last[run_id] >= position
    ]


_HUBS: dict[str, FollowHub] = {}
_HUBS_LOCK = threading.Lock()


def _after_fork_in_child() -> None:
    """A forked child has none of its parent's threads (nor their locks' owners)."""
    global _HUBS_LOCK
    _HUBS_LOCK = threading.Lock()
    _HUBS.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def acquire_hub(path: str, connect: Callable[[], sqlite3.Connection]) -> FollowHub:
    """The process's hub for the database at ``path`` (shared by every store on it)."""
    key = os.path.realpath(path)
    with _HUBS_LOCK:
        hub = _HUBS.get(key)
        if hub is None:
            hub = _HUBS[key] = FollowHub(key, connect)
        hub._refs += 1
        return hub


def release_hub(hub: FollowHub) -> None:
    with _HUBS_LOCK:
        hub._refs -= 1
        if hub._refs > 0:
            return
        if _HUBS.get(hub.path) is hub:
            del _HUBS[hub.path]
    hub.stop()
