"""Reading a run's events back from PostgreSQL without parsing each whole envelope.

Every row of ``agentdeck_events`` holds a whole envelope (``Event.to_json``) as ``jsonb``, and
every envelope the store writes repeats its run's fields: the schema version, ``run_id``,
``session_id``, ``namespace``, ``parent_run_id`` and ``origin`` (the run's name). Reading a
10,000-event run as ``data::text`` spent four fifths of its CPU time parsing those envelopes
again in Python, and the server's in writing each out as text. So :data:`READ_LOG` asks the
server which rows carry exactly their run's envelope (one ``jsonb`` containment test per row,
against an envelope built once from the runs row) and sends for each only what differs from
event to event -- seq, time, kind and the payload's JSON; the run's fields arrive once, in a
header row. The client validates each payload with its own kind's model (pydantic's compiled
validator, the one the ``Payload`` union dispatches to) and wraps it with :meth:`Event.record`,
as the store does when it appends.

The result is the event ``Event.from_json`` gives for that row, or its error. A row of any
other shape -- another schema version (minor), a field of another type, an envelope that is not
its run's -- arrives whole and is read with :func:`agentdeck.storage.codec.stored_event`. What only
the client can check (a time not spelled ``...Z``, a seq that is not a plain non-negative integer,
a kind this release does not know, a payload its model refuses) sends the whole read down the
plain path again (:data:`READ_WHOLE`): a run's log is only ever appended to, so the second
statement reads the same events (as a read a moment later would), and reports any error exactly
as before. Such rows are not written by this store.

Events built this way mark every field but ``v`` as set, like every event a store records
(and the memory store returns); the old reader marked ``v`` too. They are equal, serialize
identically and print the same.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from agentdeck.model.events import SCHEMA_VERSION, Event
from agentdeck.model.payloads import PAYLOAD_TYPES, Payload
from agentdeck.model.unvalidated import sharing_fields_set
from agentdeck.storage.codec import collector_paused, stored_event, stored_events
from agentdeck.storage.sql import ns_value

__all__ = [
    "HEADER",
    "READ_LOG",
    "READ_LOG_LIMITED",
    "READ_WHOLE",
    "NotPlain",
    "events_from",
    "read_params",
    "whole_events",
    "whole_params",
]

HEADER = -1
"""The position of the header row, which carries the run's fields, before every event."""

_ENVELOPE = (
    "jsonb_build_object('v', %(v)s::jsonb, 'run_id', run_id, 'session_id', session_id, "
    "'namespace', CASE WHEN ns = '' THEN NULL ELSE substr(ns, 2) END, "
    "'parent_run_id', parent_run_id, 'origin', name)"
)
"""What every envelope of the run holds besides its seq, time, kind and payload (``ns`` is
:func:`agentdeck.storage.sql.ns_key`'s form)."""

_LOG = (
    "WITH run AS MATERIALIZED (SELECT session_id, ns, parent_run_id, name, "
    f"{_ENVELOPE} AS envelope FROM agentdeck_runs WHERE run_id = %(run_id)s) "
    f"SELECT {HEADER} AS position, session_id, ns, parent_run_id, name, NULL FROM run "
    "UNION ALL (SELECT e.seq, e.data->>'seq', e.data->>'ts', e.data->>'kind', "
    "(e.data->'payload')::text, "
    "CASE WHEN e.data @> r.envelope THEN NULL ELSE e.data::text END "
    "FROM agentdeck_events AS e LEFT JOIN run AS r ON true "
    "WHERE e.run_id = %(run_id)s AND e.seq >= %(from_seq)s ORDER BY e.seq{limit}) "
    "ORDER BY position"
)
READ_LOG = _LOG.format(limit="")
"""A run's events from a seq on: the header row (``HEADER``, then the run's ``session_id``,
``ns``, ``parent_run_id`` and ``name``), then per event its position, its envelope's seq, time
and kind as text, its payload's JSON, and -- only when the envelope is not exactly its run's --
the whole envelope. One statement, so one snapshot."""
READ_LOG_LIMITED = _LOG.format(limit=" LIMIT %(limit)s")
""":data:`READ_LOG` for at most ``%(limit)s`` events."""

READ_WHOLE = (
    "SELECT data::text FROM agentdeck_events WHERE run_id = %(run_id)s AND seq >= %(from_seq)s "
    "ORDER BY seq"
)
"""The plain path: every envelope whole."""

