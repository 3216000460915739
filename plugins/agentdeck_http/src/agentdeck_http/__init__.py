"""AgentDeck HTTP binding: the native wire protocol over HTTP and Server-Sent Events.

``Native.http()`` is the binding (``deck.serve(Native.http(), port=8000)``,
``deck.asgi(Native.http(path="/api"))``); it is also what ``from agentdeck.bindings import
Native`` resolves to. ``Native.from_settings()`` builds it from the ``http`` settings section
(:class:`HttpSettings`, ``AGENTDECK_HTTP_*``), as ``agentdeck serve`` does. AgentDeck finds the
plugin through the ``agentdeck`` entry-point group.
"""

from __future__ import annotations

__version__ = "0.1.0"

from agentdeck_http.binding import ContextFactory, KindFilter, Native
from agentdeck_http.context import ServedCall
from agentdeck_http.settings import HttpSettings

__all__ = ["ContextFactory", "HttpSettings", "KindFilter", "Native", "ServedCall", "__version__"]
