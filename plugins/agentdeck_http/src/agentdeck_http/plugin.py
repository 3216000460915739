"""Hook implementations of the ``http`` plugin, loaded from the ``agentdeck`` entry-point group.

Registers the native HTTP/SSE binding as ``http``: ``agentdeck plugins`` lists it, and a
binding named ``"http"`` (``deck.serve("http")``, the CLI) builds ``Native.http(**options)``.
"""

from __future__ import annotations

import agentdeck
from agentdeck.hookspecs import RegisterNamed
from agentdeck_http.binding import Native


@agentdeck.hookimpl
def agentdeck_register_bindings(register: RegisterNamed) -> None:
    register(
        Native.name,
        Native.http,
        description="AgentDeck's native HTTP/SSE protocol (FastAPI + uvicorn)",
    )