_VERSION = json.dumps({"major": SCHEMA_VERSION.major, "minor": SCHEMA_VERSION.minor})
_TS_SHAPE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?Z")
"""How ``Event.to_json`` writes a time; ``datetime.fromisoformat`` reads exactly these as
validation does (UTC). Any other spelling takes the plain path."""


def _payload_reader(cls: type[BaseModel]) -> Callable[[str], Payload]:
    """Validates a payload of ``cls`` from its JSON: what the ``Payload`` union runs for the
    kind. A payload with every field set (as stored) shares one fields set per class instead of
    holding one of its own, as the core's fast readers do (a set per event was about a sixth of a
    read-back event's memory; :func:`agentdeck.model.unvalidated.sharing_fields_set` says why
    that is safe)."""
    validate: Callable[[str], Payload] = cls.__pydantic_validator__.validate_json
    return sharing_fields_set(cls, validate)  # type: ignore[arg-type]


_READERS: dict[str, Callable[[str], Payload]] = {
    cls.KIND: _payload_reader(cls) for cls in PAYLOAD_TYPES
}
"""Each known kind's payload reader."""


class NotPlain(Exception):
    """A row only the plain path reads as ``Event.from_json`` would."""


def read_params(run_id: str, from_seq: int, limit: int | None) -> tuple[str, dict[str, Any]]:
    """The statement and parameters reading ``run_id``'s events from ``from_seq`` on."""
    params: dict[str, Any] = {"v": _VERSION, "run_id": run_id, "from_seq": max(0, from_seq)}
    if limit is None:
        return READ_LOG, params
    params["limit"] = max(0, limit)
    return READ_LOG_LIMITED, params


def whole_params(run_id: str, from_seq: int, limit: int | None) -> tuple[str, dict[str, Any]]:
    """The statement and parameters of the plain path (:data:`READ_WHOLE`)."""
    params: dict[str, Any] = {"run_id": run_id, "from_seq": max(0, from_seq)}
    if limit is None:
        return READ_WHOLE, params
    params["limit"] = max(0, limit)
    return f"{READ_WHOLE} LIMIT %(limit)s", params


def events_from(run_id: str, rows: Sequence[Sequence[Any]]) -> list[Event]:
    """The events :data:`READ_LOG` read; :class:`NotPlain` if a row needs the plain path."""
    if not rows:
        return []
    start = 0
    session_id = namespace = parent_run_id = origin = None
    if rows[0][0] == HEADER:
        _, session_id, ns, parent_run_id, origin, _ = rows[0]
        namespace = ns_value(ns)
        start = 1
    count = len(rows) - start
    if count <= 0:
        return []
    record = Event.record
    readers = _READERS
    ts_shape = _TS_SHAPE.fullmatch
    from_iso = datetime.fromisoformat
    events: list[Event] = []
    append = events.append
    last_ts: str | None = None
    moment: datetime | None = None
    with collector_paused(count):  # a long log builds many objects at once
        for index in range(start, len(rows)):
            _, seq_text, ts, kind, payload_json, whole = rows[index]
            if whole is not None:  # not its run's envelope: read it as it is
                append(stored_event(whole))
                continue
            if ts != last_ts:  # one time per append: its events share the datetime
                if ts is None or not ts_shape(ts):
                    raise NotPlain
                last_ts, moment = ts, from_iso(ts)
            validate = readers.get(kind) if kind is not None else None
            if (
                validate is None
                or payload_json is None
                or seq_text is None
                or not (seq_text.isdigit() and seq_text.isascii())  # as JSON writes an int >= 0
            ):
                raise NotPlain
            try:
                payload: Payload = validate(payload_json)
            except ValidationError:
                raise NotPlain from None
            assert moment is not None
            append(
                record(
                    payload,
                    seq=int(seq_text),
                    run_id=run_id,
                    ts=moment,
                    session_id=session_id,
                    namespace=namespace,
                    parent_run_id=parent_run_id,
                    origin=origin,
                )
            )
    return events


def whole_events(rows: Sequence[Sequence[Any]]) -> list[Event]:
    """The events :data:`READ_WHOLE` read, each parsed whole (``stored_event``)."""
    return stored_events([data for (data,) in rows])
