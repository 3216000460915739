"""How the SQLite store keeps a run's events (schema 2): one row per event, keyed by the run's
ordinal and the event's seq, holding the event's time and its payload alone.

**The key.** ``agentdeck_events`` is a rowid table whose key is ``ordinal << SEQ_BITS | seq``
(:func:`event_id`): the run's ordinal in the runs table -- which grows with every run opened and
is never reused (``AUTOINCREMENT``) -- then the event's seq. Schema 1 keyed events by
``(run_id, seq)`` in a ``WITHOUT ROWID`` table: a random run id put every run's events on a
random leaf of an index-shaped tree, whose pages split in half. Keyed by ordinal, a new run's
events land at the end of the tree, where SQLite fills the last page and then starts a new
one, and no index is needed. A run's log is one range of keys (:data:`READ_LOG`). What it
costs: a run holds at most :data:`MAX_SEQ` events, and a file at most ``2**(63 - SEQ_BITS)``
runs.

**The row.** Every field of an event's envelope but its seq, time and payload is its run's
(``run_id``, ``session_id``, ``namespace``, ``parent_run_id``, and ``origin``, the run's name),
so a row keeps the time (``ts``, microseconds since the epoch) and the payload's JSON, and
reading joins the run's row once to build each envelope again (:func:`stored`). Schema 1 kept
the whole envelope: nearly five times the bytes for a text delta, and the envelope's serializer,
whose payload is a union of every kind, cost about four times the payload's own. The version
(``v``) of an envelope read back is this release's, like that of an event built in memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentdeck.model.events import Event
from agentdeck.model.payloads import Payload
from agentdeck.storage.codec import collector_paused, payload_to_json, stored_payload
from agentdeck.storage.sql import from_micros, ns_value

__all__ = [
    "DELETE_LOG",
    "INSERT_EVENT",
    "MAX_SEQ",
    "READ_LOG",
    "SEQ_BITS",
    "encode",
    "event_id",
    "stored",
]

SEQ_BITS = 24
"""Low bits of an event's key that hold its seq."""
MAX_SEQ = (1 << SEQ_BITS) - 1
"""The highest seq a run's events reach: 16,777,215 events after ``run.started``."""

INSERT_EVENT = "INSERT INTO agentdeck_events (id, ts, data) VALUES (?, ?, ?)"

_RUN = (
    f"WITH run AS (SELECT ordinal << {SEQ_BITS} AS base, session_id, ns, parent_run_id, name "
    "FROM agentdeck_runs WHERE run_id = ?) "
)
READ_LOG = (
    f"{_RUN}SELECT id - base, ts, data, session_id, ns, parent_run_id, name "
    f"FROM run, agentdeck_events WHERE id BETWEEN base + ? AND base + {MAX_SEQ} ORDER BY id"
)
"""A run's events from a seq on, in order, with its row's fields for their envelopes: its
ordinal by its id, then one range of keys, in one statement and so one snapshot."""
DELETE_LOG = (
    f"{_RUN}DELETE FROM agentdeck_events "
    f"WHERE id BETWEEN (SELECT base FROM run) AND (SELECT base FROM run) + {MAX_SEQ}"
)
"""Every event of a run (before its row goes: the range is found through it)."""


def event_id(ordinal: int, seq: int) -> int:
    """The key of event ``seq`` of the run with runs-table ``ordinal``."""
    return (ordinal << SEQ_BITS) | seq


def payload_json(payload: Payload) -> str:
    """A payload's JSON, as the envelope's serializer writes it inside the envelope (the
    payload's own class serializes it directly)."""
    return payload_to_json(payload).decode()


def encode(event: Event) -> str:
    """An event's ``data`` column: its payload (the plan's :attr:`BatchPlan.encode`)."""
    return payload_json(event.payload)


def stored(run_id: str, rows: Sequence[Sequence[Any]]) -> list[Event]:
    """The events :data:`READ_LOG` read, built again around their payloads."""
    if not rows:
        return []
    session_id, ns, parent_run_id, name = rows[0][3:]
    namespace = ns_value(ns)
    record = Event.record
    events: list[Event] = []
    last_micros, ts = None, None
    with collector_paused(len(rows)):  # a long log builds many objects at once
        for seq, micros, data, *_ in rows:
            if micros != last_micros:  # one time per append: its events share the datetime
                last_micros, ts = micros, from_micros(micros)
            assert ts is not None
            events.append(
                record(
                    stored_payload(data),
                    seq=seq,
                    run_id=run_id,
                    ts=ts,
                    session_id=session_id,
                    namespace=namespace,
                    parent_run_id=parent_run_id,
                    origin=name,
                )
            )
    return events
