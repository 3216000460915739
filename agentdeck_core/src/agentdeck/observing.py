"""Fan-out from the run log to observers, without ever letting one slow or fail a run.

Each observer gets its own bounded buffer and its own worker task. Publishing an event is a
non-blocking append per observer (the worker is woken only when it sits idle): when an
observer's buffer is full the event is dropped *for that observer* and counted, so the cost of a
slow observer is its own backlog. An observer
whose ``emit`` raises is disabled for a backoff period (doubling up to a cap) and then retried;
what arrives while it is disabled is dropped and counted. Observers that cannot afford to lose an
event read the store instead.

Closing drains each queue for at most ``drain_timeout`` seconds, then drops the rest (counted),
so a stuck observer cannot hold a shutdown.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agentdeck.events import Event
from agentdeck.metrics import RunMetrics
from agentdeck.ports import Observer

__all__ = ["ObserverHub", "ObserverStats"]

log = logging.getLogger("agentdeck.observers")

_CLOSE = object()


@dataclass(slots=True)
class ObserverStats:
    """What happened to one observer's share of the stream."""

    delivered: int = 0
    dropped: int = 0
    failures: int = 0
    disabled_until: float | None = None


@dataclass(slots=True)
class _Tap:
    """One observer's buffer and worker.

    A deque and a one-shot wake-up rather than an ``asyncio.Queue``: publishing is on every
    run's hot path, and a queue's ``put_nowait`` costs several times a deque append (it keeps
    task accounting nobody here reads, and pokes its getters on every put).
    """

    observer: Observer
    size: int
    buffer: deque[object] = field(default_factory=deque)
    idle: asyncio.Future[None] | None = None
    """Set while the worker waits for the buffer to fill; resolved by the next put."""
    stats: ObserverStats = field(default_factory=ObserverStats)
    worker: asyncio.Task[None] | None = None
    backoff: float = 0.0

    def put(self, item: object) -> bool:
        """Buffer ``item`` unless full (``size`` <= 0: unbounded); ``False`` if it was not."""
        if 0 < self.size <= len(self.buffer):
            return False
        self.buffer.append(item)
        idle = self.idle
        if idle is not None:
            self.idle = None
            if not idle.done():
                idle.set_result(None)
        return True

    async def get(self) -> object:
        while not self.buffer:
            self.idle = asyncio.get_running_loop().create_future()
            await self.idle
        return self.buffer.popleft()


class ObserverHub:
    """Owns the observers of one open deck: starts them, feeds them, closes them."""

    def __init__(
        self,
        observers: Sequence[Observer],
        *,
        queue_size: int = 10_000,
        retry_after: float = 1.0,
        max_backoff: float = 60.0,
        drain_timeout: float = 5.0,
        metrics: RunMetrics | None = None,
    ) -> None:
        self._observers = list(observers)
        self._queue_size = queue_size
        self._retry_after = retry_after
        self._max_backoff = max_backoff
        self._drain_timeout = drain_timeout
        self._taps: list[_Tap] = []
        self.metrics = metrics if metrics is not None else RunMetrics()

    @property
    def stats(self) -> list[tuple[Observer, ObserverStats]]:
        return [(tap.observer, tap.stats) for tap in self._taps]

    async def start(self) -> None:
        """Start every observer in order; one raising refuses the open (the rest are closed)."""
        started: list[Observer] = []
        try:
            for observer in self._observers:
                await observer.start()
                started.append(observer)
        except BaseException:
            for observer in reversed(started):
                try:
                    await observer.close()
                except Exception:
                    log.exception("observer %r failed to close after a refused open", observer)
            raise
        for observer in self._observers:
            tap = _Tap(observer=observer, size=self._queue_size)
            tap.worker = asyncio.create_task(self._feed(tap), name=f"observer:{observer!r}")
            self._taps.append(tap)

    def publish(self, events: Iterable[Event]) -> None:
        """Hand events to every observer whose view accepts them. Never blocks, never raises."""
        if not isinstance(events, list):
            events = list(events)
        self.metrics.observe(events)
        if not self._taps:
            return
        now = self._monotonic()
        for tap in self._taps:
            # Per tap, then per event: a disabled observer's whole batch is dropped at once.
            view = tap.observer.view
            accepted = events if view is None else [event for event in events if view(event)]
            if not accepted:
                continue
            disabled_until = tap.stats.disabled_until
            if disabled_until is not None and now < disabled_until:
                self._dropped(tap, len(accepted))
                continue
            refused = 0
            for event in accepted:
                if not tap.put(event):
                    refused += 1
            if refused:
                self._dropped(tap, refused)

    def _dropped(self, tap: _Tap, count: int = 1) -> None:
        tap.stats.dropped += count
        self.metrics.observer_drops[type(tap.observer).__name__] += count

    async def close(self) -> None:
        """Drain each observer for a bounded time, then drop what is left, then close it."""
        taps, self._taps = self._taps, []
        for tap in taps:
            tap.size = 0  # the closing marker always fits
            tap.put(_CLOSE)
        workers = [tap.worker for tap in taps if tap.worker is not None]
        if workers:
            _done, pending = await asyncio.wait(workers, timeout=self._drain_timeout)
            for task in pending:
                task.cancel()
            for tap in taps:
                if tap.worker in pending:
                    self._dropped(tap, sum(1 for item in tap.buffer if item is not _CLOSE))
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
        for tap in taps:
            try:
                await asyncio.wait_for(tap.observer.close(), timeout=self._drain_timeout)
            except Exception:
                log.exception("observer %r failed to close", tap.observer)
            if tap.stats.dropped:
                log.warning("observer %r dropped %d event(s)", tap.observer, tap.stats.dropped)

    async def _feed(self, tap: _Tap) -> None:
        while True:
            item = await tap.get()
            if item is _CLOSE:
                return
            assert isinstance(item, Event)
            try:
                await tap.observer.emit(item)
            except Exception:
                tap.stats.failures += 1
                tap.backoff = min(
                    self._max_backoff, tap.backoff * 2 if tap.backoff else self._retry_after
                )
                tap.stats.disabled_until = self._monotonic() + tap.backoff
                log.warning(
                    "observer %r raised; disabled for %.1fs",
                    tap.observer,
                    tap.backoff,
                    exc_info=True,
                )
            else:
                tap.stats.delivered += 1
                tap.backoff = 0.0

    def _monotonic(self) -> float:
        return asyncio.get_running_loop().time()
