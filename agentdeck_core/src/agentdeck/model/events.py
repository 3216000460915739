"""The event schema: one envelope, one payload type per kind.

Every run has one ordered, append-only log of :class:`Event` envelopes. ``type(event)`` is always
:class:`Event`; what happened is the ``payload``, discriminated on ``kind`` (a ``match`` on
``event.payload`` narrows it). The store assigns ``seq`` (per run, 0-based, gapless) and ``ts``
in the same atomic write that records the event, so an engine produces *payloads* and never an
envelope.

Compatibility rules, which every reader and writer relies on:

* ``v`` carries the schema version. Readers refuse another **major**; a newer **minor** only adds
  kinds, fields or enum values, and older readers keep working because
* an unknown kind (of valid kind syntax) parses as :class:`UnknownEvent`, keeping its payload
  whole so it serializes back unchanged,
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

:func:`agentdeck.model.schema.event_json_schema` publishes this schema as JSON Schema for readers in
other languages.
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
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PlainValidator,
    Tag,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError, from_json

from agentdeck.errors import EventSchemaError
from agentdeck.model.content import ContentBlock, _JsonData
from agentdeck.vocabulary import (
    SUSPENDING_KINDS,
    TERMINAL_KINDS,
    AnswerOrigin,
    ControlVerb,
    ErrorCode,
    InterruptReason,
    ReportLevel,
    SafePoint,
    WaitKind,
)

__all__ = [
    "KIND_PATTERN",
    "PAYLOAD_TYPES",
    "SCHEMA_VERSION",
    "AgentChanged",
    "AnswerRecorded",
    "AnswerRefused",
    "AnswerShape",
    "ApprovalDecided",
    "ArtifactCreated",
    "ControlObserved",
    "ControlRequested",
    "Custom",
    "Event",
    "InputAppended",
    "MessageCompleted",
    "NodeUpdated",
    "Payload",
    "PlanItem",
    "PlanUpdated",
    "Report",
    "RunCancelled",
    "RunCompleted",
    "RunFailed",
    "RunInterrupted",
    "RunPaused",
    "RunResumed",
    "RunStarted",
    "SchemaVersion",
    "StepCompleted",
    "TextDelta",
    "ThoughtDelta",
    "ToolCallCompleted",
    "ToolCallStarted",
    "UnknownEvent",
    "Usage",
    "UsageReported",
    "collector_paused",
    "parse_payload",
    "payload_to_json",
    "payload_type",
    "stored_event",
    "stored_events",
    "stored_payload",
]

_KIND_SYNTAX = r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*"
KIND_PATTERN = re.compile(rf"\A{_KIND_SYNTAX}\Z")
"""What a kind may look like: dotted lower-case words (``run.started``, ``app.thing``).

