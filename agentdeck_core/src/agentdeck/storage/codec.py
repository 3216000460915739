"""The stored-event codec: events and payloads read back from what a store wrote, fast.

Reading a run back parses every event a store wrote, so that path is dominated by validation.
The rows a store hands back were written by :meth:`Event.to_json` (or, for a store that keeps the
envelope's fields itself, by :func:`payload_to_json`) and nearly always have exactly its shape:
every field present in declaration order, plain JSON types, UTC times with ``Z``. For such a row
a type check per field establishes everything validation would, and building the models directly
(:mod:`agentdeck.model.unvalidated`) skips pydantic's discriminator, model validators and
per-field Python validators, which cost most of a validated parse -- and the event takes about a
third of the memory.

What a caller can rely on: :func:`stored_event` gives the same event, or raises the same error,
as :meth:`Event.from_json` on the same text, and :func:`stored_payload` as
:func:`~agentdeck.model.events.parse_payload`. Any row not in the written shape -- an unknown
kind, another schema version, a field missing, unknown or of another type, a content block, a
model with validators of its own -- is validated, so the result (and every error) is exactly what
full validation gives. `_fast_read_matches` proves the equivalence once per process and turns the
shortcut off if a pydantic release ever breaks it.

Building a long run's events allocates tens of thousands of objects at once, so large batches are
built with the cyclic garbage collector paused (:class:`CollectorPause`, whose one instance this
module owns; stores that build their own batches enter it through :func:`collector_paused`).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import math
import operator
import re
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import from_json

from agentdeck.model.content import _JsonData
from agentdeck.model.events import SCHEMA_VERSION, Event, SchemaVersion, parse_payload
from agentdeck.model.field_types import OPEN_VOCABULARIES, UtcDatetime
from agentdeck.model.payloads import (
    PAYLOAD_TYPES,
    AnswerShape,
    ArtifactCreated,
    Payload,
    PlanItem,
    PlanUpdated,
    Report,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunPaused,
    StepCompleted,
    TextDelta,
    Usage,
    _Payload,
)
from agentdeck.model.unvalidated import builder, proven, unsafe_because

__all__ = [
    "COLLECTOR_PAUSE",
    "CollectorPause",
    "collector_paused",
    "payload_to_json",
    "stored_event",
    "stored_events",
    "stored_payload",
]

_ENVELOPE_CHECKS = ("_readable_major", "_consistent")
"""The envelope's validators, whose guarantees the direct reader establishes itself: the major is
this release's, and the payload's kind is the envelope's (each payload reader checks it)."""


class _NotPlain(Exception):
    """A row (or value) that needs full validation; caught inside this module, never raised."""


_Convert = Callable[[Any], Any]
_TS_SHAPE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?Z")
"""How `Event.to_json` writes a time (UTC, ``Z``); any other spelling takes the validated path."""
_NONE = type(None)
_JSON_TYPES: frozenset[type] = frozenset({dict, list, str, int, float, bool, _NONE})
"""The Python types a JSON value parses to."""
_MAX_SHAPES = 4096
"""A model whose fields admit more combinations of JSON types than this is left to validation
(its shapes are enumerated up front, so that one set lookup checks every field's type)."""


@dataclass(frozen=True)
class _FieldRead:
    """How a field of a stored row is read: the JSON types it may arrive as, and what turns the
    value into the model's (``None`` when the parsed value is the field's value as it is)."""

    types: frozenset[type]
    convert: _Convert | None = None


