"""agentdeck-journal: an AgentDeck event store in one append-only journal file (``journal://``).

A third-party plugin: it depends on ``agentdeck-core`` only, registers itself through the
``agentdeck`` entry-point group, and proves itself with the core's store contract kit.
"""

from __future__ import annotations

from agentdeck_journal.store import SCHEME, JournalEventStore, journal_path

__all__ = ["SCHEME", "JournalEventStore", "journal_path"]
