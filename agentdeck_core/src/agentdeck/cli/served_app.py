"""The ASGI app ``agentdeck serve --reload`` / ``--workers N`` hands to uvicorn's own command.

Reloading and several worker processes need uvicorn to import the app itself in each process, so
the command re-executes as ``python -m uvicorn agentdeck.cli.served_app:app --factory``
(without importing uvicorn into the core) and each process builds its deck here from the project
named in :data:`PROJECT_ENV`. The deck and its HTTP binding read their settings from the
environment as usual; the command line's binding flags arrive in :data:`HTTP_OPTIONS_ENV`, so
every worker serves exactly what a single process would.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from agentdeck.deck.deck import Deck
from agentdeck.errors import ConfigError
from agentdeck.settings import Settings

__all__ = ["HTTP_OPTIONS_ENV", "HTTP_SECTION", "PROJECT_ENV", "app", "http_settings"]

PROJECT_ENV = "AGENTDECK_SERVE_PROJECT"
"""The project directory ``agentdeck serve`` passes to the processes uvicorn starts."""

HTTP_OPTIONS_ENV = "AGENTDECK_SERVE_HTTP_OPTIONS"
"""The ``http`` settings the command line set (``--context-factory`` ...), as a JSON object of
field -> value, passed to the processes uvicorn starts. Paths and names only, never a key."""

HTTP_SECTION = "http"
"""The key of the agentdeck-http plugin's settings section (``AGENTDECK_HTTP_*``), named here
rather than imported: the core never imports a plugin."""


def http_settings(options: Mapping[str, Any] | None = None) -> Settings:
    """The environment's and ``config.yaml``'s settings, with ``options`` (the command line's)
    winning over the ``http`` section."""
    return Settings.load(overrides={HTTP_SECTION: options} if options else None)


def app() -> Any:
    """A fresh deck of the project, as the ASGI app of the native HTTP binding its settings
    describe (``Native.from_settings``)."""
    from agentdeck.bindings import Native

    settings = http_settings(_options_from_env())
    deck = Deck.from_project(os.environ.get(PROJECT_ENV, ".agentdeck"), settings=settings)
    return deck.asgi(Native.from_settings(settings))


def _options_from_env() -> dict[str, Any]:
    text = os.environ.get(HTTP_OPTIONS_ENV, "")
    if not text:
        return {}
    try:
        options = json.loads(text)
    except json.JSONDecodeError:
        options = None
    if not isinstance(options, dict):
        raise ConfigError(
            f"{HTTP_OPTIONS_ENV} must be a JSON object of http settings (agentdeck serve sets "
            "it for its workers); unset it",
            setting=HTTP_OPTIONS_ENV,
        )
    return options
