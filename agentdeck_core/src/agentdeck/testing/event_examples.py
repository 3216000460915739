"""One representative, fully filled payload per event kind, for tests that must cover them all.

The core's event, schema, fold and packing tests use these, and so can a store's: writing and
reading back one of each kind is the quickest way to find a field a store's encoding loses.

Every field of every example is set to a non-default, non-null value, nested models and enums
included, so a round trip exercises all of it; ``test_events`` fails when a payload type gains a
field (or a kind) that is not filled in here.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta, timezone
from enum import StrEnum
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from hypothesis import strategies as st
from pydantic import BaseModel

from agentdeck.model.content import (
    AudioBlock,
    ContentBlock,
    DataBlock,
    ImageBlock,
    ResourceBlock,
    TextBlock,
    UnknownBlock,
    _JsonData,
)
from agentdeck.model.events import Event
from agentdeck.model.field_types import OPEN_VOCABULARIES, UtcDatetime
from agentdeck.model.payloads import (
    AgentChanged,
    AnswerRecorded,
    AnswerRefused,
    AnswerShape,
    ApprovalDecided,
    ArtifactCreated,
    Budget,
    ControlObserved,
    ControlRequested,
    Custom,
    ForkOrigin,
    InputAppended,
    MessageCompleted,
    NodeUpdated,
    PlanItem,
    PlanUpdated,
    Report,
    RunCancelled,
    RunClaimed,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunPaused,
    RunQueued,
    RunResumed,
    RunStarted,
    StepCompleted,
    TextDelta,
    ThoughtDelta,
    ToolCallCompleted,
    ToolCallStarted,
    Usage,
    UsageReported,
)
from agentdeck.vocabulary import (
    AnswerOrigin,
    ControlVerb,
    ErrorCode,
    InterruptReason,
    ReportLevel,
    SafePoint,
    WaitKind,
)

TS = datetime(2025, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)
"""A store clock reading with microseconds, so sub-second precision is part of every round trip."""

JSON_DATA: dict[str, Any] = {
    "text": 'naïve ☃ \U0001f600 "quoted" \\ back\nslash',
    "int": -(2**53),
    "float": 0.1,
    "bool": True,
    "null": None,
    "list": [1, 2.5, "three", None, False, {"nested": []}],
    "empty": {},
}
"""Arbitrary JSON, with the characters and values a serializer most often gets wrong."""

USAGE = Usage(requests=2, input_tokens=1200, output_tokens=345, total_tokens=1545, usd=0.0123)

UNKNOWN_BLOCK = UnknownBlock.model_validate(
    {"type": "video", "uri": "s3://bucket/clip.mp4", "frames": 240, "meta": {"fps": 24.0}}
)

BLOCKS: list[ContentBlock] = [
    TextBlock(text="What is the total on this receipt? ✓"),
    ImageBlock(media_type="image/png", data_b64=base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()),
    AudioBlock(media_type="audio/ogg", data_b64=base64.b64encode(b"OggS\x00\x02").decode()),
    ResourceBlock(uri="s3://bucket/receipt.pdf", media_type="application/pdf", size=52_113),
    DataBlock(data=JSON_DATA),
    UNKNOWN_BLOCK,
]
"""Every block type, the unknown one included."""

PAYLOAD_EXAMPLES: dict[type[Any], Any] = {
    RunStarted: RunStarted(
        name="Greeter",
        invocable_kind="agent",
        input=BLOCKS,
        key="order-1234",
        code_digest="sha256:5f1e",
        deadline=TS + timedelta(minutes=5),
        trace_context={"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
        forked_from=ForkOrigin(run_id="run-7f3a", at=2),
        retry_of="run-6c1d",
        budget=Budget(max_total_tokens=20_000, max_output_tokens=4_000, max_requests=8),
    ),
    RunCompleted: RunCompleted(output=BLOCKS, usage=USAGE, agent="triage"),
    RunFailed: RunFailed(
        error_code=ErrorCode.TOOL_ERROR,
        message="tool 'lookup' raised KeyError",
        retryable=True,
        where="lookup",
    ),
    RunCancelled: RunCancelled(reason="user closed the tab"),
    RunPaused: RunPaused(
        reason="waiting for child run run-0002",
        wake_at=TS + timedelta(hours=1),
        waiting_on=WaitKind.CHILD_RUNS,
        waiting_for=["run-0002"],
    ),
    RunResumed: RunResumed(reason="answered", interrupt_id="int-1"),
    RunQueued: RunQueued(execution="temporal"),
    RunClaimed: RunClaimed(worker="worker-2:4711:9f3ab2c1"),
    RunInterrupted: RunInterrupted(
        interrupt_id="int-1",
        reason=InterruptReason.APPROVAL,
        payload={"question": "Refund order A-1003?", "amount": 12.5},
        expected=AnswerShape(json_schema={"type": "boolean"}, options=[True, False]),
    ),
    AnswerRecorded: AnswerRecorded(
        interrupt_id="int-1", value={"approved": True}, origin=AnswerOrigin.POLICY
    ),
    AnswerRefused: AnswerRefused(interrupt_id="int-1", reason="expected one of: yes, no"),
    ApprovalDecided: ApprovalDecided(
        call_id="call-7",
        tool="delete_file",
        approved=False,
        origin=AnswerOrigin.HUMAN,
        interrupt_id="int-2",
        message="user said no",
    ),
    ControlRequested: ControlRequested(verb=ControlVerb.PAUSE, reason="operator stepped away"),
    ControlObserved: ControlObserved(verb=ControlVerb.CANCEL, safe_point=SafePoint.TOOL_DISPATCH),
    TextDelta: TextDelta(message_id="msg-1", text="Hel"),
    ThoughtDelta: ThoughtDelta(message_id="msg-1", text="the user wants…"),
    MessageCompleted: MessageCompleted(message_id="msg-1", text="Hello!", agent="Greeter"),
    AgentChanged: AgentChanged(previous="Triage", next="Billing"),
    ToolCallStarted: ToolCallStarted(
        call_id="call-7", tool="get_weather", args='{"city": "Par', args_error="unterminated"
    ),
    ToolCallCompleted: ToolCallCompleted(
        call_id="call-7",
        tool="get_weather",
        result_preview='{"temp": 21',
        result_size=4096,
        result_sha256="9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        error="result was truncated",
    ),
    UsageReported: UsageReported(model="gpt-5-mini", usage=USAGE),
    Report: Report(level=ReportLevel.RECORD, message="indexed 3 files", fields=JSON_DATA),
    ArtifactCreated: ArtifactCreated(
        artifact_id="art-1", media_type="image/png", uri="s3://bucket/a.png", size=2048
    ),
    InputAppended: InputAppended(input=BLOCKS, source="http"),
    StepCompleted: StepCompleted(index=3, name="charge_card", result={"charge_id": "ch_1"}),
    NodeUpdated: NodeUpdated(node="review", update={"approved": True}, step=4),
    PlanUpdated: PlanUpdated(
        items=[PlanItem(title="read the file", status="done"), PlanItem(title="summarize")]
    ),
    Custom: Custom(name="acme.invoice_seen", data=JSON_DATA),
}


def record(payload: Any, seq: int = 3, **envelope: Any) -> Event:
    """Wrap ``payload`` the way a store does, with every envelope field filled."""
    fields: dict[str, Any] = {
        "run_id": "run-7f3a",
        "ts": TS,
        "session_id": "wa-1",
        "namespace": "acme",
        "parent_run_id": "run-0001",
        "origin": "Greeter",
    }
    fields.update(envelope)
    return Event.record(payload, seq=seq, **fields)


EXAMPLE_EVENTS: list[Event] = [
    record(payload, seq=seq) for seq, payload in enumerate(PAYLOAD_EXAMPLES.values())
]
"""One recorded event per known kind."""

UNKNOWN_EVENT_JSON = (
    '{"v":{"major":1,"minor":4},"kind":"workflow.branch_taken","seq":9,"run_id":"run-7f3a",'
    '"session_id":null,"namespace":"acme","parent_run_id":null,"origin":"Refunds",'
    '"ts":"2025-03-04T05:06:07.891011Z","payload":{"kind":"workflow.branch_taken",'
    '"branch":"refund","weights":[0.25,0.75],"detail":{"why":"amount ≤ 50","null":null},'
    '"blocks":[{"type":"hologram","depth":3}]}}'
)
"""An event of a kind (and minor) newer than this release, as a newer writer would produce it."""

# --------------------------------------------------------------------------- Hypothesis strategies

_json_scalars = (  # JSON has no NaN or infinity; integers up to what JSON readers commonly keep
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
JSON_VALUES = st.recursive(
    _json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=20,
)
"""Any JSON value, nested."""
_word = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
_namespaced_names = st.lists(_word, min_size=2, max_size=4).map(".".join)
_report_levels = st.sampled_from(list(ReportLevel)) | st.text()
PAYLOAD_STRATEGY: st.SearchStrategy[TextDelta | Report | Custom] = st.one_of(
    st.builds(TextDelta, message_id=st.text(), text=st.text()),
    st.builds(
        Report,
        level=_report_levels,
        message=st.text(),
        fields=st.dictionaries(st.text(), JSON_VALUES, max_size=5),
    ),
    st.builds(Custom, name=_namespaced_names, data=JSON_VALUES),
)
"""Random text deltas, reports and custom events: arbitrary unicode and JSON data."""
ENVELOPE_STRATEGY = st.fixed_dictionaries(
    {
        "seq": st.integers(min_value=0, max_value=2**40),
        "run_id": st.text(min_size=1),
        "ts": st.datetimes(
            min_value=datetime(1970, 1, 1),
            timezones=st.sampled_from([UTC, timezone(timedelta(hours=-7))]),
        ),
        "session_id": st.none() | st.text(),
        "namespace": st.none() | st.text(),
        "parent_run_id": st.none() | st.text(),
        "origin": st.none() | st.text(),
    }
)
"""Random envelope fields for :meth:`Event.record`, any zone (the event keeps UTC)."""

_ANY_ZONE = st.sampled_from([UTC, timezone(timedelta(hours=-7)), timezone(timedelta(hours=5.5))])
_FIELD_OVERRIDES: dict[tuple[type[Any], str], st.SearchStrategy[Any]] = {
    (Custom, "name"): _namespaced_names,  # its validator wants a dotted name
}


def _field_values(annotation: Any) -> st.SearchStrategy[Any]:
    """Values a field of ``annotation`` accepts, in the forms a caller might pass them."""
    if annotation == _JsonData:
        return JSON_VALUES
    if annotation == UtcDatetime:
        return st.datetimes(  # a day inside the range on either side, whatever the zone
            min_value=datetime(1970, 1, 2), max_value=datetime(9000, 1, 1), timezones=_ANY_ZONE
        )
    for vocabulary, enum in OPEN_VOCABULARIES:
        if annotation == vocabulary:
            return st.sampled_from(list(enum)) | st.sampled_from([m.value for m in enum]) | _word
    if annotation == ContentBlock:
        return st.sampled_from(BLOCKS)
    if annotation is str:
        return st.text(max_size=12)
    if annotation is bool:
        return st.booleans()
    if annotation is int:
        return st.integers(min_value=-(2**63), max_value=2**64 - 1)
    if annotation is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, UnionType):
        return st.one_of([_field_values(arg) for arg in args])
    if annotation is type(None):
        return st.none()
    if origin is list:
        return st.lists(_field_values(args[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(max_size=8), _field_values(args[1]), max_size=3)
    if isinstance(annotation, type) and issubclass(annotation, StrEnum):
        return st.sampled_from(list(annotation)) | _word
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return payloads_of(annotation)
    raise TypeError(f"no strategy for a field of type {annotation!r}")  # pragma: no cover


def payloads_of(cls: type[Any]) -> st.SearchStrategy[Any]:
    """Random, valid models of ``cls`` (a payload type, or a model a payload nests): each field
    that has a default is either left to it or drawn, every other field drawn, in any form its
    type accepts (an enum member or its string, a time in any zone, JSON data of any shape)."""
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for name, info in cls.model_fields.items():
        if name == "kind":
            continue
        annotation = (
            Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
        )
        override = _FIELD_OVERRIDES.get((cls, name))
        values = override if override is not None else _field_values(annotation)
        (required if info.is_required() else optional)[name] = values
    return st.fixed_dictionaries(required, optional=optional).map(lambda kw: cls(**kw))
