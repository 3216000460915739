"""The core's in-memory backends: event store, control signals and leases (scheme ``memory``).

They are registered by :mod:`agentdeck.memory.plugin` through the same entry point and hooks as
any third-party plugin. ``memory://`` gives a fresh instance per factory call;
``memory://<name>`` the process-wide instance of that name, so two decks (or a deck and the CLI)
in one process share runs, signals and leases. Nothing here survives the process.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentdeck.memory.control import MemoryControlPort
    from agentdeck.memory.lease import MemoryLeasePort
    from agentdeck.memory.store import MemoryEventStore

# Each public name resolves on first access (module ``__getattr__``): the plugin host imports
# this package whenever plugins load, and that must not import the backends.
_HOMES = {
    "MemoryControlPort": "agentdeck.memory.control",
    "MemoryEventStore": "agentdeck.memory.store",
    "MemoryLeasePort": "agentdeck.memory.lease",
}

__all__ = ["MemoryControlPort", "MemoryEventStore", "MemoryLeasePort"]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # resolved once; later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
