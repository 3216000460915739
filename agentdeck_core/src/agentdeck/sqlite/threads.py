"""Threads that own SQLite connections, so no SQLite call ever runs on an event loop.

The stdlib driver is used directly rather than through aiosqlite: aiosqlite hops to its thread
and back once per statement, while a write here is several statements. A
:class:`ConnectionThread` runs whole units of work (a read, a transaction) in its thread and
hands the result back to the caller's loop with one thread-safe callback.

A thread given a *batch* function is a writer (see :mod:`agentdeck.sqlite.writer`): the
jobs queued while it was busy are taken together and committed in one transaction, which is what
makes durable writes cheap -- one commit (one WAL ``fsync``) per batch rather than per write. A
caller still gets its answer only after that commit (the batch function commits before it
returns).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from agentdeck.errors import AgentDeckError

__all__ = [
    "MAX_BATCH",
    "BatchFunction",
    "ConnectionThread",
    "Queued",
    "Settled",
    "Translate",
    "answers",
    "outcomes",
    "settle",
]

_T = TypeVar("_T")
_J = TypeVar("_J")

MAX_BATCH = 512
"""The most queued writes one transaction takes (bounds the time any one commit holds the lock)."""

BatchFunction = Callable[[sqlite3.Connection, Sequence[_J]], list[tuple[Any, BaseException | None]]]
"""Runs a batch of queued jobs in one transaction; one ``(result, error)`` per job, in order.

An error that is not an :class:`~agentdeck.errors.AgentDeckError` is translated for its caller
by the thread (with the translation the job was submitted with)."""

Translate = Callable[[BaseException], BaseException]

Settled = tuple["asyncio.Future[Any]", Any, BaseException | None]


def settle(items: list[Settled]) -> None:
    """Resolve futures on their own loop (a caller that gave up has cancelled its future)."""
    for future, result, error in items:
        if future.done():
            continue
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)


def _deliver(items: list[Settled]) -> None:
    """From a worker thread: resolve each future on its loop, one callback per loop."""
    loop = items[0][0].get_loop()
    for item in items:
        if item[0].get_loop() is not loop:
            break
    else:  # the usual case: every caller on one loop
        with contextlib.suppress(RuntimeError):  # a closed loop took its callers with it
            loop.call_soon_threadsafe(settle, items)
        return
    by_loop: dict[asyncio.AbstractEventLoop, list[Settled]] = {}
    for item in items:
        by_loop.setdefault(item[0].get_loop(), []).append(item)
    for loop, settled in by_loop.items():
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, settled)


@dataclass(slots=True)
class _Call:
    fn: Callable[[sqlite3.Connection], Any]
    future: asyncio.Future[Any] | None
    """``None`` for housekeeping nobody waits on (see :meth:`ConnectionThread.post`)."""
    translate: Translate


@dataclass(slots=True)
class _Queued(Generic[_J]):
    job: _J
    future: asyncio.Future[Any]
    translate: Translate


Queued = _Queued
"""A queued job with its caller's future and translation (also what the inline writer keeps)."""

_STOP = object()


