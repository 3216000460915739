"""Time as a dependency.

Leases, staleness, deadlines and timers read a :class:`Clock` handed to them, never the system
time directly, so tests advance a :class:`ManualClock` instead of sleeping. Clocks give wall-clock
UTC time because the instants they stamp are compared across processes.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "ManualClock", "SystemClock", "utc"]


def utc(moment: datetime) -> datetime:
    """``moment`` as an aware UTC datetime (naive input is taken to be UTC)."""
    tz = moment.tzinfo
    if tz is UTC:
        return moment  # what every clock here gives: nothing to convert
    if tz is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


@runtime_checkable
class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant, timezone-aware, in UTC."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of this clock's time."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class ManualClock:
    """A clock that only moves when told to; sleepers wake as :meth:`advance` passes them."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = utc(start) if start is not None else datetime(2026, 1, 1, tzinfo=UTC)
        self._sleepers: list[tuple[datetime, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now(self) -> datetime:
        return self._now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(
            self._sleepers, (self._now + timedelta(seconds=seconds), next(self._order), future)
        )
        await future

    def advance(self, seconds: float) -> None:
        """Move time forward and wake every sleeper whose moment has come."""
        self._now += timedelta(seconds=seconds)
        while self._sleepers and self._sleepers[0][0] <= self._now:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)

    def set(self, moment: datetime) -> None:
        """Jump to ``moment`` (never backwards)."""
        target = utc(moment)
        if target < self._now:
            raise ValueError("a ManualClock never moves backwards")
        self.advance((target - self._now).total_seconds())
