"""The payloads of the event schema: one model per kind, and the union that tells them apart.

What happened in a run is an event's ``payload`` (the envelope around it is
:class:`agentdeck.model.events.Event`, where the compatibility rules every reader relies on are
written down). Each kind has one frozen model here, which repeats its ``kind`` inside; unknown
fields are ignored, and vocabulary fields (``error_code``, ``verb``, ``safe_point``, ``reason``,
``origin``, ``level``) accept values this release does not know as plain strings. A kind this
release does not know parses as :class:`UnknownEvent`, kept whole. :data:`Payload` is the union
the envelope's ``payload`` field validates, discriminated on ``kind``; :data:`PAYLOAD_TYPES`
lists every known kind's model, and :func:`payload_type` finds one by kind.

A kind may be *reserved*: defined, readable and recorded like any other, but produced by no
component of this release yet (its docstring says so and why).

The module is one file of about 600 lines on purpose: it *is* the schema, read side by side with
the events reference, and the discriminated union must name every kind; split across files, a
reader would have to assemble the schema again to check one kind against its neighbours.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_serializer,
)

from agentdeck.model.content import ContentBlock, _JsonData
from agentdeck.model.field_types import CUSTOM_NAME_JSON_PATTERN as _CUSTOM_NAME_JSON_PATTERN
from agentdeck.model.field_types import KIND_JSON_PATTERN as _KIND_JSON_PATTERN
from agentdeck.model.field_types import KIND_PATTERN
from agentdeck.model.field_types import OpenAnswerOrigin as _OpenAnswerOrigin
from agentdeck.model.field_types import OpenControlVerb as _OpenControlVerb
from agentdeck.model.field_types import OpenErrorCode as _OpenErrorCode
from agentdeck.model.field_types import OpenInterruptReason as _OpenInterruptReason
from agentdeck.model.field_types import OpenReportLevel as _OpenReportLevel
from agentdeck.model.field_types import OpenSafePoint as _OpenSafePoint
from agentdeck.model.field_types import OpenWaitKind as _OpenWaitKind
from agentdeck.model.field_types import UtcDatetime as _UtcDatetime
from agentdeck.vocabulary import AnswerOrigin, InterruptReason, ReportLevel

# The field types keep, in the payload bodies, the names they had when the bodies lived in
# agentdeck.model.events (their home is agentdeck.model.field_types).

__all__ = [
    "PAYLOAD_TYPES",
    "AgentChanged",
    "AnswerRecorded",
    "AnswerRefused",
    "AnswerShape",
    "ApprovalDecided",
    "ArtifactCreated",
    "Budget",
    "ControlObserved",
    "ControlRequested",
    "Custom",
    "ForkOrigin",
    "InputAppended",
    "MessageCompleted",
    "NodeUpdated",
    "Payload",
    "PlanItem",
    "PlanUpdated",
    "Report",
    "RunCancelled",
    "RunClaimed",
    "RunCompleted",
    "RunFailed",
    "RunInterrupted",
    "RunPaused",
    "RunQueued",
    "RunResumed",
    "RunStarted",
    "StepCompleted",
    "TextDelta",
    "ThoughtDelta",
    "ToolCallCompleted",
    "ToolCallStarted",
    "UnknownEvent",
    "Usage",
    "UsageReported",
    "payload_type",
]

# --------------------------------------------------------------------------- payload base


def _require_kind(schema: dict[str, Any]) -> None:
    # ``kind`` has a default in Python but is always written and is what tells payloads apart:
    # required in the JSON Schema, so a non-Python reader's ``oneOf`` matches exactly one payload.
    required = schema.setdefault("required", [])
    if "kind" not in required:
        required.insert(0, "kind")


class _Payload(BaseModel):
    """Base of every payload: frozen, unknown fields ignored, ``kind`` repeated inside."""

    # Built on first use, not at import (as every model of the schema): the commands that only
    # read a store import the payloads through the ports, and never validate one.
    model_config = ConfigDict(
        frozen=True, extra="ignore", json_schema_extra=_require_kind, defer_build=True
    )

    KIND: ClassVar[str] = ""
    RESERVED: ClassVar[bool] = False
    """A kind defined and read like any other but produced by nothing in this release yet (its
    docstring says why it is kept); an engine that yields one is recorded like any content."""
    kind: str


class Usage(BaseModel):
    """Token usage. On ``run.completed`` it is the run's authoritative total.

    ``usd`` is never filled by AgentDeck (a price depends on a contract, not on the call); it is
    deprecated and kept only so callers that supply their own cost have a field for it.
    """

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

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


class Budget(BaseModel):
    """Caps on one run's model usage, summed from its ``usage.reported`` events.

    A run that goes over any cap ends ``run.failed(budget_exceeded)`` at the event that crossed
    it. ``None`` means no cap on that measure. Recorded in the run's ``run.started``, so the
    process that plays or continues the run -- a worker taking it from a queue, this process
    after a restart -- enforces the same caps on the run's whole usage, not a fresh allowance
    per play.
    """

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    max_total_tokens: int | None = None
    max_output_tokens: int | None = None
    max_requests: int | None = None

    def exceeded_by(self, usage: Usage) -> str | None:
        """The measure ``usage`` went over, or ``None``."""
        for measure, cap, used in (
            ("total tokens", self.max_total_tokens, usage.total_tokens),
            ("output tokens", self.max_output_tokens, usage.output_tokens),
            ("model requests", self.max_requests, usage.requests),
        ):
            if cap is not None and used > cap:
                return f"{measure}: {used} used, budget {cap}"
        return None


class AnswerShape(BaseModel):
    """What an interrupt will accept as its answer: a JSON Schema, a list of options, or both."""

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    json_schema: dict[str, _JsonData] | None = None
    options: list[_JsonData] | None = None


class ForkOrigin(BaseModel):
    """Where a forked run came from: the run it was forked from and the point it left it at.

    ``at`` is the engine's own point: the operation ordinal from which a native ``@workflow``
    executes again (the journal before it is reused), the LangGraph step whose checkpoint the
    graph goes on from.
    """

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    run_id: str
    at: int


class PlanItem(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    title: str
    status: str = "pending"


# --------------------------------------------------------------------------- lifecycle


class RunStarted(_Payload):
    """The run exists. Always seq 0; written by the runtime through the store's conditional open.

    ``name`` is the invocable the caller addressed; ``invocable_kind`` what it is (``agent``,
    ``workflow``, ...). ``code_digest`` pins the code a durable workflow started with, so a replay
    against changed code can be refused. ``deadline`` is recorded so whichever process continues
    the run enforces the same one. ``trace_context`` is the W3C trace context (``traceparent``,
    ``tracestate``) the run was started under, so every process rendering its trace parents it
    under the caller's span. ``forked_from`` links a run forked from another at a recorded point
    (:class:`ForkOrigin`), ``retry_of`` a run that retries a failed or cancelled one: the new
    run's log says where it came from, so it is read and continued from its own log alone.
    ``budget`` is the caller's :class:`Budget`, recorded for the same reason as ``deadline``.
    """

    KIND: ClassVar[str] = "run.started"
    kind: Literal["run.started"] = "run.started"
    name: str
    invocable_kind: str
    input: list[ContentBlock] = Field(default_factory=list)
    key: str | None = None
    code_digest: str | None = None
    deadline: _UtcDatetime | None = None
    trace_context: dict[str, str] | None = None
    forked_from: ForkOrigin | None = None
    retry_of: str | None = None
    budget: Budget | None = None


class RunCompleted(_Payload):
    """Terminal. ``output`` is the whole user-facing result: artifacts first, final text last.
    ``agent`` names the agent that gave the final answer (after handoffs); ``None`` for a
    workflow."""

    KIND: ClassVar[str] = "run.completed"
    kind: Literal["run.completed"] = "run.completed"
    output: list[ContentBlock] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    agent: str | None = None


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


class RunQueued(_Payload):
    """The run was admitted to an execution that queues runs for workers (Temporal's, for
    instance) and waits there, ``queued``, until one claims it. Written right after
    ``run.started``; what the execution was told is the run's id, never its content.
    """

    KIND: ClassVar[str] = "run.queued"
    kind: Literal["run.queued"] = "run.queued"
    execution: str
    """The scheme of the execution it was admitted to (``temporal``)."""


class RunClaimed(_Payload):
    """A worker took the queued run and plays it from here. A conditional append: of several
    workers handed one run, exactly one claims it."""

    KIND: ClassVar[str] = "run.claimed"
    kind: Literal["run.claimed"] = "run.claimed"
    worker: str
    """Who plays it (``host:pid:tag`` of the worker's runtime)."""


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
    origin: _OpenAnswerOrigin
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
    """A file or blob the run produced for the user, recorded when the run produces it.

    It comes before ``run.completed``, whose ``output`` carries the artifacts first, in the
    order they were made. ``artifact_id`` is unique in the run; ``uri`` says where bytes held
    elsewhere are, and is ``None`` when the artifact travels inline in the output; ``size`` is in
    bytes, when known. The OpenAI engine records one per image a tool (or a subagent) returns,
    just before that call's ``tool.call.completed``, as ``<call id>/<index>``.
    """

    KIND: ClassVar[str] = "artifact.created"
    kind: Literal["artifact.created"] = "artifact.created"
    artifact_id: str
    media_type: str
    uri: str | None = None
    size: int | None = None


class InputAppended(_Payload):
    """Reserved: more input added to a live run, and where it came from.

    Nothing in this release produces it: a run's input is its ``run.started.input``, and no
    surface adds input to a run in flight yet. The kind is kept, as the reference schema has it,
    so that feature can arrive in a minor without a new word, and so a log that holds one (from
    a newer writer, or an engine that yields it) reads, records and folds it like any other
    content event: it never moves a run's status.
    """

    KIND: ClassVar[str] = "input.appended"
    RESERVED: ClassVar[bool] = True
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
        return dict(self.model_extra or {})

    @model_serializer(mode="wrap")
    def _keep_everything(self, handler: Any) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        out.update(self.model_extra or {})
        return out


PAYLOAD_TYPES: tuple[type[_Payload], ...] = (
    RunStarted,
    RunCompleted,
    RunFailed,
    RunCancelled,
    RunPaused,
    RunResumed,
    RunQueued,
    RunClaimed,
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
    | Annotated[RunQueued, Tag("run.queued")]
    | Annotated[RunClaimed, Tag("run.claimed")]
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


def payload_type(kind: str) -> type[_Payload] | None:
    """The payload class for ``kind``, or ``None`` for a kind this release does not know."""
    return _BY_KIND.get(kind)
