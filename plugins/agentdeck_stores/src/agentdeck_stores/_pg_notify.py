"""Waking followers of a PostgreSQL store: ``LISTEN``/``NOTIFY``, with a catch-up on every
(re)subscription.

Each store's writer sends ``NOTIFY`` with the ids of the runs it wrote, inside the transaction
(PostgreSQL delivers it at commit, and only if the commit happened), and wakes its own followers
directly after the commit. A :class:`Listener` -- one dedicated connection per store, opened when
the first follower parks -- receives other stores' notifications. Whenever it (re)subscribes it
wakes every parked follower, so each re-reads its run: an event committed while the listener was
away is read then, not lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
from collections.abc import Iterable
from typing import Any

import psycopg
from psycopg import sql

from agentdeck_stores.settings import DEFAULT_CONNECT_TIMEOUT

__all__ = ["Listener", "channel_for", "notify_payloads"]

PAYLOAD_LIMIT = 7900
"""Bytes per ``NOTIFY`` payload (PostgreSQL refuses 8000 and more)."""
RECONNECT_MIN = 0.05
RECONNECT_MAX = 2.0
_CANCEL_GRACE = 1.0
"""How long a close waits for the cancelled listener before closing its connection under it."""


def channel_for(schema: str) -> str:
    """The notification channel of the stores on one schema (a short, always-valid name)."""
    return "agentdeck_" + hashlib.sha1(schema.encode()).hexdigest()[:20]


def notify_payloads(run_ids: Iterable[str]) -> list[str]:
    """Run ids joined by newlines, split so each payload fits the server's limit."""
    payloads: list[str] = []
    current: list[str] = []
    size = 0
    for run_id in run_ids:
        length = len(run_id.encode()) + 1
        if current and size + length > PAYLOAD_LIMIT:
            payloads.append("\n".join(current))
            current, size = [], 0
        current.append(run_id)
        size += length
    if current:
        payloads.append("\n".join(current))
    return payloads


class Listener:
    """Parked followers of one store, and the ``LISTEN`` connection that wakes them."""

    def __init__(
        self, conninfo: str, channel: str, *, timeout: float = DEFAULT_CONNECT_TIMEOUT
    ) -> None:
        self._conninfo = conninfo
        self._channel = channel
        self._timeout = timeout
        """The stores' ``connect_timeout_seconds``: one (re)connect attempt waits no longer."""
        self._parked: dict[str, set[asyncio.Future[None]]] = {}
        self._task: asyncio.Task[None] | None = None
        self._connection: psycopg.AsyncConnection[Any] | None = None
        """The ``LISTEN`` connection while the task holds one (closed under it if need be)."""
        self._closed = False
        self.subscriptions = 0
        """How many times the listener has subscribed (tests watch it reconnect)."""

    def park(self, run_id: str) -> asyncio.Future[None]:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._parked.setdefault(run_id, set()).add(future)
        if self._task is None and not self._closed:
            self._task = asyncio.create_task(
                self._listen(), name=f"agentdeck-listen:{self._channel}"
            )
        return future

    def unpark(self, run_id: str, future: asyncio.Future[None]) -> None:
        parked = self._parked.get(run_id)
        if parked is not None:
            parked.discard(future)
            if not parked:
                del self._parked[run_id]

    def wake(self, run_ids: Iterable[str]) -> None:
        for run_id in run_ids:
            for future in self._parked.get(run_id, ()):
                if not future.done():
                    future.set_result(None)

    def wake_all(self) -> None:
        self.wake(list(self._parked))

    async def close(self) -> None:
        self._closed = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=_CANCEL_GRACE)
            connection = self._connection
            if not done and connection is not None:
                # Rarely (seen with psycopg 3.3.6) a cancelled ``notifies()`` goes on waiting and
                # the close would wait for good: closing its connection under it (``close()``
                # takes no lock) ends the wait with an error the task then leaves on.
                with contextlib.suppress(Exception):
                    await connection.close()
            with contextlib.suppress(asyncio.CancelledError, psycopg.Error):
                await task
        self.wake_all()

    async def _listen(self) -> None:
        delay = RECONNECT_MIN
        while not self._closed:
            try:
                connection = await asyncio.wait_for(
                    psycopg.AsyncConnection.connect(
                        self._conninfo,
                        autocommit=True,
                        connect_timeout=max(2, math.ceil(self._timeout)),  # libpq: whole s, >= 2
                    ),
                    self._timeout,
                )
            except (psycopg.Error, TimeoutError):
                await asyncio.sleep(delay)
                delay = min(delay * 2, RECONNECT_MAX)
                continue
            self._connection = connection
            try:
                await connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
                self.subscriptions += 1
                delay = RECONNECT_MIN
                self.wake_all()  # catch up on whatever committed while we were not listening
                async for notice in connection.notifies():
                    self._received(notice)
            except psycopg.Error:
                await asyncio.sleep(delay)
                delay = min(delay * 2, RECONNECT_MAX)
            finally:
                self._connection = None
                with contextlib.suppress(psycopg.Error):
                    await connection.close()

    def _received(self, notice: Any) -> None:
        self.wake(notice.payload.split("\n"))
