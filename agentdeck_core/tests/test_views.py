"""``agentdeck.observing.views``: one predicate per concern, composable with ``|``, ``&`` and
``~``."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentdeck import views
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    AgentChanged,
    AnswerRecorded,
    AnswerRefused,
    ApprovalDecided,
    ArtifactCreated,
    ControlObserved,
    ControlRequested,
    Custom,
    MessageCompleted,
    PlanItem,
    PlanUpdated,
    Report,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunPaused,
    RunResumed,
    RunStarted,
    StepCompleted,
    TextDelta,
    ThoughtDelta,
    ToolCallCompleted,
    ToolCallStarted,
    UnknownEvent,
    Usage,
    UsageReported,
)
from agentdeck.model.payloads import _Payload as AnyPayload
from agentdeck.vocabulary import ErrorCode, ReportLevel

NOW = datetime(2030, 1, 1, tzinfo=UTC)


def event(payload: AnyPayload) -> Event:
    return Event.record(payload, seq=1, run_id="r-1", ts=NOW)


STARTED = event(RunStarted(name="booking", invocable_kind="agent"))
COMPLETED = event(RunCompleted(usage=Usage(total_tokens=5)))
FAILED = event(RunFailed(error_code=ErrorCode.TOOL_ERROR, message="boom"))
PAUSED = event(RunPaused())
RESUMED = event(RunResumed())
INTERRUPTED = event(RunInterrupted(interrupt_id="i-1"))
ANSWERED = event(AnswerRecorded(interrupt_id="i-1", value="yes"))
REFUSED = event(AnswerRefused(interrupt_id="i-1", reason="not an option"))
CONTROL = event(ControlRequested(verb="pause"))
OBSERVED = event(ControlObserved(verb="pause", safe_point="stream_item"))
DELTA = event(TextDelta(message_id="m", text="he"))
THOUGHT = event(ThoughtDelta(message_id="m", text="hm"))
MESSAGE = event(MessageCompleted(message_id="m", text="hello"))
HANDOFF = event(AgentChanged(previous="a", next="b"))
TOOL_STARTED = event(ToolCallStarted(call_id="c", tool="t"))
TOOL_DONE = event(ToolCallCompleted(call_id="c", tool="t"))
TOOL_RAISED = event(ToolCallCompleted(call_id="c", tool="t", error="ValueError"))
APPROVAL = event(ApprovalDecided(call_id="c", tool="t", approved=True, origin="policy"))
USAGE = event(UsageReported(usage=Usage(input_tokens=3)))
REPORT = event(Report(message="working"))
ERROR_REPORT = event(Report(message="lost a page", level=ReportLevel.ERROR))
CUSTOM = event(Custom(name="app.thing", data=1))
PLAN = event(PlanUpdated(items=[PlanItem(title="step")]))
ARTIFACT = event(ArtifactCreated(artifact_id="a", media_type="text/plain"))
STEP = event(StepCompleted(index=0, name="s"))
NEWER_LIFECYCLE = event(UnknownEvent(kind="run.rewound"))
NEWER_OTHER = event(UnknownEvent(kind="app.future"))

EVERY = [
    STARTED, COMPLETED, FAILED, PAUSED, RESUMED, INTERRUPTED, ANSWERED, REFUSED, CONTROL,
    OBSERVED, DELTA, THOUGHT, MESSAGE, HANDOFF, TOOL_STARTED, TOOL_DONE, TOOL_RAISED, APPROVAL,
    USAGE, REPORT, ERROR_REPORT, CUSTOM, PLAN, ARTIFACT, STEP, NEWER_LIFECYCLE, NEWER_OTHER,
]  # fmt: skip

LIFECYCLE = [STARTED, COMPLETED, FAILED, PAUSED, RESUMED, INTERRUPTED, ANSWERED, REFUSED]
LIFECYCLE += [CONTROL, OBSERVED, NEWER_LIFECYCLE]

EXPECTED = {
    "chat": [DELTA, THOUGHT, MESSAGE, HANDOFF],
    "tools": [TOOL_STARTED, TOOL_DONE, TOOL_RAISED, APPROVAL],
    "reports": [REPORT, ERROR_REPORT, CUSTOM, PLAN],
    "lifecycle": LIFECYCLE,
    "errors": [FAILED, REFUSED, TOOL_RAISED, ERROR_REPORT],
    "usage": [COMPLETED, USAGE],
    "all": EVERY,
}


@pytest.mark.parametrize("name", EXPECTED)
def test_each_view_selects_its_concern(name: str) -> None:
    view = getattr(views, name)
    assert [e for e in EVERY if view(e)] == EXPECTED[name]


def test_or_is_either() -> None:
    view = views.chat | views.reports
    assert [e for e in EVERY if view(e)] == [
        e for e in EVERY if e in EXPECTED["chat"] or e in EXPECTED["reports"]
    ]


def test_and_is_both() -> None:
    view = views.tools & views.errors
    assert [e for e in EVERY if view(e)] == [TOOL_RAISED]


def test_not_is_the_rest() -> None:
    view = ~views.chat
    assert [e for e in EVERY if view(e)] == [e for e in EVERY if e not in EXPECTED["chat"]]


def test_compositions_nest() -> None:
    view = (views.lifecycle | views.tools) & ~views.errors
    assert FAILED not in [e for e in EVERY if view(e)]
    assert STARTED in [e for e in EVERY if view(e)]
    assert TOOL_DONE in [e for e in EVERY if view(e)]


def test_a_plain_function_composes_on_either_side() -> None:
    def from_run_1(e: Event) -> bool:
        return e.run_id == "r-1"

    assert (views.chat & from_run_1)(MESSAGE)
    assert (from_run_1 & views.chat)(MESSAGE)
    assert not (from_run_1 & views.chat)(STARTED)
    assert (from_run_1 | views.chat)(STARTED)


def test_composing_with_something_that_is_not_a_predicate_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="function taking an Event"):
        _ = views.chat | 3  # type: ignore[operator]


def test_a_view_says_what_it_is() -> None:
    assert repr(views.chat | views.reports) == "<View views.chat | views.reports>"
    assert repr(~views.chat & views.all) == "<View ~views.chat & views.all>"