Anchored with ``\\A``/``\\Z`` (not ``^``/``$``, which would let a trailing newline through), so
``KIND_PATTERN.match`` checks the whole string.
"""

_KIND_JSON_PATTERN = r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$"
"""The same syntax in the regex subset JSON Schema recommends (ECMA-262, where ``$`` is the very
end and a plain group is the portable one)."""
_CUSTOM_NAME_JSON_PATTERN = r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$"
"""A kind-shaped name with at least one dot: what ``custom.name`` accepts, for the JSON Schema."""


def _to_utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


_UtcDatetime = Annotated[AwareDatetime, AfterValidator(_to_utc)]
"""A timezone-aware time, kept in UTC so it is always written with ``Z``."""


class SchemaVersion(BaseModel):
    """``{major, minor}`` of the event schema an event was written with."""

    model_config = ConfigDict(frozen=True)

    major: int
    minor: int


SCHEMA_VERSION = SchemaVersion(major=1, minor=0)
"""The version this release writes. Readers accept any minor of the same major."""


# --------------------------------------------------------------------------- open vocabularies
# The vocabularies themselves live in agentdeck.vocabulary; here is how event fields accept them.


def _open_vocabulary(enum: type[StrEnum]) -> PlainValidator:
    """Validate an ``Enum | str`` field: a known value becomes the member, any other string stays.

    One validator rather than a pydantic union, so a wrong type is one error at the field itself
    (``payload.error_code``) instead of one per union member.
    """

    def validate(value: object) -> str:
        if isinstance(value, enum):
            return value
        if not isinstance(value, str):
            raise PydanticCustomError("string_type", "Input should be a valid string")
        try:
            return enum(value)
        except ValueError:
            return value

    return PlainValidator(validate, json_schema_input_type=enum | str)


_OpenErrorCode = Annotated[ErrorCode | str, _open_vocabulary(ErrorCode)]
_OpenControlVerb = Annotated[ControlVerb | str, _open_vocabulary(ControlVerb)]
_OpenSafePoint = Annotated[SafePoint | str, _open_vocabulary(SafePoint)]
_OpenInterruptReason = Annotated[InterruptReason | str, _open_vocabulary(InterruptReason)]
_OpenAnswerOrigin = Annotated[AnswerOrigin | str, _open_vocabulary(AnswerOrigin)]
_OpenReportLevel = Annotated[ReportLevel | str, _open_vocabulary(ReportLevel)]
_OpenWaitKind = Annotated[WaitKind | str, _open_vocabulary(WaitKind)]


# --------------------------------------------------------------------------- payload base


def _require_kind(schema: dict[str, Any]) -> None:
    # ``kind`` has a default in Python but is always written and is what tells payloads apart:
    # required in the JSON Schema, so a non-Python reader's ``oneOf`` matches exactly one payload.
    required = schema.setdefault("required", [])
    if "kind" not in required:
        required.insert(0, "kind")


class _Payload(BaseModel):
    """Base of every payload: frozen, unknown fields ignored, ``kind`` repeated inside."""

    model_config = ConfigDict(frozen=True, extra="ignore", json_schema_extra=_require_kind)

    KIND: ClassVar[str] = ""
    kind: str


class Usage(BaseModel):
    """Token usage. On ``run.completed`` it is the run's authoritative total.

    ``usd`` is never filled by AgentDeck (a price depends on a contract, not on the call); it is
    deprecated and kept only so callers that supply their own cost have a field for it.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    usd: float | None = None

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            requests=self.requests + other.requests,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            usd=None,
        )


