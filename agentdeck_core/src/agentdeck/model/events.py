"""The event envelope: one :class:`Event` per entry of a run's log, around one payload.

Every run has one ordered, append-only log of :class:`Event` envelopes. ``type(event)`` is always
:class:`Event`; what happened is the ``payload`` (:mod:`agentdeck.model.payloads`), discriminated
on ``kind`` (a ``match`` on ``event.payload`` narrows it). The store assigns ``seq`` (per run,
0-based, gapless) and ``ts`` in the same atomic write that records the event, so an engine
produces *payloads* and never an envelope.

Compatibility rules, which every reader and writer relies on:

* ``v`` carries the schema version. Readers refuse another **major**; a newer **minor** only adds
  kinds, fields or enum values, and older readers keep working because
* an unknown kind (of valid kind syntax) parses as :class:`~agentdeck.model.payloads.UnknownEvent`,
  keeping its payload whole so it serializes back unchanged,
* unknown fields inside a known payload are ignored, and string enums accept values they do not
  know (they stay plain strings),
* everything this release writes round-trips exactly (nulls are written, not omitted; free-form
  data fields hold JSON data, normalized to it when the payload is built; times are
  UTC ISO-8601 with ``Z`` -- an aware time in another zone is converted to UTC when the event is
  built, so what is written never depends on the writer's zone).

A malformed *known* payload, an envelope whose kind disagrees with its payload's, or another
schema major is an :class:`~agentdeck.errors.EventSchemaError`. An inline content block over the
cap is a :class:`~agentdeck.errors.ContentTooLargeError` however it arrives (see
:mod:`agentdeck.model.content`).

Stores wrap payloads with :meth:`Event.record`, which builds the envelope without validating it
again when its parts are plainly valid (:mod:`agentdeck.model.unvalidated`);
:func:`record_unchecked` is that shortcut for a store whose parts are all its own. Reading rows
back fast is the stored-event codec's job (:mod:`agentdeck.storage.codec`).
:func:`agentdeck.model.schema.event_json_schema` publishes this schema as JSON Schema for readers in
other languages.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from agentdeck.errors import EventSchemaError
from agentdeck.model.field_types import KIND_JSON_PATTERN, UtcDatetime
from agentdeck.model.payloads import (
    PAYLOAD_TYPES,
    Payload,
    RunFailed,
    TextDelta,
    _Payload,
    payload_type,
)
from agentdeck.model.unvalidated import builder, proven
from agentdeck.vocabulary import SUSPENDING_KINDS, TERMINAL_KINDS

__all__ = [
    "SCHEMA_VERSION",
    "Event",
    "SchemaVersion",
    "parse_payload",
    "record_unchecked",
]


class SchemaVersion(BaseModel):
    """``{major, minor}`` of the event schema an event was written with."""

    model_config = ConfigDict(frozen=True)

    major: int
    minor: int


SCHEMA_VERSION = SchemaVersion(major=1, minor=2)
"""The version this release writes. Readers accept any minor of the same major."""


class Event(BaseModel):
    """One entry of a run's log. Immutable; produced by a store, never by an engine.

    ``origin`` is the name the caller addressed (not the engine, not a handoff target).
    ``parent_run_id`` is set on every event of a nested run, so a reader can place any event in
    its tree without reading ``run.started`` first.
    """

    # Built on first use, as the payloads are (see `agentdeck.model.payloads._Payload`).
    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    v: SchemaVersion = SCHEMA_VERSION
    kind: str = Field(json_schema_extra={"pattern": KIND_JSON_PATTERN})
    seq: int = Field(ge=0)
    run_id: str
    session_id: str | None = None
    namespace: str | None = None
    parent_run_id: str | None = None
    origin: str | None = None
    ts: UtcDatetime
    payload: Payload

    @model_validator(mode="before")
    @classmethod
    def _readable_major(cls, data: Any) -> Any:
        # Checked before anything else is validated: an event of another major may have a payload
        # of another shape entirely, and the reader should hear about the version, not a field.
        v = data.get("v") if isinstance(data, dict) else None
        major = v.get("major") if isinstance(v, dict) else getattr(v, "major", None)
        if isinstance(major, int) and major != SCHEMA_VERSION.major:
            raise PydanticCustomError(
                "schema_major",
                "event schema major {major} is not readable by this release (it reads major "
                "{readable}); upgrade agentdeck to read it",
                {"major": major, "readable": SCHEMA_VERSION.major},
            )
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Event:
        if self.payload.kind != self.kind:
            raise PydanticCustomError(
                "kind_mismatch",
                "envelope kind '{kind}' disagrees with payload kind '{payload_kind}'",
                {"kind": self.kind, "payload_kind": self.payload.kind},
            )
        return self

    # -- convenience -----------------------------------------------------------------------------

    @property
    def is_terminal(self) -> bool:
        return self.kind in TERMINAL_KINDS

    @property
    def is_suspending(self) -> bool:
        return self.kind in SUSPENDING_KINDS

    def to_json(self) -> str:
        """Serialize exactly (nulls written); :meth:`from_json` reads it back equal."""
        return self.model_dump_json()

    @classmethod
    def from_json(cls, data: str | bytes) -> Event:
        """Parse one event, raising :class:`EventSchemaError` for anything malformed.

        The error names the payload kind and the offending field. An inline content block over
        the cap raises :class:`~agentdeck.errors.ContentTooLargeError` instead, as it does
        wherever a block is built.
        """
        try:
            return cls.model_validate_json(data)
        except ValidationError as exc:
            raise _schema_error(exc) from None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        """Like :meth:`from_json`, from already-decoded JSON."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise _schema_error(exc) from None

    @classmethod
    def record(
        cls,
        payload: _Payload,
        *,
        seq: int,
        run_id: str,
        ts: datetime,
        session_id: str | None = None,
        namespace: str | None = None,
        parent_run_id: str | None = None,
        origin: str | None = None,
    ) -> Event:
        """Wrap a payload in its envelope. Stores call this when they assign ``seq`` and ``ts``.

        A store's own arguments (a payload model, an int seq, a UTC time) are built directly,
        without validating again; anything else is validated (see `_recorded`).
        """
        if cls is Event and _direct():
            event = _recorded(
                payload, seq, run_id, ts, session_id, namespace, parent_run_id, origin
            )
            if event is not None:
                return event
        return cls(
            kind=payload.kind,
            seq=seq,
            run_id=run_id,
            session_id=session_id,
            namespace=namespace,
            parent_run_id=parent_run_id,
            origin=origin,
            ts=ts,
            payload=payload,  # type: ignore[arg-type]
        )


