"""What ``GET /health`` tells a key holder beyond "the deck serves": the loaded plugins and
whether the event store answers.

The store check is one real read (a one-run listing), timed: a store that is down, locked or
slow shows here as ``failing`` or as a large latency, while the route itself still answers so an
operator can see *which* part is unwell. Nothing is cached: each look is a fresh read.
"""

from __future__ import annotations

import time

from agentdeck.deck.serving import Exposure
from agentdeck.ports import RunQuery
from agentdeck_http.wire import PluginView, StoreHealthView

__all__ = ["loaded_plugins", "store_health"]

_MAX_ERROR = 500
"""Longest store error text shown (a driver's message can be long; the first part names it)."""


def loaded_plugins(exposure: Exposure) -> list[PluginView]:
    """The deck's loaded plugins, by name, with what each provides."""
    return sorted(
        (
            PluginView(
                name=info.name,
                distribution=info.distribution,
                version=info.version,
                provides={kind: sorted(names) for kind, names in info.provides.items()},
            )
            for info in exposure.deck.plugins.plugins()
        ),
        key=lambda plugin: plugin.name,
    )


async def store_health(exposure: Exposure) -> StoreHealthView:
    """The event store's answer to a one-run listing: ``ok`` with how long it took, or
    ``failing`` with the error it raised."""
    service = exposure.service
    backend = type(service.store).__name__
    started = time.perf_counter()
    try:
        await service.list_runs(RunQuery(limit=1))
    except Exception as failure:  # reported, not raised: the health page must still answer
        return StoreHealthView(
            status="failing",
            backend=backend,
            latency_ms=_since(started),
            error=f"{type(failure).__name__}: {failure}"[:_MAX_ERROR],
        )
    return StoreHealthView(status="ok", backend=backend, latency_ms=_since(started))


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 3)