class AnswerShape(BaseModel):
    """What an interrupt will accept as its answer: a JSON Schema, a list of options, or both."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    json_schema: dict[str, _JsonData] | None = None
    options: list[_JsonData] | None = None


class PlanItem(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    title: str
    status: str = "pending"


# --------------------------------------------------------------------------- lifecycle


class RunStarted(_Payload):
    """The run exists. Always seq 0; written by the runtime through the store's conditional open.

    ``name`` is the invocable the caller addressed; ``invocable_kind`` what it is (``agent``,
    ``workflow``, ...). ``code_digest`` pins the code a durable workflow started with, so a replay
    against changed code can be refused. ``deadline`` is recorded so whichever process continues
    the run enforces the same one.
    """

    KIND: ClassVar[str] = "run.started"
    kind: Literal["run.started"] = "run.started"
    name: str
    invocable_kind: str
    input: list[ContentBlock] = Field(default_factory=list)
    key: str | None = None
    code_digest: str | None = None
    deadline: _UtcDatetime | None = None


class RunCompleted(_Payload):
    """Terminal. ``output`` is the whole user-facing result: artifacts first, final text last."""

    KIND: ClassVar[str] = "run.completed"
    kind: Literal["run.completed"] = "run.completed"
    output: list[ContentBlock] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)


class RunFailed(_Payload):
    """Terminal. ``message`` never carries engine exception text, only what is safe to show.

    ``where`` names the tool, node or step that failed when one did.
    """

    KIND: ClassVar[str] = "run.failed"
    kind: Literal["run.failed"] = "run.failed"
    error_code: _OpenErrorCode
    message: str
    retryable: bool = False
    where: str | None = None


class RunCancelled(_Payload):
    """Terminal."""

    KIND: ClassVar[str] = "run.cancelled"
    kind: Literal["run.cancelled"] = "run.cancelled"
    reason: str | None = None


class RunPaused(_Payload):
    """Suspends the run. ``wake_at`` set means a timer: the deck's sweep resumes it then.

    ``waiting_on`` says what the run waits on: ``child_runs`` (continued when one of the child
    runs listed in ``waiting_for`` ends) or ``timer``; it is unset for an operator's pause (or
    a closing deck's), which only ``resume()`` continues. The runtime decides from these
    fields; ``reason`` is for people.
    """

    KIND: ClassVar[str] = "run.paused"
    kind: Literal["run.paused"] = "run.paused"
    reason: str | None = None
    wake_at: _UtcDatetime | None = None
    waiting_on: _OpenWaitKind | None = None
    waiting_for: list[str] = []
    """The child run ids a ``child_runs`` wait is for (empty for any other pause)."""


class RunResumed(_Payload):
    """The run continues. Written only while the run is suspended (a conditional append).

    ``interrupt_id`` names the answered interrupt when an answer is what resumed it; the answer
    itself is the ``answer.recorded`` event written in the same atomic batch.
    """

    KIND: ClassVar[str] = "run.resumed"
    kind: Literal["run.resumed"] = "run.resumed"
    reason: str | None = None
    interrupt_id: str | None = None


class RunInterrupted(_Payload):
    """Suspends the run until ``interrupt_id`` is answered. Several may be open at once."""

    KIND: ClassVar[str] = "run.interrupted"
    kind: Literal["run.interrupted"] = "run.interrupted"
    interrupt_id: str
    reason: _OpenInterruptReason = InterruptReason.HUMAN
    payload: _JsonData = None
    expected: AnswerShape | None = None


# --------------------------------------------------------------------------- answers, approvals


class AnswerRecorded(_Payload):
    """An answer accepted for one interrupt, and who gave it."""

    KIND: ClassVar[str] = "answer.recorded"
    kind: Literal["answer.recorded"] = "answer.recorded"
    interrupt_id: str
    value: _JsonData = None
    origin: _OpenAnswerOrigin = AnswerOrigin.HUMAN


class AnswerRefused(_Payload):
    """An answer that did not fit; the run stays parked. ``reason`` never echoes the value."""

    KIND: ClassVar[str] = "answer.refused"
    kind: Literal["answer.refused"] = "answer.refused"
    interrupt_id: str
    reason: str


class ApprovalDecided(_Payload):
    """A tool call approved or rejected, by a person (via an answer) or by application policy."""

    KIND: ClassVar[str] = "approval.decided"
    kind: Literal["approval.decided"] = "approval.decided"
    call_id: str
    tool: str
    approved: bool
    origin: AnswerOrigin | str
    interrupt_id: str | None = None
    message: str | None = None


# --------------------------------------------------------------------------- control


class ControlRequested(_Payload):
    """A pending control request, recorded when the engine (or runtime) reads it."""

    KIND: ClassVar[str] = "control.requested"
    kind: Literal["control.requested"] = "control.requested"
    verb: _OpenControlVerb
    reason: str | None = None


class ControlObserved(_Payload):
    """The request was acted on at ``safe_point``; the lifecycle event follows it."""

    KIND: ClassVar[str] = "control.observed"
    kind: Literal["control.observed"] = "control.observed"
    verb: _OpenControlVerb
    safe_point: _OpenSafePoint


# --------------------------------------------------------------------------- content


class TextDelta(_Payload):
    """A piece of a model's reply text, as it streams; ``message_id`` groups a message."""

    KIND: ClassVar[str] = "text.delta"
    kind: Literal["text.delta"] = "text.delta"
    message_id: str
    text: str


class ThoughtDelta(_Payload):
    """A piece of a model's reasoning text, as it streams; kept apart from the reply."""

    KIND: ClassVar[str] = "thought.delta"
    kind: Literal["thought.delta"] = "thought.delta"
    message_id: str
    text: str


class MessageCompleted(_Payload):
    """A finished model message: its whole text (what the deltas added up to), once."""

    KIND: ClassVar[str] = "message.completed"
    kind: Literal["message.completed"] = "message.completed"
    message_id: str
    text: str
    agent: str | None = None


