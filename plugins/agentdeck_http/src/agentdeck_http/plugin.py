"""Hook implementations of the ``http`` plugin, loaded from the ``agentdeck`` entry-point group.

Registers the native HTTP/SSE binding as ``http``: ``agentdeck plugins`` lists it, and a
binding named ``"http"`` (``deck.serve("http")``, the CLI) builds ``Native.http(**options)``,
importing the binding (and FastAPI) only then.
Registers the ``http`` settings section too (``AGENTDECK_HTTP_*``), so the settings reference
documents it and ``config.yaml`` may hold an ``http:`` block.
"""

from __future__ import annotations

import agentdeck
from agentdeck.plugins.deferred import Deferred
from agentdeck.plugins.hookspecs import RegisterNamed, RegisterSettings
from agentdeck.ports import Binding
from agentdeck_http.settings import HttpSettings

# The binding (FastAPI, Starlette, uvicorn) is imported when a deck first serves over HTTP,
# not when a process that only reads a store loads its plugins.
_NATIVE_HTTP = Deferred("agentdeck_http.binding:Native.http")


@agentdeck.hookimpl
def agentdeck_register_settings(register: RegisterSettings) -> None:
    register(HttpSettings)


@agentdeck.hookimpl
def agentdeck_register_bindings(register: RegisterNamed[Binding]) -> None:
    register(
        "http",
        _NATIVE_HTTP,
        description="AgentDeck's native HTTP/SSE protocol (FastAPI + uvicorn)",
    )
