"""AgentDeck HTTP binding: the native wire protocol over HTTP and Server-Sent Events.

``Native.http()`` is the binding (``deck.serve(Native.http(), port=8000)``,
``deck.asgi(Native.http(path="/api"))``); it is also what ``from agentdeck.bindings import
Native`` resolves to. ``Native.from_settings()`` builds it from the ``http`` settings section
(:class:`HttpSettings`, ``AGENTDECK_HTTP_*``), as ``agentdeck serve`` does. AgentDeck finds the
plugin through the ``agentdeck`` entry-point group.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentdeck_http.binding import ContextFactory, KindFilter, Native
    from agentdeck_http.context import ServedCall
    from agentdeck_http.settings import HttpSettings

__version__ = "0.1.0"

# Each public name resolves on first access (module ``__getattr__``): the plugin host imports
# this package whenever plugins load, and that must not import the binding, FastAPI or Starlette.
_HOMES = {
    "ContextFactory": "agentdeck_http.binding",
    "HttpSettings": "agentdeck_http.settings",
    "KindFilter": "agentdeck_http.binding",
    "Native": "agentdeck_http.binding",
    "ServedCall": "agentdeck_http.context",
}

__all__ = ["ContextFactory", "HttpSettings", "KindFilter", "Native", "ServedCall", "__version__"]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # resolved once; later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