def _in_order(names: tuple[str, ...]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A function giving a dict of exactly ``names`` with its keys in that (declaration) order.

    The model's field order is what its ``repr`` and iteration show. A row as `Event.to_json`
    wrote it is already in order; PostgreSQL's JSONB keeps keys in an order of its own, so those
    dicts are rebuilt. :class:`_NotPlain` (or :class:`KeyError`) if a field is missing or unknown.
    """
    count = len(names)
    values = operator.itemgetter(*names) if count > 1 else lambda v: (v[names[0]],)

    def order(value: dict[str, Any]) -> dict[str, Any]:
        if tuple(value) == names:
            return value
        if len(value) != count:
            raise _NotPlain
        return dict(zip(names, values(value), strict=True))  # KeyError if a name is missing

    return order


def _utc(value: str) -> datetime:
    if not _TS_SHAPE.fullmatch(value):
        raise _NotPlain
    return datetime.fromisoformat(value)  # "Z" reads as datetime.UTC, as UtcDatetime leaves it


def _vocabulary(enum: type[StrEnum]) -> _Convert:
    members: dict[str, StrEnum] = {member.value: member for member in enum}
    return lambda value: members.get(value, value)  # a value a newer minor added stays a str


def _optional(inner: _Convert) -> _Convert:
    return lambda value: None if value is None else inner(value)


def _list_of(item: _FieldRead | None) -> _Convert:
    def convert(value: list[Any]) -> list[Any]:
        if item is None:
            if value:
                raise _NotPlain  # items only validation reads (content blocks)
            return value
        if any(type(each) not in item.types for each in value):
            raise _NotPlain
        return value if item.convert is None else [item.convert(each) for each in value]

    return convert


def _str_values(value: dict[str, Any]) -> dict[str, Any]:
    """A ``dict[str, str]`` field as parsed JSON (its keys are strings already)."""
    for item in value.values():
        if type(item) is not str:
            raise _NotPlain
    return value


def _field_read(annotation: Any) -> _FieldRead | None:
    """How to read a field of this annotation, or ``None`` when only validation can."""
    if annotation == _JsonData:
        return _FieldRead(_JSON_TYPES)  # JSON text's values are JSON data already
    if annotation == UtcDatetime:
        return _FieldRead(frozenset({str}), _utc)
    for vocabulary, enum in OPEN_VOCABULARIES:
        if annotation == vocabulary:
            return _FieldRead(frozenset({str}), _vocabulary(enum))
    if annotation in (str, int, bool, float):
        return _FieldRead(frozenset({annotation}))  # exact: a bool is no int, an int no float
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, UnionType) and len(args) == 2 and _NONE in args:
        inner = _field_read(next(arg for arg in args if arg is not _NONE))
        if inner is None:
            return None
        convert = _optional(inner.convert) if inner.convert is not None else None
        return _FieldRead(inner.types | {_NONE}, convert)
    if origin is list and len(args) == 1:
        return _FieldRead(frozenset({list}), _list_of(_field_read(args[0])))
    if origin is dict and args == (str, _JsonData):
        return _FieldRead(frozenset({dict}))
    if origin is dict and args == (str, str):
        return _FieldRead(frozenset({dict}), _str_values)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        read = _model_reader(annotation)
        return _FieldRead(frozenset({dict}), read) if read is not None else None
    return None


def _model_reader(cls: type[BaseModel], kind: str | None = None) -> _Convert | None:
    """A reader building ``cls`` from a dict of exactly its fields, in order, of plain types.

    ``None`` for a model that cannot be built without validation (validators of its own, extra
    fields kept, private state: :func:`~agentdeck.model.unvalidated.unsafe_because`) or with a
    field only validation can read. The types of all fields are checked at once against the
    combinations the fields accept, the parsed dict itself becomes the model's field values, and
    only fields that change type (times, enums, nested models) are converted.
    """
    if unsafe_because(cls):
        return None
    names = tuple(cls.model_fields)
    allowed: list[frozenset[type]] = []
    converted: list[tuple[str, _Convert]] = []
    for name, info in cls.model_fields.items():
        if name == "kind" and kind is not None:
            allowed.append(frozenset({str}))  # and equal to the kind the envelope names
            continue
        annotation = (
            Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
        )
        field = _field_read(annotation)
        if field is None:
            return None
        allowed.append(field.types)
        if field.convert is not None:
            converted.append((name, field.convert))
    if math.prod(len(types) for types in allowed) > _MAX_SHAPES:
        return None
    shapes = frozenset(itertools.product(*allowed))
    in_order = _in_order(names)
    build = builder(cls)  # every field was given, as in a row `to_json` wrote

    def read(value: Any) -> Any:
        if type(value) is not dict:
            raise _NotPlain
        value = in_order(value)
        if tuple(map(type, value.values())) not in shapes or (
            kind is not None and value["kind"] != kind
        ):
            raise _NotPlain
        for name, convert in converted:
            value[name] = convert(value[name])
        return build(value)

    return read


_ENVELOPE_FIELDS = tuple(Event.model_fields)


@functools.cache
def _payload_readers() -> dict[str, _Convert]:
    """The direct reader of each kind whose payloads a plain row can build (built once)."""
    return {
        cls.KIND: reader
        for cls in PAYLOAD_TYPES
        if (reader := _model_reader(cls, cls.KIND)) is not None
    }


def _direct_reader() -> Callable[[Any], Event]:
    """Builds an event from a parsed plain row; :class:`_NotPlain` (or the ``KeyError``,
    ``ValueError`` or ``TypeError`` of a row of another shape) when it needs validating."""
    payloads = _payload_readers()
    current = SCHEMA_VERSION
    build_version = builder(SchemaVersion)
    build_event = builder(Event, vouched=_ENVELOPE_CHECKS)
    ts_shape = _TS_SHAPE.fullmatch
    from_iso = datetime.fromisoformat

    def envelope(raw: Any) -> Event:
        # Exactly the envelope's fields (a name missing raises KeyError: validate), each read
        # by name, so the key order of the row does not matter and the new dict is in order.
        if type(raw) is not dict or len(raw) != len(_ENVELOPE_FIELDS):
            raise _NotPlain
        v, kind, seq, run_id = raw["v"], raw["kind"], raw["seq"], raw["run_id"]
        session_id, namespace = raw["session_id"], raw["namespace"]
        parent_run_id, origin, ts = raw["parent_run_id"], raw["origin"], raw["ts"]
        read_payload = payloads.get(kind) if type(kind) is str else None
        if (
            read_payload is None  # an unknown kind, or one only validation reads
            or type(seq) is not int
            or seq < 0
            or type(run_id) is not str
            or type(ts) is not str
            or not ts_shape(ts)
            or (session_id is not None and type(session_id) is not str)
            or (namespace is not None and type(namespace) is not str)
            or (parent_run_id is not None and type(parent_run_id) is not str)
            or (origin is not None and type(origin) is not str)
            or type(v) is not dict
            or len(v) != 2
        ):
            raise _NotPlain
        major, minor = v["major"], v["minor"]
        if type(major) is not int or type(minor) is not int or major != current.major:
            raise _NotPlain  # another major is refused by validation, saying why
        if minor == current.minor:
            version = current  # frozen and equal: one instance serves every event of it
        else:
            version = build_version({"major": major, "minor": minor})
        return build_event(
            {
                "v": version,
                "kind": kind,
                "seq": seq,
                "run_id": run_id,
                "session_id": session_id,
                "namespace": namespace,
                "parent_run_id": parent_run_id,
                "origin": origin,
                "ts": from_iso(ts),
                "payload": read_payload(raw["payload"]),
            }
        )

    return envelope


def _stored_reader(direct: Callable[[Any], Event]) -> Callable[[str | bytes], Event]:
    """The reader of stored rows: built directly when plain, validated otherwise."""

    def read(data: str | bytes) -> Event:
        try:
            return direct(from_json(data))
        except (_NotPlain, KeyError, ValueError, TypeError):
            return Event.from_json(data)

    return read


def _fast_read_matches(direct: Callable[[Any], Event]) -> bool:
    """Whether directly built events equal validated ones in every observable way.

    Checked once, on plain rows covering each way a field is read (each must be built directly,
    without falling back); a pydantic release that changed its internals fails it, and stored
    rows are then validated like any other.
    """
    ts = datetime(2026, 1, 2, 3, 4, 5, 60_000, tzinfo=UTC)
    samples: list[_Payload] = [
        TextDelta(message_id="m", text="t"),
        RunCompleted(usage=Usage(requests=1, input_tokens=2, usd=0.5)),
        RunFailed(error_code="deadline", message="late"),
        RunFailed(error_code="not_known_yet", message="newer", where="tool"),
        RunPaused(reason="timer", wake_at=ts),
        StepCompleted(index=1, name="s", result={"a": [1, 2.5, None, True]}),
        PlanUpdated(items=[PlanItem(title="one")]),
        RunInterrupted(interrupt_id="q", expected=AnswerShape(options=["yes", "no"])),
        ArtifactCreated(artifact_id="a", media_type="text/plain", size=3),
        Report(message="m", fields={"k": "v"}),
    ]
    try:
        rows = [
            Event.record(sample, seq=7, run_id="r", ts=at, session_id="s", origin="o").to_json()
            for sample in samples
            for at in (ts, ts.replace(microsecond=0))
        ]
    except Exception:  # pragma: no cover - the samples are valid events
        return False
    return proven(
        (lambda row=row: direct(from_json(row)), lambda row=row: Event.from_json(row))  # type: ignore[misc]
        for row in rows
    )


@functools.cache
def _reader() -> Callable[[str | bytes], Event]:
    direct = _direct_reader()
    return _stored_reader(direct) if _fast_read_matches(direct) else Event.from_json


def stored_event(data: str | bytes) -> Event:
    """Parse one event as a store wrote it: the same event, or error, as :meth:`Event.from_json`.

    For rows read back from a store. A row in exactly the shape `Event.to_json` writes is built
    with a type check per field instead of pydantic's full validation (cheaper, and the event
    takes about a third of the memory); any other row is validated as :meth:`Event.from_json`
    does.
    """
    return _reader()(data)


# --------------------------------------------------------------------------- the collector pause


class CollectorPause:
    """Holds the cyclic garbage collector off while large batches of stored events are built.

    Process-wide by nature: the interpreter has one cyclic collector, and ``gc.disable()`` stops
    it for every thread. Building a long run's events allocates tens of thousands of tracked
    objects, and every allocation threshold crossed runs a collection that walks them again --
    which roughly doubled the cost of reading a long run back; the events hold no reference
    cycles, so pausing leaves nothing uncollected. Because the switch is global, so is its
    bookkeeping: there is one instance, :data:`COLLECTOR_PAUSE`, owned by the stored-event codec
    (:mod:`agentdeck.storage.codec`), and every batch in any thread enters that same instance
    (the memory store, the SQLite and PostgreSQL stores through :func:`collector_paused`). A
    count kept under a lock makes entries re-entrant and lets batches in several threads
    overlap: the first entry notes whether the collector was running and stops it, the last
    exit restarts it only if it was, and the collector then runs as the allocation counts say.
    A second pause object would restart the collector while another batch still relied on it
    being off, which is why nothing else in AgentDeck calls ``gc.disable()``.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._resume = False

    @property
    def depth(self) -> int:
        """How many batches, in every thread, are being built under the pause now."""
        return self._depth

    def __enter__(self) -> None:
        with self._lock:
            if self._depth == 0:
                self._resume = gc.isenabled()
                gc.disable()
            self._depth += 1

    def __exit__(self, *_: object) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and self._resume:
                gc.enable()