class AgentChanged(_Payload):
    """A completed handoff."""

    KIND: ClassVar[str] = "agent.changed"
    kind: Literal["agent.changed"] = "agent.changed"
    previous: str | None
    next: str


class ToolCallStarted(_Payload):
    """A tool call about to run. ``args`` is the parsed arguments, or the raw text the model sent
    when it was not valid JSON (then ``args_error`` says why)."""

    KIND: ClassVar[str] = "tool.call.started"
    kind: Literal["tool.call.started"] = "tool.call.started"
    call_id: str
    tool: str
    args: _JsonData = None
    args_error: str | None = None


class ToolCallCompleted(_Payload):
    """A tool call finished. The result itself is never stored: a capped preview, its size and
    its SHA-256. ``error`` is set when the tool raised or returned what JSON cannot carry."""

    KIND: ClassVar[str] = "tool.call.completed"
    kind: Literal["tool.call.completed"] = "tool.call.completed"
    call_id: str
    tool: str
    result_preview: str = ""
    result_size: int = 0
    result_sha256: str | None = None
    error: str | None = None


class UsageReported(_Payload):
    """Usage of one model call (advisory; the total is on ``run.completed``)."""

    KIND: ClassVar[str] = "usage.reported"
    kind: Literal["usage.reported"] = "usage.reported"
    model: str | None = None
    usage: Usage


class Report(_Payload):
    """Progress or status from inside the work."""

    KIND: ClassVar[str] = "report"
    kind: Literal["report"] = "report"
    level: _OpenReportLevel = ReportLevel.INFO
    message: str
    fields: dict[str, _JsonData] = Field(default_factory=dict)


class ArtifactCreated(_Payload):
    """A file or blob the run produced, by media type and, when it has one, where to find it."""

    KIND: ClassVar[str] = "artifact.created"
    kind: Literal["artifact.created"] = "artifact.created"
    artifact_id: str
    media_type: str
    uri: str | None = None
    size: int | None = None


class InputAppended(_Payload):
    """More input added to a live run, and where it came from."""

    KIND: ClassVar[str] = "input.appended"
    kind: Literal["input.appended"] = "input.appended"
    input: list[ContentBlock]
    source: str | None = None


class StepCompleted(_Payload):
    """A durable workflow step's result, journaled so a replay returns it without re-running.

    ``index`` is the step's ordinal in the run; ``name`` the label the body gave it.
    """

    KIND: ClassVar[str] = "step.completed"
    kind: Literal["step.completed"] = "step.completed"
    index: int
    name: str
    result: _JsonData = None


class NodeUpdated(_Payload):
    """A graph node completed; ``update`` is the state update it returned."""

    KIND: ClassVar[str] = "node.updated"
    kind: Literal["node.updated"] = "node.updated"
    node: str
    update: _JsonData = None
    step: int | None = None


class PlanUpdated(_Payload):
    """The agent's plan (todo list) as it now stands."""

    KIND: ClassVar[str] = "plan.updated"
    kind: Literal["plan.updated"] = "plan.updated"
    items: list[PlanItem]


class Custom(_Payload):
    """Application data under a namespaced name (``app.thing``)."""

    KIND: ClassVar[str] = "custom"
    kind: Literal["custom"] = "custom"
    name: str = Field(json_schema_extra={"pattern": _CUSTOM_NAME_JSON_PATTERN})
    data: _JsonData = None

    @field_validator("name")
    @classmethod
    def _namespaced(cls, name: str) -> str:
        if "." not in name or not KIND_PATTERN.match(name):
            raise ValueError(f"custom event name {name!r} must be namespaced, like 'app.thing'")
        return name


def _unknown_event_schema(schema: dict[str, Any]) -> None:
    _require_kind(schema)
    kind = schema["properties"]["kind"]
    kind["pattern"] = _KIND_JSON_PATTERN
    kind["not"] = {"enum": sorted(_BY_KIND)}


