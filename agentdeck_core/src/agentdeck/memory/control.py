"""In-memory control signals: pending pause/cancel requests per run.

``memory://`` is private to the port object; ``memory://<name>`` is the process-wide instance of
that name, so a CLI and a deck in one process reach the same runs. A request is a fact waiting to
be acted on, never a status change (that is the log's business).

Every request recorded bumps :attr:`MemoryControlPort.request_count`, shared by every port
object on the same signals: a runtime watching it sees a request made through any deck of the
process at once, instead of at its next scheduled read (see :mod:`agentdeck.runtime.control`).
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import ClassVar

from agentdeck.memory.store import SCHEME, instance_name, read_only_error
from agentdeck.model.clock import Clock, SystemClock, utc
from agentdeck.ports import BackendRequest, ControlPort, ControlSignal
from agentdeck.storage import checked_verb
from agentdeck.vocabulary import ControlVerb

__all__ = ["MemoryControlPort"]


@dataclass(slots=True, eq=False)
class RequestCount:
    """How many requests were recorded in one set of signals (only ever grows)."""

    value: int = 0


@dataclass(slots=True, eq=False)
class _Signals:
    lock: threading.Lock = field(default_factory=threading.Lock)
    pending: dict[str, dict[ControlVerb, ControlSignal]] = field(default_factory=dict)
    """Per run, pending requests in the order they were made."""
    requests: RequestCount = field(default_factory=RequestCount)


_NAMED: dict[str, _Signals] = {}
_NAMED_LOCK = threading.Lock()


def _named(name: str, *, create: bool = True) -> _Signals | None:
    with _NAMED_LOCK:
        signals = _NAMED.get(name)
        if signals is None and create:
            signals = _NAMED[name] = _Signals()
        return signals


class MemoryControlPort(ControlPort):
    """A :class:`~agentdeck.ports.ControlPort` in this process's memory."""

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
        self._signals = shared if shared is not None else _Signals()

    @property
    def request_count(self) -> RequestCount:
        """The count of requests recorded in this port's signals, shared with every port object
        on them (a named instance's); bumped after a request is recorded."""
        return self._signals.requests

    @classmethod
    def from_request(cls, request: BackendRequest) -> MemoryControlPort:
        """The factory the ``memory`` scheme registers: ``memory://`` or ``memory://<name>``."""
        return cls(
            name=instance_name(request.url),
            clock=request.clock,
            url=request.url,
            read_only=request.read_only,
        )

    async def request(self, run_id: str, verb: ControlVerb, reason: str | None = None) -> bool:
        if self.read_only:
            raise read_only_error(self.url, "requesting a control signal")
        wanted = checked_verb(verb)
        signals = self._signals
        with signals.lock:
            pending = signals.pending.setdefault(run_id, {})
            if wanted in pending:
                return False  # the first request's reason stands
            pending[wanted] = ControlSignal(
                run_id=run_id, verb=wanted, reason=reason, requested_at=utc(self._clock.now())
            )
            signals.requests.value += 1
            return True

    async def pending(self, run_id: str) -> tuple[ControlSignal, ...]:
        signals = self._signals
        with signals.lock:
            pending = signals.pending.get(run_id)
            if not pending:
                return ()
            # Cancel first (it wins over everything), the rest in the order they were asked.
            return tuple(
                sorted(pending.values(), key=lambda signal: signal.verb is not ControlVerb.CANCEL)
            )

    async def take(self, run_id: str, verb: ControlVerb) -> ControlSignal | None:
        if self.read_only:
            raise read_only_error(self.url, "taking a control signal")
        wanted = checked_verb(verb)
        signals = self._signals
        with signals.lock:
            pending = signals.pending.get(run_id)
            if pending is None:
                return None
            taken = pending.pop(wanted, None)
            if not pending:
                del signals.pending[run_id]
            return taken

    async def forget(self, run_ids: Collection[str]) -> None:
        if self.read_only:
            raise read_only_error(self.url, "forgetting control signals")
        signals = self._signals
        with signals.lock:
            for run_id in run_ids:
                signals.pending.pop(run_id, None)
