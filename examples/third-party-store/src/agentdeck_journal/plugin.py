"""The plugin module the `agentdeck` entry point names: it registers the `journal` scheme.

Registration only hands AgentDeck a factory; nothing is opened until a deck opens its store.
"""

from __future__ import annotations

import agentdeck
from agentdeck.plugins.hookspecs import RegisterScheme
from agentdeck.ports import EventStore

from agentdeck_journal.store import SCHEME, JournalEventStore


@agentdeck.hookimpl
def agentdeck_register_event_stores(register: RegisterScheme[EventStore]) -> None:
    register(
        SCHEME,
        JournalEventStore.from_request,
        description="one append-only, fsynced JSON-lines file; durable, one process at a time",
    )