class UnknownEvent(_Payload):
    """A payload of a kind this release does not know (written by a newer one).

    Every field is kept as it arrived, so it serializes back exactly. Only for kinds this release
    does not know: an ``UnknownEvent`` of a known kind would read back as that kind's payload, so
    it is refused.
    """

    model_config = ConfigDict(frozen=True, extra="allow", json_schema_extra=_unknown_event_schema)

    @field_validator("kind")
    @classmethod
    def _valid_kind(cls, kind: str) -> str:
        if not KIND_PATTERN.match(kind):
            raise ValueError(
                f"{kind!r} is not a valid event kind (dotted lower-case words, like 'app.thing')"
            )
        if kind in _BY_KIND:
            raise ValueError(f"{kind!r} is a known kind; build its payload type instead")
        return kind

    @property
    def data(self) -> dict[str, Any]:
        """The payload's fields other than ``kind``, as they arrived."""
        return dict(self.__pydantic_extra__ or {})

    @model_serializer(mode="wrap")
    def _keep_everything(self, handler: Any) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        out.update(self.__pydantic_extra__ or {})
        return out


PAYLOAD_TYPES: tuple[type[_Payload], ...] = (
    RunStarted,
    RunCompleted,
    RunFailed,
    RunCancelled,
    RunPaused,
    RunResumed,
    RunInterrupted,
    AnswerRecorded,
    AnswerRefused,
    ApprovalDecided,
    ControlRequested,
    ControlObserved,
    TextDelta,
    ThoughtDelta,
    MessageCompleted,
    AgentChanged,
    ToolCallStarted,
    ToolCallCompleted,
    UsageReported,
    Report,
    ArtifactCreated,
    InputAppended,
    StepCompleted,
    NodeUpdated,
    PlanUpdated,
    Custom,
)
"""Every payload type this release knows, one per kind."""

_BY_KIND: dict[str, type[_Payload]] = {t.KIND: t for t in PAYLOAD_TYPES}


def _payload_tag(value: Any) -> str:
    if isinstance(value, UnknownEvent):
        return "unknown"
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return kind if isinstance(kind, str) and kind in _BY_KIND else "unknown"


Payload = Annotated[
    Annotated[RunStarted, Tag("run.started")]
    | Annotated[RunCompleted, Tag("run.completed")]
    | Annotated[RunFailed, Tag("run.failed")]
    | Annotated[RunCancelled, Tag("run.cancelled")]
    | Annotated[RunPaused, Tag("run.paused")]
    | Annotated[RunResumed, Tag("run.resumed")]
    | Annotated[RunInterrupted, Tag("run.interrupted")]
    | Annotated[AnswerRecorded, Tag("answer.recorded")]
    | Annotated[AnswerRefused, Tag("answer.refused")]
    | Annotated[ApprovalDecided, Tag("approval.decided")]
    | Annotated[ControlRequested, Tag("control.requested")]
    | Annotated[ControlObserved, Tag("control.observed")]
    | Annotated[TextDelta, Tag("text.delta")]
    | Annotated[ThoughtDelta, Tag("thought.delta")]
    | Annotated[MessageCompleted, Tag("message.completed")]
    | Annotated[AgentChanged, Tag("agent.changed")]
    | Annotated[ToolCallStarted, Tag("tool.call.started")]
    | Annotated[ToolCallCompleted, Tag("tool.call.completed")]
    | Annotated[UsageReported, Tag("usage.reported")]
    | Annotated[Report, Tag("report")]
    | Annotated[ArtifactCreated, Tag("artifact.created")]
    | Annotated[InputAppended, Tag("input.appended")]
    | Annotated[StepCompleted, Tag("step.completed")]
    | Annotated[NodeUpdated, Tag("node.updated")]
    | Annotated[PlanUpdated, Tag("plan.updated")]
    | Annotated[Custom, Tag("custom")]
    | Annotated[UnknownEvent, Tag("unknown")],
    Discriminator(_payload_tag),
]
"""Any payload, discriminated on ``kind``; an unknown kind parses as :class:`UnknownEvent`."""


# --------------------------------------------------------------------------- envelope