class ConnectionThread(Generic[_J]):
    """A daemon thread owning one connection, running queued work in order.

    Several threads may share one queue (a reader pool): each takes the next unit of work. A
    writer may *linger*: given the batch it took, ``linger`` says how long to wait for one more
    job when the queue ran dry (0: commit now).

    ``translate`` turns a driver exception into the error callers see (a caller may bring its
    own: ports on one file share a writer, and each names its own URL); errors AgentDeck raises
    on purpose (a refused append) pass through untouched.
    """

    def __init__(
        self,
        name: str,
        connect: Callable[[], sqlite3.Connection],
        translate: Translate,
        *,
        batch: BatchFunction[_J] | None = None,
        linger: Callable[[Sequence[_J]], float] | None = None,
        work: queue.SimpleQueue[Any] | None = None,
    ) -> None:
        self._connect = connect
        self._translate = translate
        self._batch = batch
        self._linger = linger
        self.work: queue.SimpleQueue[Any] = work if work is not None else queue.SimpleQueue()
        self._started: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._stopped: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)

    # -- the caller's side --------------------------------------------------------------------

    async def start(self) -> None:
        """Start the thread and wait until its connection is open (raising if it failed)."""
        self.launch()
        await self.ready()

    def launch(self) -> None:
        """Start the thread (its connection opens in it: see :meth:`ready`)."""
        self._thread.start()

    async def ready(self) -> None:
        """Wait until the connection is open; raises what opening it raised."""
        await asyncio.wrap_future(self._started)

    async def call(
        self, fn: Callable[[sqlite3.Connection], _T], translate: Translate | None = None
    ) -> _T:
        """Run ``fn(connection)`` in the thread and return its result."""
        future: asyncio.Future[_T] = asyncio.get_running_loop().create_future()
        self.work.put(_Call(fn, future, translate or self._translate))
        return await future

    async def submit(self, job: _J, translate: Translate | None = None) -> Any:
        """Queue a job for the batch function; its result once the batch committed."""
        return await self.enqueue(job, translate or self._translate)

    def enqueue(self, job: _J, translate: Translate) -> asyncio.Future[Any]:
        """Queue a job for the batch function: the future of its result (set once the batch
        committed). Not a coroutine: a write awaits this future directly, one frame fewer."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.work.put(_Queued(job, future, translate))
        return future

    def hand(self, queued: Sequence[_Queued[_J]]) -> None:
        """Queue jobs another writer took but could not commit (their futures are settled
        from here, on their own loops)."""
        for item in queued:
            self.work.put(item)

    def post(self, fn: Callable[[sqlite3.Connection], Any]) -> None:
        """Run ``fn(connection)`` in the thread for nobody: housekeeping (a WAL checkpoint)
        whose failure is harmless and whose outcome nobody waits for (errors are dropped)."""
        self.work.put(_Call(fn, None, self._translate))

    def request_stop(self) -> None:
        """Queue the stop: everything queued before it still runs."""
        self.work.put(_STOP)

    async def stopped(self) -> None:
        await asyncio.wrap_future(self._stopped)

    # -- the thread's side --------------------------------------------------------------------

    def _main(self) -> None:
        try:
            connection = self._connect()
        except BaseException as exc:
            self._started.set_exception(self._translate(exc))
            self._stopped.set_result(None)
            return
        self._started.set_result(None)
        carried: Any = None
        try:
            while True:
                item = carried if carried is not None else self.work.get()
                carried = None
                if item is _STOP:
                    return
                if isinstance(item, _Call):
                    self._run_call(connection, item)
                    continue
                batch: list[_Queued[_J]] = [item]
                lingered = False
                while len(batch) < MAX_BATCH:
                    try:
                        following = self.work.get_nowait()
                    except queue.Empty:
                        wait = self._wait_for_more(batch, lingered)
                        if not wait:
                            break
                        lingered = True
                        try:
                            following = self.work.get(timeout=wait)
                        except queue.Empty:
                            break
                    if isinstance(following, _Queued):
                        batch.append(following)
                    else:
                        carried = following
                        break
                self._run_batch(connection, batch)
        finally:
            connection.close()
            self._stopped.set_result(None)

    def _wait_for_more(self, batch: list[_Queued[_J]], lingered: bool) -> float:
        if lingered or self._linger is None:
            return 0.0
        return self._linger([queued.job for queued in batch])

    def _run_call(self, connection: sqlite3.Connection, call: _Call) -> None:
        if call.future is None:
            with contextlib.suppress(Exception):
                call.fn(connection)
            return
        try:
            result = call.fn(connection)
        except AgentDeckError as refused:
            _deliver([(call.future, None, refused)])
        except BaseException as exc:
            _deliver([(call.future, None, call.translate(exc))])
        else:
            _deliver([(call.future, result, None)])

    def _run_batch(self, connection: sqlite3.Connection, batch: list[_Queued[_J]]) -> None:
        assert self._batch is not None, "only a writer takes batched jobs"
        _deliver(outcomes(self._batch, connection, batch))


def outcomes(
    batch_function: BatchFunction[_J], connection: sqlite3.Connection, batch: Sequence[Any]
) -> list[Settled]:
    """Run ``batch`` (items with ``job``, ``future`` and ``translate``) through
    ``batch_function``: what each caller gets, ready for :func:`settle` on the caller's loop."""
    try:
        results = batch_function(connection, [queued.job for queued in batch])
    except BaseException as exc:
        return answers(batch, None, exc)
    return answers(batch, results, None)


def answers(
    batch: Sequence[Any],
    results: list[tuple[Any, BaseException | None]] | None,
    failed: BaseException | None,
) -> list[Settled]:
    """What each caller of ``batch`` gets: its ``(result, error)``, or the error the whole
    batch ``failed`` with.

    Shared by the writer thread and the inline writer that runs batches on an event loop (see
    :mod:`agentdeck.sqlite.writer`), so both answer exactly alike.
    """
    if results is None:
        assert failed is not None
        # Each caller gets its own instance: one exception object raised in several tasks
        # would pile their tracebacks onto each other.
        return [
            (queued.future, None, _copy_error(_as_seen(failed, queued.translate)))
            for queued in batch
        ]
    return [
        (queued.future, result, None)
        if error is None
        else (queued.future, None, _as_seen(error, queued.translate))
        for queued, (result, error) in zip(batch, results, strict=True)
    ]


def _as_seen(error: BaseException, translate: Translate) -> BaseException:
    """The error a caller sees: AgentDeck's own as raised, a driver's translated."""
    return error if isinstance(error, AgentDeckError) else translate(error)


def _copy_error(error: BaseException) -> BaseException:
    try:
        return copy.copy(error)
    except Exception:  # pragma: no cover - every AgentDeck error copies; be safe for others
        return error
