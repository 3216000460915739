"""What a runtime is given: its knobs, a run's usage caps, a run to start -- and the warning it
gives about what it was given.

Plain frozen values, read by every other module of the runtime and by the deck that builds
them from its settings; nothing here does I/O or holds state.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agentdeck.model.content import ContentBlock
from agentdeck.model.payloads import Budget, ForkOrigin, Payload
from agentdeck.ports import Invocable

__all__ = ["Budget", "NonDurableStoreWarning", "RuntimeConfig", "StartRequest"]
# ``Budget`` is recorded in ``run.started`` (a model of the event schema); it is re-exported
# here, where the runtime's other inputs are, and where ``agentdeck.Budget`` points.


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    """The runtime knobs (``AGENTDECK_RUNTIME_*``), in seconds (and one count)."""

    stale_run_after: float = 3600.0
    lease_ttl: float = 90.0
    sweep_interval: float = 30.0
    max_suspended: int = 1000
    """Parked runs whose suspended engine state (a ``@workflow`` body) this process keeps in
    memory to continue them where they stood; beyond it the oldest is released and that run
    replays from its log when it continues."""

    @property
    def lease_renew_every(self) -> float:
        # Six renewals per TTL: a blocked loop has to stall for most of a TTL to lose the lease.
        return self.lease_ttl / 6


@dataclass(frozen=True, slots=True)
class StartRequest:
    """One run to start, after the deck resolved the name and normalized the input."""

    invocable: Invocable
    input: list[ContentBlock]
    context: Any = None
    session_id: str | None = None
    namespace: str | None = None
    key: str | None = None
    parent_run_id: str | None = None
    deadline: datetime | None = None
    budget: Budget | None = None
    deltas: bool = True
    """See :attr:`agentdeck.ports.Invocation.deltas`."""
    trace_context: dict[str, str] | None = None
    """The W3C trace context the caller started the run under, recorded in ``run.started``."""
    forked_from: ForkOrigin | None = None
    """The run and point this one is forked from (:mod:`agentdeck.runtime.forking`)."""
    retry_of: str | None = None
    """The failed or cancelled run this one retries."""
    seed: tuple[Payload, ...] = ()
    """What the engine reuses of the origin's log, recorded right after ``run.started`` and
    handed to the first play as the run's history (a fork's journal or node updates)."""


class NonDurableStoreWarning(UserWarning):
    """A run parked on a store that will not outlive the process.

    Given once per runtime, at the first run that parks on a non-durable event store: the
    configuration, not the run, is what needs changing (``AGENTDECK_STATE``).
    """
