"""The core's in-memory backends: event store, control signals and leases (scheme ``memory``).

They are registered by :mod:`agentdeck.memory.plugin` through the same entry point and hooks as
any third-party plugin. ``memory://`` gives a fresh instance per factory call;
``memory://<name>`` the process-wide instance of that name, so two decks (or a deck and the CLI)
in one process share runs, signals and leases. Nothing here survives the process.
"""

from __future__ import annotations

from agentdeck.memory.control import MemoryControlPort
from agentdeck.memory.lease import MemoryLeasePort
from agentdeck.memory.store import MemoryEventStore

__all__ = ["MemoryControlPort", "MemoryEventStore", "MemoryLeasePort"]