_payload_adapter: TypeAdapter[Payload] = TypeAdapter(Payload, config=ConfigDict(defer_build=True))
"""Built on its first use, like the payloads (built now, it would build every payload at import)."""


def parse_payload(data: dict[str, Any] | str | bytes) -> Payload:
    """Parse a payload on its own (without an envelope), e.g. from an engine plugin's wire."""
    try:
        if isinstance(data, str | bytes):
            return _payload_adapter.validate_json(data)
        return _payload_adapter.validate_python(data)
    except ValidationError as exc:
        raise _schema_error(exc, prefix=("payload",)) from None


_ERROR_FIELDS = {"schema_major": "v.major", "kind_mismatch": "kind"}


def _schema_error(exc: ValidationError, prefix: tuple[str, ...] = ()) -> EventSchemaError:
    """Turn pydantic's report into an error that names the kind and the offending field.

    Pydantic's locations carry the union tag (``payload.text.delta.message_id``); the tag is the
    payload kind, so it is lifted out and the field is named as it appears in the JSON
    (``payload.message_id``).
    """
    errors = exc.errors()
    kind: str | None = None
    described: list[str] = []
    first_field: str | None = None
    for err in errors:
        loc = (*prefix, *err.get("loc", ()))
        if len(loc) >= 2 and loc[0] == "payload" and isinstance(loc[1], str):
            if payload_type(loc[1]) is not None:
                kind = kind or loc[1]
            loc = ("payload", *loc[2:])
        field = ".".join(str(p) for p in loc) or _ERROR_FIELDS.get(err["type"])
        msg = err.get("msg", "invalid").removeprefix("Value error, ")
        first_field = first_field or field
        described.append(f"{field}: {msg}" if field else msg)
    what = f"malformed {kind} event" if kind else "malformed event"
    return EventSchemaError(f"{what}: " + "; ".join(described), kind=kind, field=first_field)


# --------------------------------------------------------------------------- recording directly
# A store records every event it appends, from parts that are valid already: a payload model
# (validated when it was built), its own seq and its clock's UTC time. Validating the envelope
# again would cost more than the rest of an append, so `Event.record` builds it directly when
# its arguments are of exactly those types, vouching for what the envelope's validators check:
# the payload's kind is the envelope's (it is taken from the payload) and the version is this
# release's.

