"""The control and lease ports: what lets another process pause, cancel or outlive a run.

:class:`ControlPort` holds pending control requests (pause, cancel, resume) per run until the
run's engine reaches a safe point; :class:`LeasePort` holds the liveness lease a playing run's
worker renews, so a killed worker's session is freed within one TTL. Both usually live in one
backend (``AGENTDECK_CONTROL``). Their method docstrings are the contract
``agentdeck.testing.ControlContract`` and ``LeaseContract`` check. Import these names from
:mod:`agentdeck.ports`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import ClassVar

from agentdeck.vocabulary import ControlVerb

__all__ = ["ControlPort", "ControlSignal", "LeasePort", "LeaseState"]


# =========================================================================== control signals


@dataclass(frozen=True, slots=True)
class ControlSignal:
    """One pending control request, as :meth:`ControlPort.pending` and :meth:`~ControlPort.take`
    return it: which run, which verb, the requester's reason and when it was first made."""

    run_id: str
    verb: ControlVerb
    reason: str | None
    requested_at: datetime


class ControlPort(ABC):
    """Pending control requests (pause, cancel) per run, reachable from other processes.

    A request is not a status change: it waits here until the run's engine reaches a safe point
    (or, for a suspended run, until the runtime acts on it at once). At most one request per verb
    is pending; a repeated request keeps the first reason.
    """

    shared: ClassVar[bool] = False
    """Whether other processes see the same requests (what lets another process pause a run)."""

    url: str = ""
    """The URL the backend was built for, as the deck's settings gave it."""

    async def open(self) -> None:
        """Connect and create the schema. Called once before any other method."""

    async def close(self) -> None:
        """Release connections. Idempotent."""

    @abstractmethod
    async def request(self, run_id: str, verb: ControlVerb, reason: str | None = None) -> bool:
        """Record a request; ``False`` if one with this verb was already pending."""

    @abstractmethod
    async def pending(self, run_id: str) -> tuple[ControlSignal, ...]:
        """Pending requests for a run, cancel first; cheap enough for every safe point."""

    @abstractmethod
    async def take(self, run_id: str, verb: ControlVerb) -> ControlSignal | None:
        """Atomically remove and return the pending request with ``verb`` (one taker wins)."""

    async def withdraw(self, run_id: str, verb: ControlVerb) -> bool:
        """Drop a pending request without acting on it (``resume()`` lifting a pause)."""
        return await self.take(run_id, verb) is not None

    @abstractmethod
    async def forget(self, run_ids: Collection[str]) -> None:
        """Drop everything pending for these runs (they finished or were pruned)."""


# =========================================================================== leases


class LeaseState(StrEnum):
    """What :meth:`LeasePort.state` can say about a run's lease."""

    ALIVE = "alive"
    """Held and renewed in time: a worker is playing the run."""
    LAPSED = "lapsed"
    """It was held and not renewed in time: the holder is presumed dead."""
    NONE = "none"
    """Never held here, or released: nothing can be said from leases."""


class LeasePort(ABC):
    """Liveness leases: a playing run's worker renews its lease; a lapsed one frees the session.

    Time comes from the clock handed to the factory (``BackendRequest.clock``), so expiry is
    tested by advancing a ``ManualClock``.
    """

    shared: ClassVar[bool] = False
    """Whether other processes see the same leases (what lets another process free a session)."""

    url: str = ""
    """The URL the backend was built for, as the deck's settings gave it."""

    async def open(self) -> None:
        """Connect and create the schema. Called once before any other method."""

    async def close(self) -> None:
        """Release connections. Idempotent."""

    @abstractmethod
    async def acquire(self, run_id: str, owner: str, ttl: float) -> bool:
        """Take the lease for ``ttl`` seconds; ``False`` if another owner holds it alive."""

    @abstractmethod
    async def renew(self, run_id: str, owner: str, ttl: float) -> bool:
        """Extend a lease this owner holds; ``False`` if it lapsed or another owner took it."""

    @abstractmethod
    async def release(self, run_id: str, owner: str) -> None:
        """Give the lease up (the run stopped playing here). No-op if not held by ``owner``."""

    @abstractmethod
    async def state(self, run_id: str) -> LeaseState:
        """Whether the run's lease is alive, lapsed, or unknown here."""

    @abstractmethod
    async def lapsed(self, limit: int = 100) -> list[str]:
        """Runs whose leases lapsed and were not released, oldest expiry first."""

    @abstractmethod
    async def forget(self, run_ids: Collection[str]) -> None:
        """Drop the leases of these runs, whoever holds them: the runs ended (closed by whoever
        saw their lease lapse) or were deleted, and their lease is never read again. Without
        this a dead worker's lease row would outlive its run, and :meth:`lapsed` would keep
        listing it. Unknown ids are ignored."""
