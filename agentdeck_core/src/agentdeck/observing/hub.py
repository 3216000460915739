"""Fan-out from the run log to observers, without ever letting one slow or fail a run.

Each observer gets its own bounded buffer and its own worker task. Publishing an event is a
non-blocking append per observer (the worker is woken only when it sits idle, and then takes
everything buffered): when an observer's buffer is full the event is dropped *for that observer*
and counted, so the cost of a slow observer is its own backlog. An observer whose ``emit``
raises is disabled for a backoff period (doubling up to a cap) and then retried; what arrives
while it is disabled is dropped and counted. Observers that cannot afford to lose an event read
the store instead.

Publishing runs for every event every run records, so an observer that takes nothing -- full,
or disabled -- is taken out of the publishing loop until it can take events again (its worker
made room, its backoff ran out), rather than being asked and refusing each time: a stuck or
broken observer then costs a run nothing at all. What it missed meanwhile is counted from the
number of events published since, when anyone reads the counts (:attr:`ObserverHub.stats`,
``RunMetrics.observer_drops``) or it comes back. (An observer with a ``view`` only misses what
its view accepts, so it is still shown each event, to count exactly.)

Closing drains each queue for at most ``drain_timeout`` seconds, then drops the rest (counted),
so a stuck observer cannot hold a shutdown.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agentdeck.model.events import Event
from agentdeck.observing.metrics import COUNTED_KINDS, RunMetrics
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


@dataclass(slots=True, eq=False)
class _Tap:
    """One observer's buffer and worker.

    A deque and a one-shot wake-up rather than an ``asyncio.Queue``: publishing is on every
    run's hot path, and a queue's ``put_nowait`` costs several times a deque append (it keeps
    task accounting nobody here reads, and pokes its getters on every put).
    """

    observer: Observer
    size: int
    name: str
    """How drops are labelled in the metrics: the observer's class name."""
    buffer: deque[object] = field(default_factory=deque)
    idle: asyncio.Future[None] | None = None
    """Set while the worker waits for the buffer to fill; resolved by the next put."""
    stats: ObserverStats = field(default_factory=ObserverStats)
    worker: asyncio.Task[None] | None = None
    backoff: float = 0.0
    full: bool = False
    """The buffer refused an event; publishing skips the tap until its worker makes room."""
    disabled: asyncio.TimerHandle | None = None
    """While ``emit`` is backing off: the timer that enables it again."""
    missed_from: int | None = None
    """For a tap without a view that publishing skips: the hub's published count since which
    everything published is this tap's to count as dropped."""

    @property
    def taking(self) -> bool:
        return not self.full and self.disabled is None

    def put(self, item: object) -> bool:
        """Buffer ``item`` unless full (``size`` <= 0: unbounded); ``False`` if it was not."""
        if 0 < self.size <= len(self.buffer):
            return False
        self.buffer.append(item)
        self._wake()
        return True

    def offer(self, events: list[Event]) -> int:
        """Buffer as many of ``events`` as fit, in order; how many did not."""
        buffer = self.buffer
        room = self.size - len(buffer) if self.size > 0 else len(events)
        if room >= len(events):
            buffer.extend(events)
            refused = 0
        elif room > 0:
            buffer.extend(events[:room])
            refused = len(events) - room
        else:
            return len(events)  # full: nothing to wake the worker for
        self._wake()
        return refused

    def _wake(self) -> None:
        idle = self.idle
        if idle is not None:
            self.idle = None
            if not idle.done():
                idle.set_result(None)

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
        self._taking: list[_Tap] = []
        """The taps publishing hands events to (in order): neither full nor disabled."""
        self._counting: list[_Tap] = []
        """Skipped taps with a view: shown each event only to count what they missed."""
        self._published = 0
        """Events published so far: what skipped taps without a view missed is counted from it."""
        self.metrics = metrics if metrics is not None else RunMetrics()
        self.metrics.add_drop_source(self._count_missed)

    @property
    def stats(self) -> list[tuple[Observer, ObserverStats]]:
        self._count_missed()
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
            tap = _Tap(observer=observer, size=self._queue_size, name=type(observer).__name__)
            tap.worker = asyncio.create_task(self._feed(tap), name=f"observer:{observer!r}")
            self._taps.append(tap)
            self._taking.append(tap)

    def publish(self, events: Iterable[Event]) -> None:
        """Hand events to every observer whose view accepts them. Never blocks, never raises."""
        if not isinstance(events, list):
            events = list(events)
        for event in events:  # nearly every event is one no counter reads: no call for those
            if event.kind in COUNTED_KINDS:
                self.metrics.observe(events)
                break
        if not self._taps:
            return
        self._published += len(events)
        filled: list[_Tap] | None = None
        for tap in self._taking:
            view = tap.observer.view
            accepted = events if view is None else [event for event in events if view(event)]
            if not accepted:
                continue
            refused = tap.offer(accepted)
            if refused:
                self._dropped(tap, refused)
                filled = [tap] if filled is None else [*filled, tap]
        for tap in self._counting:
            view = tap.observer.view
            missed = len(events) if view is None else sum(1 for event in events if view(event))
            if missed:
                self._dropped(tap, missed)
        if filled is not None:  # skipped from the next publish on (not while iterating)
            for tap in filled:
                tap.full = True
                self._skip(tap)

    def _dropped(self, tap: _Tap, count: int) -> None:
        tap.stats.dropped += count
        self.metrics.count_dropped(tap.name, count)

    # -- skipping taps that take nothing -------------------------------------------------------

    def _skip(self, tap: _Tap) -> None:
        """Take ``tap`` out of publishing (it just became full or disabled)."""
        if tap not in self._taking:
            return  # already skipped: full and disabled at once
        self._taking.remove(tap)
        if tap.observer.view is None:
            tap.missed_from = self._published
        else:
            self._counting.append(tap)

    def _take_again(self, tap: _Tap) -> None:
        """Put ``tap`` back into publishing if it takes events again (and is not closed)."""
        if not tap.taking or tap.worker is None or tap in self._taking or tap not in self._taps:
            return
        self._count_missed_by(tap)
        tap.missed_from = None
        if tap in self._counting:
            self._counting.remove(tap)
        self._taking.append(tap)

    def _count_missed(self) -> None:
        """Bring the drop counts of skipped taps without a view up to date."""
        for tap in self._taps:
            self._count_missed_by(tap)

    def _count_missed_by(self, tap: _Tap) -> None:
        since = tap.missed_from
        if since is not None and self._published > since:
            self._dropped(tap, self._published - since)
            tap.missed_from = self._published

    def _enable(self, tap: _Tap) -> None:
        """A disabled tap's backoff ran out: retry it with what is published from now on."""
        tap.disabled = None
        tap.stats.disabled_until = None
        self._take_again(tap)

    # -- closing -------------------------------------------------------------------------------

    async def close(self) -> None:
        """Drain each observer for a bounded time, then drop what is left, then close it."""
        self._count_missed()
        taps, self._taps = self._taps, []
        self._taking, self._counting = [], []
        for tap in taps:
            if tap.disabled is not None:
                tap.disabled.cancel()
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

    # -- the worker ----------------------------------------------------------------------------

    async def _feed(self, tap: _Tap) -> None:
        while True:
            item = await tap.get()
            if item is _CLOSE:
                return
            if tap.full:
                tap.full = False  # the item taken made room
                self._take_again(tap)
            assert isinstance(item, Event)
            try:
                await tap.observer.emit(item)
            except Exception:
                self._failed(tap)
            else:
                tap.stats.delivered += 1
                tap.backoff = 0.0

    def _failed(self, tap: _Tap) -> None:
        """``emit`` raised: disable the tap for a backoff that doubles with each failure."""
        tap.stats.failures += 1
        tap.backoff = min(self._max_backoff, tap.backoff * 2 if tap.backoff else self._retry_after)
        loop = asyncio.get_running_loop()
        tap.stats.disabled_until = loop.time() + tap.backoff
        if tap.disabled is not None:
            tap.disabled.cancel()  # failed again on an event buffered before: back off longer
        tap.disabled = loop.call_later(tap.backoff, self._enable, tap)
        self._skip(tap)
        log.warning(
            "observer %r raised; disabled for %.1fs", tap.observer, tap.backoff, exc_info=True
        )