class Event(BaseModel):
    """One entry of a run's log. Immutable; produced by a store, never by an engine.

    ``origin`` is the name the caller addressed (not the engine, not a handoff target).
    ``parent_run_id`` is set on every event of a nested run, so a reader can place any event in
    its tree without reading ``run.started`` first.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    v: SchemaVersion = SCHEMA_VERSION
    kind: str = Field(json_schema_extra={"pattern": _KIND_JSON_PATTERN})
    seq: int = Field(ge=0)
    run_id: str
    session_id: str | None = None
    namespace: str | None = None
    parent_run_id: str | None = None
    origin: str | None = None
    ts: _UtcDatetime
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
        if cls is Event and _record_directly():
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


_payload_adapter: TypeAdapter[Payload] = TypeAdapter(Payload)


def parse_payload(data: dict[str, Any] | str | bytes) -> Payload:
    """Parse a payload on its own (without an envelope), e.g. from an engine plugin's wire."""
    try:
        if isinstance(data, str | bytes):
            return _payload_adapter.validate_json(data)
        return _payload_adapter.validate_python(data)
    except ValidationError as exc:
        raise _schema_error(exc, prefix=("payload",)) from None


def payload_type(kind: str) -> type[_Payload] | None:
    """The payload class for ``kind``, or ``None`` for a kind this release does not know."""
    return _BY_KIND.get(kind)


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
            if loc[1] in _BY_KIND:
                kind = kind or loc[1]
            loc = ("payload", *loc[2:])
        field = ".".join(str(p) for p in loc) or _ERROR_FIELDS.get(err["type"])
        msg = err.get("msg", "invalid").removeprefix("Value error, ")
        first_field = first_field or field
        described.append(f"{field}: {msg}" if field else msg)
    what = f"malformed {kind} event" if kind else "malformed event"
    return EventSchemaError(f"{what}: " + "; ".join(described), kind=kind, field=first_field)


# --------------------------------------------------------------------------- stored events
# Reading a run back parses every event a store wrote, so that path is dominated by validation.
# The rows a store hands back were written by `Event.to_json` and nearly always have exactly
# its shape: every field present in declaration order, plain JSON types, UTC times with ``Z``.
# For such a row a type check per field establishes everything validation would, and building
# the models directly skips pydantic's discriminator, model validators and per-field Python
# validators, which cost most of a validated parse. Any other row -- an unknown kind, another
# schema version, a field missing, unknown or of another type, a content block, a model with
# validators of its own -- goes through `Event.from_json`, so the result (and every error) is
# exactly what full validation gives. `_fast_read_matches` proves that equivalence once per
# process and turns the shortcut off if a pydantic release ever breaks it. `Event.record` takes
# the same shortcut for a store's own writes (`_recorded`).


class _NotPlain(Exception):
    """A row (or value) that needs full validation; caught inside this section, never raised."""


_Convert = Callable[[Any], Any]
_TS_SHAPE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?Z")
"""How `Event.to_json` writes a time (UTC, ``Z``); any other spelling takes the validated path."""
_OPEN_VOCABULARIES: tuple[tuple[Any, type[StrEnum]], ...] = (
    (_OpenErrorCode, ErrorCode),
    (_OpenControlVerb, ControlVerb),
    (_OpenSafePoint, SafePoint),
    (_OpenInterruptReason, InterruptReason),
    (_OpenAnswerOrigin, AnswerOrigin),
    (_OpenReportLevel, ReportLevel),
    (_OpenWaitKind, WaitKind),
)
_NONE = type(None)
_JSON_TYPES: frozenset[type] = frozenset({dict, list, str, int, float, bool, _NONE})
"""The Python types a JSON value parses to."""
_MAX_SHAPES = 4096
"""A model whose fields admit more combinations of JSON types than this is left to validation
(its shapes are enumerated up front, so that one set lookup checks every field's type)."""
_new = object.__new__
_set = object.__setattr__


@dataclass(frozen=True)
class _FieldRead:
    """How a field of a stored row is read: the JSON types it may arrive as, and what turns the
    value into the model's (``None`` when the parsed value is the field's value as it is)."""

    types: frozenset[type]
    convert: _Convert | None = None


