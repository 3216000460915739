"""Deprecated home of the SQLite backends, kept so existing imports keep working.

The SQLite event store, control port and lease port now ship with agentdeck-core as
:mod:`agentdeck.sqlite` (SQLite is the default state, so it needs no plugin). The names here are
the very same classes; import them from :mod:`agentdeck.sqlite` in new code.
"""

from __future__ import annotations

from agentdeck.sqlite import SqliteControlPort, SqliteEventStore, SqliteLeasePort

__all__ = ["SqliteControlPort", "SqliteEventStore", "SqliteLeasePort"]
