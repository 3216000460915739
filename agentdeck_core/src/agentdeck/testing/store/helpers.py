"""What the store kit's tests build and wait with: runs, payloads of every kind, followers.

:func:`new_run` is public (``agentdeck.testing.new_run``): an implementer's own tests open runs
with it too.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from agentdeck.model.content import DataBlock, TextBlock
from agentdeck.model.events import Event, parse_payload
from agentdeck.model.payloads import (
    AgentChanged,
    AnswerRecorded,
    AnswerRefused,
    ApprovalDecided,
    ArtifactCreated,
    ControlObserved,
    ControlRequested,
    Custom,
    InputAppended,
    MessageCompleted,
    NodeUpdated,
    Payload,
    PlanItem,
    PlanUpdated,
    Report,
    RunCancelled,
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
    Usage,
    UsageReported,
)
from agentdeck.ports import EventStore, NewRun
from agentdeck.vocabulary import ControlVerb, ErrorCode, SafePoint

__all__ = [
    "TERMINAL_PAYLOADS",
    "WAIT",
    "ReopenStore",
    "cancelled_payload",
    "collect",
    "completed_payload",
    "eventually",
    "every_kind",
    "failed_payload",
    "new_run",
    "text_delta",
]

ReopenStore = Callable[[], Awaitable[EventStore]]
"""An async factory for another opened store on the same data as the ``store`` fixture."""

WAIT = 5.0
"""Seconds a test waits for something that should happen at once (a follower's wake-up)."""


def new_run(
    *,
    name: str = "agent",
    session_id: str | None = None,
    key: str | None = None,
    namespace: str | None = None,
    parent_run_id: str | None = None,
    run_id: str | None = None,
    invocable_kind: str = "agent",
) -> NewRun:
    """A :class:`NewRun` with a fresh id, for tests."""
    return NewRun(
        run_id=run_id or f"run-{uuid.uuid4().hex}",
        started=RunStarted(
            name=name, invocable_kind=invocable_kind, input=[TextBlock(text="hi")], key=key
        ),
        session_id=session_id,
        namespace=namespace,
        parent_run_id=parent_run_id,
    )


def text_delta(n: int = 0) -> TextDelta:
    return TextDelta(message_id="m1", text=f"chunk {n}")


def completed_payload() -> RunCompleted:
    return RunCompleted(output=[TextBlock(text="done")], usage=Usage(requests=1, input_tokens=3))


def failed_payload() -> RunFailed:
    return RunFailed(error_code=ErrorCode.ENGINE_ERROR, message="the engine stopped")


def cancelled_payload() -> RunCancelled:
    return RunCancelled(reason="asked to")


TERMINAL_PAYLOADS: dict[str, Callable[[], Payload]] = {
    "run.completed": completed_payload,
    "run.failed": failed_payload,
    "run.cancelled": cancelled_payload,
}


def every_kind() -> list[Payload]:
    """One payload of every kind this release knows (plus an unknown one), richly filled."""
    return [
        TextDelta(message_id="m1", text="héllo ✓"),
        ThoughtDelta(message_id="m1", text="thinking"),
        MessageCompleted(message_id="m1", text="héllo ✓", agent="triage"),
        AgentChanged(previous="triage", next="billing"),
        ToolCallStarted(call_id="c1", tool="lookup", args={"q": [1, 2.5, None, "x"]}),
        ToolCallStarted(call_id="c2", tool="lookup", args="{not json", args_error="bad JSON"),
        ToolCallCompleted(
            call_id="c1", tool="lookup", result_preview="{}", result_size=2, result_sha256="ab"
        ),
        UsageReported(model="m", usage=Usage(requests=1, input_tokens=5, output_tokens=7)),
        Report(level="warning", message="careful", fields={"n": 1, "nested": {"a": [True]}}),
        ArtifactCreated(artifact_id="a1", media_type="text/plain", uri="file:///x", size=3),
        InputAppended(input=[TextBlock(text="more"), DataBlock(data={"k": 1})], source="user"),
        StepCompleted(index=0, name="fetch", result={"rows": [1, 2]}),
        NodeUpdated(node="n1", update={"x": 1}, step=3),
        PlanUpdated(items=[PlanItem(title="one"), PlanItem(title="two", status="done")]),
        Custom(name="app.thing", data={"any": ["json", 1, None]}),
        ApprovalDecided(call_id="c1", tool="lookup", approved=True, origin="policy"),
        ControlRequested(verb=ControlVerb.PAUSE, reason="later"),
        parse_payload({"kind": "future.kind", "anything": {"kept": [1, "two"]}}),
        RunInterrupted(interrupt_id="i1", payload={"question": "ok?"}),
        AnswerRefused(interrupt_id="i1", reason="expected yes or no"),
        AnswerRecorded(interrupt_id="i1", value={"yes": True}),
        RunResumed(interrupt_id="i1"),
        ControlObserved(verb=ControlVerb.PAUSE, safe_point=SafePoint.TOOL_DISPATCH),
        RunPaused(reason="later"),
        RunResumed(reason="go on"),
        completed_payload(),
    ]


async def collect(iterator: AsyncIterator[Event], into: list[Event]) -> None:
    async for event in iterator:
        into.append(event)


async def eventually(predicate: Callable[[], bool], what: str) -> None:
    """Yield to the loop until ``predicate`` holds (bounded by :data:`WAIT`), else fail."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while not predicate():
        if loop.time() > deadline:
            pytest.fail(f"timed out waiting until {what}")
        await asyncio.sleep(0.001)
