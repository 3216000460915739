"""The core's SQLite backends: event store, control signals and leases in one file (``sqlite``).

SQLite ships with Python, so a durable store needs no extra install: this is where the state of a
deck lives when nothing else is configured. Registered by :mod:`agentdeck.sqlite.plugin` through
the same entry point and hooks as any third-party store plugin; the SQL that decides conditional
writes is shared with the PostgreSQL store (:mod:`agentdeck.storage.sql`).
"""

from __future__ import annotations

from agentdeck.sqlite.store import SqliteControlPort, SqliteEventStore, SqliteLeasePort

__all__ = ["SqliteControlPort", "SqliteEventStore", "SqliteLeasePort"]
