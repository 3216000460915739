"""Hook implementations of the ``http`` plugin, loaded from the ``agentdeck`` entry-point group.

Registers the native HTTP/SSE binding as ``http``: ``agentdeck plugins`` lists it, and a
binding named ``"http"`` (``deck.serve("http")``, the CLI) builds ``Native.http(**options)``.
Registers the ``http`` settings section too (``AGENTDECK_HTTP_*``), so the settings reference
documents it and ``config.yaml`` may hold an ``http:`` block.
"""

from __future__ import annotations

from collections.abc import Callable

import agentdeck
from agentdeck.plugins.hookspecs import RegisterNamed
from agentdeck.settings import SettingsSection
from agentdeck_http.binding import Native
from agentdeck_http.settings import HttpSettings


@agentdeck.hookimpl
def agentdeck_register_settings(register: Callable[[type[SettingsSection]], None]) -> None:
    register(HttpSettings)


@agentdeck.hookimpl
def agentdeck_register_bindings(register: RegisterNamed) -> None:
    register(
        Native.name,
        Native.http,
        description="AgentDeck's native HTTP/SSE protocol (FastAPI + uvicorn)",
    )
