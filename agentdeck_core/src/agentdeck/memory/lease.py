"""In-memory liveness leases, timed by the clock the factory was handed.

``memory://`` is private to the port object; ``memory://<name>`` the process-wide instance of
that name. Expiry is a comparison with ``clock.now()``, never a timer, so a test advances a
:class:`~agentdeck.model.clock.ManualClock` past the TTL instead of sleeping.
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import ClassVar

from agentdeck.memory.store import SCHEME, instance_name, read_only_error
from agentdeck.model.clock import Clock, SystemClock, utc
from agentdeck.ports import BackendRequest, LeasePort, LeaseState
from agentdeck.storage import checked_ttl

__all__ = ["MemoryLeasePort"]


_Lease = tuple[str, datetime]
"""``(owner, expires_at)``: a pair rather than an object, since every run takes one."""


@dataclass(slots=True, eq=False)
class _Leases:
    lock: threading.Lock = field(default_factory=threading.Lock)
    held: dict[str, _Lease] = field(default_factory=dict)


_NAMED: dict[str, _Leases] = {}
_NAMED_LOCK = threading.Lock()


def _named(name: str, *, create: bool = True) -> _Leases | None:
    with _NAMED_LOCK:
        leases = _NAMED.get(name)
        if leases is None and create:
            leases = _NAMED[name] = _Leases()
        return leases


_SPANS: dict[float, timedelta] = {}
"""TTLs seen so far, as spans: a runtime asks for the same TTL on every run."""


def _ttl(ttl: float) -> timedelta:
    span = _SPANS.get(ttl)
    if span is not None:
        return span
    span = checked_ttl(ttl)
    if len(_SPANS) < 64:
        _SPANS[ttl] = span
    return span


class MemoryLeasePort(LeasePort):
    """A :class:`~agentdeck.ports.LeasePort` in this process's memory.

    A lease is alive while ``now < expires_at``; at its expiry instant it has lapsed.
    """

    shared: ClassVar[bool] = False

    def __init__(
        self,
        *,
        name: str | None = None,
        clock: Clock | None = None,
        url: str | None = None,
        read_only: bool = False,
    ) -> None:
        """``read_only``: every write raises :class:`~agentdeck.errors.StoreError`, and a name
        no instance has yet reads as an empty one instead of creating it."""
        self.name = name
        self.url = url if url is not None else f"{SCHEME}://{name or ''}"
        self.read_only = read_only
        self._clock: Clock = clock if clock is not None else SystemClock()
        shared = _named(name, create=not read_only) if name is not None else None
        self._leases = shared if shared is not None else _Leases()

    @classmethod
    def from_request(cls, request: BackendRequest) -> MemoryLeasePort:
        """The factory the ``memory`` scheme registers: ``memory://`` or ``memory://<name>``."""
        return cls(
            name=instance_name(request.url),
            clock=request.clock,
            url=request.url,
            read_only=request.read_only,
        )

    def _now(self) -> datetime:
        return utc(self._clock.now())

    async def acquire(self, run_id: str, owner: str, ttl: float) -> bool:
        if self.read_only:
            raise read_only_error(self.url, "acquiring a lease")
        span = _ttl(ttl)
        leases = self._leases
        with leases.lock:
            now = self._now()
            lease = leases.held.get(run_id)
            if lease is not None and lease[0] != owner and now < lease[1]:
                return False
            leases.held[run_id] = (owner, now + span)
            return True

    async def renew(self, run_id: str, owner: str, ttl: float) -> bool:
        if self.read_only:
            raise read_only_error(self.url, "renewing a lease")
        span = _ttl(ttl)
        leases = self._leases
        with leases.lock:
            now = self._now()
            lease = leases.held.get(run_id)
            if lease is None or lease[0] != owner or not now < lease[1]:
                return False
            leases.held[run_id] = (owner, now + span)
            return True

    async def release(self, run_id: str, owner: str) -> None:
        if self.read_only:
            raise read_only_error(self.url, "releasing a lease")
        leases = self._leases
        with leases.lock:
            lease = leases.held.get(run_id)
            if lease is not None and lease[0] == owner:
                del leases.held[run_id]

    async def state(self, run_id: str) -> LeaseState:
        lease = self._leases.held.get(run_id)
        if lease is None:
            return LeaseState.NONE
        return LeaseState.ALIVE if self._now() < lease[1] else LeaseState.LAPSED

    async def lapsed(self, limit: int = 100) -> list[str]:
        leases = self._leases
        with leases.lock:
            now = self._now()
            expired = sorted(
                (expires_at, run_id)
                for run_id, (_, expires_at) in leases.held.items()
                if not now < expires_at
            )
        return [run_id for _, run_id in expired[: max(0, limit)]]

    async def forget(self, run_ids: Collection[str]) -> None:
        leases = self._leases
        with leases.lock:
            for run_id in run_ids:
                leases.held.pop(run_id, None)