def _build(cls: type[BaseModel], values: dict[str, Any], fields_set: set[str]) -> Any:
    """An instance of ``cls`` holding ``values``, as pydantic's validator would have built it.

    Every instance of a class built here shares one ``fields_set`` (every field was given): a
    fields set is only ever changed by assigning to a field, which a frozen model refuses, and
    ``model_copy`` copies it first. One shared set rather than one per event is about half the
    memory a read-back event takes.
    """
    model = _new(cls)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", fields_set)
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


def _in_order(names: tuple[str, ...]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A function giving a dict of exactly ``names`` with its keys in that (declaration) order.

    The model's ``__dict__`` order is what its ``repr`` and iteration show. A row as
    `Event.to_json` wrote it is already in order; PostgreSQL's JSONB keeps keys in an order of
    its own, so those dicts are rebuilt. :class:`_NotPlain` (or :class:`KeyError`) if a field
    is missing or unknown.
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
    return datetime.fromisoformat(value)  # "Z" reads as datetime.UTC, as `_to_utc` leaves it


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


def _field_read(annotation: Any) -> _FieldRead | None:
    """How to read a field of this annotation, or ``None`` when only validation can."""
    if annotation == _JsonData:
        return _FieldRead(_JSON_TYPES)  # JSON text's values are JSON data already
    if annotation == _UtcDatetime:
        return _FieldRead(frozenset({str}), _utc)
    for vocabulary, enum in _OPEN_VOCABULARIES:
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
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        read = _model_reader(annotation)
        return _FieldRead(frozenset({dict}), read) if read is not None else None
    return None


def _model_reader(cls: type[BaseModel], kind: str | None = None) -> _Convert | None:
    """A reader building ``cls`` from a dict of exactly its fields, in order, of plain types.

    ``None`` for a model with validators, aliases, private state or another ``extra`` policy:
    building one of those directly might skip what they do (and a model that is not frozen
    could change its shared fields set). The types of all fields are checked at once against
    the combinations the fields accept, the parsed dict itself becomes the model's ``__dict__``,
    and only fields that change type (times, enums, nested models) are converted.
    """
    decorators = cls.__pydantic_decorators__
    if (
        decorators.validators
        or decorators.field_validators
        or decorators.root_validators
        or decorators.model_validators
        or cls.__private_attributes__
        or cls.model_config.get("extra") not in (None, "ignore")
        or not cls.model_config.get("frozen")
    ):
        return None
    names = tuple(cls.model_fields)
    allowed: list[frozenset[type]] = []
    converted: list[tuple[str, _Convert]] = []
    for name, info in cls.model_fields.items():
        if info.alias is not None or info.validation_alias is not None:
            return None
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
    fields_set = set(names)

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
        return _build(cls, value, fields_set)

    return read


_ENVELOPE_FIELDS = tuple(Event.model_fields)
_VERSION_FIELDS = tuple(SchemaVersion.model_fields)


@functools.cache
def _payload_readers() -> dict[str, _Convert]:
    """The direct reader of each kind whose payloads a plain row can build (built once)."""
    return {
        kind: reader
        for kind, cls in _BY_KIND.items()
        if (reader := _model_reader(cls, kind)) is not None
    }


def _direct_reader() -> Callable[[Any], Event]:
    """Builds an event from a parsed plain row; :class:`_NotPlain` (or the ``KeyError``,
    ``ValueError`` or ``TypeError`` of a row of another shape) when it needs validating."""
    payloads = _payload_readers()
    current = SCHEMA_VERSION
    version_set = set(_VERSION_FIELDS)
    fields_set = set(_ENVELOPE_FIELDS)
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
            version = _build(SchemaVersion, {"major": major, "minor": minor}, version_set)
        values = {
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
        event: Event = _build(Event, values, fields_set)
        return event

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
        for sample in samples:
            for at in (ts, ts.replace(microsecond=0)):
                row = Event.record(
                    sample, seq=7, run_id="r", ts=at, session_id="s", origin="o"
                ).to_json()
                fast, slow = direct(from_json(row)), Event.from_json(row)
                if not (
                    fast == slow
                    and repr(fast) == repr(slow)
                    and fast.to_json() == slow.to_json() == row
                    and fast.model_fields_set == slow.model_fields_set
                    and fast.payload.model_fields_set == slow.payload.model_fields_set
                    and fast.ts.tzinfo is slow.ts.tzinfo
                    and _hash_or_none(fast) == _hash_or_none(slow)
                ):
                    return False
    except Exception:
        return False
    return True


def _hash_or_none(event: Event) -> int | None:
    try:
        return hash(event)
    except TypeError:  # a payload holding a list or dict cannot be hashed, built either way
        return None


_RECORDABLE: frozenset[type] = frozenset(_BY_KIND.values())
_RECORDED_FIELDS = {name for name in Event.model_fields if name != "v"}
"""What `Event.record` sets (all but the defaulted version); shared, as `_build` explains."""


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
    values = {
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
    event: Event = _build(Event, values, _RECORDED_FIELDS)
    return event


@functools.cache
def _record_directly() -> bool:
    """Whether directly recorded events equal validated ones in every observable way (checked
    once; a pydantic release that changed its internals turns the shortcut off)."""
    ts = datetime(2026, 1, 2, 3, 4, 5, 60_000, tzinfo=UTC)
    envelopes: list[tuple[str | None, ...]] = [(None, None, None, None), ("s", "n", "p", "o")]
    try:
        for payload in (
            TextDelta(message_id="m", text="t"),
            RunFailed(error_code="x", message="m"),
        ):
            for session_id, namespace, parent_run_id, origin in envelopes:
                slow = Event(
                    kind=payload.kind,
                    seq=3,
                    run_id="r",
                    session_id=session_id,
                    namespace=namespace,
                    parent_run_id=parent_run_id,
                    origin=origin,
                    ts=ts,
                    payload=payload,
                )
                fast = _recorded(payload, 3, "r", ts, session_id, namespace, parent_run_id, origin)
                if not (
                    fast is not None
                    and fast == slow
                    and repr(fast) == repr(slow)
                    and fast.to_json() == slow.to_json()
                    and fast.model_fields_set == slow.model_fields_set
                    and _hash_or_none(fast) == _hash_or_none(slow)
                ):
                    return False
    except Exception:
        return False
    return True


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


class _CollectorPause:
    """Holds the cyclic garbage collector off while a large batch of stored events is built.

    Building thousands of events allocates tens of thousands of tracked objects, and each
    allocation threshold crossed runs a collection that walks them again: that roughly doubled
    the cost of reading a long run back. The events hold no reference cycles, so nothing is
    left uncollected; the collector resumes (if it was running) when the last batch in any
    thread is done, and runs then as the allocation counts say.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._resume = False

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


_PAUSE_COLLECTOR = _CollectorPause()
_PAUSE_FROM = 256
"""Batches of at least this many rows are built with the collector paused."""


def stored_events(rows: Sequence[str | bytes]) -> list[Event]:
    """:func:`stored_event` over rows, in order (a run's log read back)."""
    read = _reader()
    if len(rows) < _PAUSE_FROM:
        return [read(row) for row in rows]
    with _PAUSE_COLLECTOR:
        return [read(row) for row in rows]


# --------------------------------------------------------------------------- stored payloads
# A store that keeps the envelope's fields itself (the memory store packs a finished run's log
# this way, see `agentdeck.memory.packed`) writes only the payload. Serializing a payload with its
# own class's serializer costs a fifth of serializing the envelope around it, whose payload field
# is a 25-way union; reading one back takes the direct readers the stored events use.


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
    :func:`parse_payload` gives, built directly when the row is plain (see :func:`stored_event`).
    """
    return _payload_reader()(data)


def collector_paused(count: int) -> AbstractContextManager[None]:
    """A context holding the cyclic collector off while ``count`` events are built, when that
    is many (the reason is :class:`_CollectorPause`'s); a no-op for a few."""
    return _PAUSE_COLLECTOR if count >= _PAUSE_FROM else contextlib.nullcontext()
