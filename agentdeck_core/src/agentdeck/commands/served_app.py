"""The ASGI app ``agentdeck serve --reload`` / ``--workers N`` hands to uvicorn's own command.

Reloading and several worker processes need uvicorn to import the app itself in each process, so
the command re-executes as ``python -m uvicorn agentdeck.commands.served_app:app --factory``
(without importing uvicorn into the core) and each process builds its deck here from the project
named in :data:`PROJECT_ENV`. The deck reads its settings from the environment as usual.
"""

from __future__ import annotations

import os
from typing import Any

from agentdeck.deck import Deck

__all__ = ["PROJECT_ENV", "app"]

PROJECT_ENV = "AGENTDECK_SERVE_PROJECT"
"""The project directory ``agentdeck serve`` passes to the processes uvicorn starts."""


def app() -> Any:
    """A fresh deck of the project, as the ASGI app of the native HTTP binding."""
    from agentdeck.bindings import Native

    deck = Deck.from_project(os.environ.get(PROJECT_ENV, ".agentdeck"))
    return deck.asgi(Native.http())