COLLECTOR_PAUSE = CollectorPause()
"""The process's one collector pause (see :class:`CollectorPause`)."""
_PAUSE_FROM = 256
"""Batches of at least this many rows are built with the collector paused."""


def collector_paused(count: int) -> AbstractContextManager[None]:
    """:data:`COLLECTOR_PAUSE` while ``count`` events are built, when that is many (the reason is
    :class:`CollectorPause`'s); a no-op for a few."""
    return COLLECTOR_PAUSE if count >= _PAUSE_FROM else contextlib.nullcontext()


def stored_events(rows: Sequence[str | bytes]) -> list[Event]:
    """:func:`stored_event` over rows, in order (a run's log read back)."""
    read = _reader()
    if len(rows) < _PAUSE_FROM:
        return [read(row) for row in rows]
    with COLLECTOR_PAUSE:
        return [read(row) for row in rows]


# --------------------------------------------------------------------------- stored payloads
# A store that keeps the envelope's fields itself (the memory store packs a finished run's log
# this way, see `agentdeck.memory.packed`; the SQLite store keeps payload-only rows) writes only
# the payload. Serializing a payload with its own class's serializer costs a fifth of serializing
# the envelope around it, whose payload field is a union of every kind; reading one back takes
# the direct readers the stored events use.


def payload_to_json(payload: Payload) -> bytes:
    """A payload's JSON, exactly as :meth:`Event.to_json` writes it inside the envelope."""
    return type(payload).__pydantic_serializer__.to_json(payload)


@functools.cache
def _payload_reader() -> Callable[[str | bytes], Payload]:
    if _reader() is Event.from_json:  # the shortcut is off for this pydantic: validate
        return parse_payload
    readers = _payload_readers()

    def read(data: str | bytes) -> Payload:
        try:
            raw = from_json(data)
            kind = raw["kind"] if type(raw) is dict else None
            reader = readers.get(kind) if type(kind) is str else None
            if reader is None:
                raise _NotPlain
            payload: Payload = reader(raw)
            return payload
        except (_NotPlain, KeyError, ValueError, TypeError):
            return parse_payload(data)

    return read


def stored_payload(data: str | bytes) -> Payload:
    """Parse one payload as :func:`payload_to_json` wrote it: the same payload, or error, as
    :func:`~agentdeck.model.events.parse_payload` gives, built directly when the row is plain
    (see :func:`stored_event`)."""
    return _payload_reader()(data)