_RECORDED_FIELDS = {name for name in Event.model_fields if name != "v"}
"""What `Event.record` marks as given: every field but the defaulted version."""
_RECORDABLE: frozenset[type] = frozenset(PAYLOAD_TYPES)
_build_recorded = builder(
    Event, fields_set=_RECORDED_FIELDS, vouched=("_readable_major", "_consistent")
)

_Record = Callable[
    [_Payload, int, str, datetime, str | None, str | None, str | None, str | None], Event
]


def _record_built(
    payload: Any,
    seq: int,
    run_id: str,
    ts: datetime,
    session_id: str | None,
    namespace: str | None,
    parent_run_id: str | None,
    origin: str | None,
) -> Event:
    return _build_recorded(
        {
            "v": SCHEMA_VERSION,
            "kind": payload.kind,
            "seq": seq,
            "run_id": run_id,
            "session_id": session_id,
            "namespace": namespace,
            "parent_run_id": parent_run_id,
            "origin": origin,
            "ts": ts,
            "payload": payload,
        }
    )


def _record_validated(
    payload: Any,
    seq: int,
    run_id: str,
    ts: datetime,
    session_id: str | None,
    namespace: str | None,
    parent_run_id: str | None,
    origin: str | None,
) -> Event:
    return Event(
        kind=payload.kind,
        seq=seq,
        run_id=run_id,
        session_id=session_id,
        namespace=namespace,
        parent_run_id=parent_run_id,
        origin=origin,
        ts=ts,
        payload=payload,
    )


def _samples() -> Iterator[tuple[Callable[[], Event], Callable[[], Event]]]:
    ts = datetime(2026, 1, 2, 3, 4, 5, 60_000, tzinfo=UTC)
    envelopes: list[tuple[str | None, ...]] = [(None, None, None, None), ("s", "n", "p", "o")]
    for payload in (TextDelta(message_id="m", text="t"), RunFailed(error_code="x", message="m")):
        for ids in envelopes:
            yield (
                lambda p=payload, i=ids: _record_built(p, 3, "r", ts, *i),  # type: ignore[misc]
                lambda p=payload, i=ids: _record_validated(p, 3, "r", ts, *i),  # type: ignore[misc]
            )


@functools.cache
def _direct() -> bool:
    """Whether directly recorded events are the validated ones (checked once, on first use; a
    pydantic release that changed its internals turns the shortcut off).

    Not at import: the check validates events, which builds the envelope's validator and every
    payload's, and a command that only reads a store never records an event.
    """
    return proven(_samples())


record_unchecked: _Record  # chosen on first use, by `__getattr__` below
"""``record_unchecked(payload, seq, run_id, ts, session_id, namespace, parent_run_id, origin)``:
the event :meth:`Event.record` builds, without checking its arguments.

For a store whose arguments are all its own: a payload model (validated when it was built; an
:class:`~agentdeck.model.payloads.UnknownEvent` too), a ``seq`` that is a plain ``int`` ``>= 0``,
a ``ts`` in ``datetime.UTC``, plain strings or ``None`` for the rest.
Given anything else it builds an event validation would have refused or converted; use
:meth:`Event.record`, which checks them, when in doubt."""


if not TYPE_CHECKING:  # the type checker sees `record_unchecked` declared, and no other name

    def __getattr__(name: str) -> Any:
        # `record_unchecked` is chosen when it is first looked up (importing it is a lookup),
        # since choosing runs `_direct`'s check; the memory store then calls it for every event
        # it appends.
        if name == "record_unchecked":
            chosen = _record_built if _direct() else _record_validated
            globals()[name] = chosen  # resolved once; later lookups skip this function
            return chosen
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _recorded(
    payload: Any,
    seq: Any,
    run_id: Any,
    ts: Any,
    session_id: Any,
    namespace: Any,
    parent_run_id: Any,
    origin: Any,
) -> Event | None:
    """The event `Event.record` would build, built directly; ``None`` if an argument needs
    validating (or converting: a time in another zone, a payload of an unknown kind)."""
    if (
        type(payload) not in _RECORDABLE  # a payload model is validated when it is built
        or type(seq) is not int
        or seq < 0
        or type(run_id) is not str
        or type(ts) is not datetime
        or ts.tzinfo is not UTC
        or (session_id is not None and type(session_id) is not str)
        or (namespace is not None and type(namespace) is not str)
        or (parent_run_id is not None and type(parent_run_id) is not str)
        or (origin is not None and type(origin) is not str)
    ):
        return None
    return _record_built(payload, seq, run_id, ts, session_id, namespace, parent_run_id, origin)
