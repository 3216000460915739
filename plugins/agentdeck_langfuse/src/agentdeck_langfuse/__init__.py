"""AgentDeck observer that exports runs to Langfuse.

Installed, this distribution (agentdeck-langfuse) provides :class:`LangfuseObserver`, also
reachable as ``agentdeck.observers.LangfuseObserver`` (and by its 4.x name
``agentdeck.observers.Langfuse``), and the ``langfuse`` settings section
(``AGENTDECK_LANGFUSE_*``). A deck given no ``observers=`` starts one by itself when both keys
are set (``AGENTDECK_LANGFUSE_*``, else the SDK's own ``LANGFUSE_*``).

AgentDeck finds it through the ``agentdeck`` entry-point group; nothing needs importing by hand.
The Langfuse SDK itself is imported only when an observer starts.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentdeck_langfuse.observer import LangfuseObserver
    from agentdeck_langfuse.settings import LangfuseSettings

__version__ = "0.1.0"

# Each public name resolves on first access (module ``__getattr__``): the plugin host imports
# this package whenever plugins load, and that must not import the observer.
_HOMES = {
    "LangfuseObserver": "agentdeck_langfuse.observer",
    "LangfuseSettings": "agentdeck_langfuse.settings",
}

__all__ = ["LangfuseObserver", "LangfuseSettings", "__version__"]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # resolved once; later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
