"""Canonical event logs of typical runs, for testing trace exporters end to end.

Each scenario is the log a real deck writes for one kind of run -- an agent turn that calls a
tool, a workflow parked on an approval and answered, a run whose tool fails, an agent that
starts a nested workflow -- built the way a store builds it (:meth:`Event.record` with gapless
``seq`` and ``ts`` from a :class:`~agentdeck.model.clock.ManualClock`). Feed ``scenario.events`` to
an observer and assert on what it exported.

``scenario.content`` lists the prompt, completion, argument and result texts the log carries:
under the ``off`` and ``metadata`` capture policies none of them may appear anywhere in what an
exporter sends. :data:`SECRETS` are credentials placed inside a tool argument by
:func:`tool_call_with_secrets`; under ``full`` capture none of them may leave unmasked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from agentdeck.model.clock import ManualClock
from agentdeck.model.content import DataBlock, TextBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    AnswerRecorded,
    ApprovalDecided,
    MessageCompleted,
    Payload,
    Report,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunResumed,
    RunStarted,
    StepCompleted,
    TextDelta,
    ToolCallCompleted,
    ToolCallStarted,
    Usage,
    UsageReported,
)
from agentdeck.vocabulary import ErrorCode, InterruptReason, ReportLevel

__all__ = [
    "SECRETS",
    "RunLog",
    "Scenario",
    "agent_turn_with_tool",
    "failed_run",
    "nested_workflow",
    "tool_call_with_secrets",
    "workflow_with_interrupt",
]

EPOCH = datetime(2030, 1, 2, 9, 0, tzinfo=UTC)
"""Where scenario clocks start (far from now, so a renderer that read the wall clock shows)."""

SECRETS = (
    "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
    "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl",
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
)
"""Credentials :func:`tool_call_with_secrets` hides in a tool argument: an API key, a bearer
token and the body of a PEM private key."""

_PEM = (
    "-----BEGIN PRIVATE KEY-----\n" + SECRETS[2] + "\nMkQ2Rmc3Njc4OTAxMjM0NTY3ODkw\n"
    "-----END PRIVATE KEY-----"
)


class RunLog:
    """Records one run's events as a store would: seq from 0, ``ts`` from ``clock``."""

    def __init__(
        self,
        run_id: str,
        clock: ManualClock,
        *,
        origin: str,
        session_id: str | None = None,
        namespace: str | None = None,
        parent_run_id: str | None = None,
        journal: list[Event] | None = None,
    ) -> None:
        self.run_id = run_id
        self.clock = clock
        self.origin = origin
        self.session_id = session_id
        self.namespace = namespace
        self.parent_run_id = parent_run_id
        self.events: list[Event] = []
        self.journal = journal
        """Where every event is also appended, so several runs' logs interleave in order."""

    def add(self, payload: Payload, *, after: float = 0.0) -> Event:
        """Advance the clock by ``after`` seconds, then record ``payload``."""
        if after:
            self.clock.advance(after)
        event = Event.record(
            payload,
            seq=len(self.events),
            run_id=self.run_id,
            ts=self.clock.now(),
            session_id=self.session_id,
            namespace=self.namespace,
            parent_run_id=self.parent_run_id,
            origin=self.origin,
        )
        self.events.append(event)
        if self.journal is not None:
            self.journal.append(event)
        return event


@dataclass(frozen=True, slots=True)
class Scenario:
    events: list[Event]
    content: tuple[str, ...] = ()
    """Text from the log that must not leave the process unless capture is ``full``."""
    names: tuple[str, ...] = field(default=())
    """Agent, workflow, tool and model names in the log (exported from ``metadata`` on)."""


def agent_turn_with_tool(clock: ManualClock | None = None) -> Scenario:
    """``booking`` answers a question after one ``find_slots`` call: two model calls."""
    clock = clock or ManualClock(EPOCH)
    prompt = "Book a table for two at Luigi's tomorrow evening"
    args = {"restaurant": "Luigi's", "party": 2, "day": "tomorrow"}
    result = '["19:00", "20:30"]'
    answer = "Luigi's has 19:00 or 20:30 tomorrow; shall I book 19:00?"
    log = RunLog("run-agent-1", clock, origin="booking", session_id="sess-alice", namespace="acme")
    log.add(RunStarted(name="booking", invocable_kind="agent", input=[TextBlock(text=prompt)]))
    log.add(
        UsageReported(model="gpt-5-mini", usage=_usage(412, 31)),
        after=0.8,
    )
    log.add(ToolCallStarted(call_id="call-1", tool="find_slots", args=args))
    log.add(
        ToolCallCompleted(
            call_id="call-1", tool="find_slots", result_preview=result, result_size=len(result)
        ),
        after=0.25,
    )
    log.add(TextDelta(message_id="m-1", text=answer[:20]), after=0.3)
    log.add(TextDelta(message_id="m-1", text=answer[20:]), after=0.1)
    log.add(MessageCompleted(message_id="m-1", text=answer, agent="booking"))
    log.add(UsageReported(model="gpt-5-mini", usage=_usage(480, 22)), after=0.05)
    log.add(
        RunCompleted(output=[TextBlock(text=answer)], usage=_usage(892, 53, requests=2)),
    )
    return Scenario(
        log.events,
        content=(prompt, "Luigi's", "19:00", "shall I book"),
        names=("booking", "find_slots", "gpt-5-mini"),
    )


def workflow_with_interrupt(clock: ManualClock | None = None) -> Scenario:
    """``refund`` looks an order up, parks on an approval for an hour, then refunds it."""
    clock = clock or ManualClock(EPOCH)
    log = RunLog("run-wf-1", clock, origin="refund", session_id="sess-bob")
    question = {"question": "Refund 120 EUR for order A-1009?", "amount": 120}
    log.add(
        RunStarted(
            name="refund",
            invocable_kind="workflow",
            input=[DataBlock(data={"order_id": "A-1009"})],
        )
    )
    log.add(StepCompleted(index=0, name="lookup_order", result={"total": 120}), after=0.4)
    log.add(Report(level=ReportLevel.INFO, message="policy allows refunds under 200 EUR"))
    log.add(
        RunInterrupted(interrupt_id="int-1", reason=InterruptReason.APPROVAL, payload=question),
        after=0.1,
    )
    log.add(AnswerRecorded(interrupt_id="int-1", value={"approved": True}), after=3600)
    log.add(RunResumed(interrupt_id="int-1"))
    log.add(StepCompleted(index=1, name="issue_refund", result={"refund_id": "R-77"}), after=0.6)
    log.add(RunCompleted(output=[TextBlock(text="Refunded order A-1009 (R-77)")]))
    return Scenario(
        log.events,
        content=("A-1009", "Refund 120 EUR", "policy allows refunds", "R-77"),
        names=("refund", "lookup_order", "issue_refund"),
    )


def failed_run(clock: ManualClock | None = None) -> Scenario:
    """``support`` calls ``lookup_order``, which raises; the run fails with ``tool_error``."""
    clock = clock or ManualClock(EPOCH)
    log = RunLog("run-fail-1", clock, origin="support", session_id="sess-carol")
    prompt = "Where is my order 42?"
    log.add(RunStarted(name="support", invocable_kind="agent", input=[TextBlock(text=prompt)]))
    log.add(UsageReported(model="gpt-5-mini", usage=_usage(120, 12)), after=0.5)
    log.add(ToolCallStarted(call_id="call-9", tool="lookup_order", args={"order": 42}))
    log.add(
        ToolCallCompleted(call_id="call-9", tool="lookup_order", error="KeyError: order 42"),
        after=0.05,
    )
    log.add(
        RunFailed(
            error_code=ErrorCode.TOOL_ERROR,
            message="lookup_order raised KeyError",
            where="lookup_order",
        )
    )
    return Scenario(
        log.events,
        content=(prompt, "KeyError", "order 42"),
        names=("support", "lookup_order", "gpt-5-mini"),
    )


def tool_call_with_secrets(clock: ManualClock | None = None) -> Scenario:
    """``ops`` calls ``deploy`` with credentials in its arguments (see :data:`SECRETS`)."""
    clock = clock or ManualClock(EPOCH)
    log = RunLog("run-secret-1", clock, origin="ops")
    args = {
        "api_key": SECRETS[0],
        "headers": {"Authorization": SECRETS[1]},
        "tls_key": _PEM,
        "target": "staging",
    }
    log.add(RunStarted(name="ops", invocable_kind="agent", input=[TextBlock(text="deploy")]))
    log.add(UsageReported(model="gpt-5-mini", usage=_usage(50, 10)), after=0.2)
    log.add(ToolCallStarted(call_id="call-s", tool="deploy", args=args))
    log.add(ApprovalDecided(call_id="call-s", tool="deploy", approved=True, origin="policy"))
    log.add(
        ToolCallCompleted(call_id="call-s", tool="deploy", result_preview="deployed to staging"),
        after=1.0,
    )
    log.add(RunCompleted(output=[TextBlock(text="done")]))
    return Scenario(log.events, content=("staging",), names=("ops", "deploy"))


def nested_workflow(clock: ManualClock | None = None) -> Scenario:
    """``concierge`` (an agent) runs the ``reserve`` workflow as a nested run, interleaved."""
    clock = clock or ManualClock(EPOCH)
    events: list[Event] = []
    parent = RunLog("run-parent", clock, origin="concierge", session_id="sess-dan", journal=events)
    child = RunLog(
        "run-child",
        clock,
        origin="reserve",
        session_id="sess-dan",
        parent_run_id="run-parent",
        journal=events,
    )
    prompt = "Reserve the usual"
    parent.add(RunStarted(name="concierge", invocable_kind="agent", input=[TextBlock(text=prompt)]))
    parent.add(UsageReported(model="gpt-5-mini", usage=_usage(100, 20)), after=0.3)
    parent.add(ToolCallStarted(call_id="call-r", tool="reserve", args={"usual": True}))
    child.add(
        RunStarted(name="reserve", invocable_kind="workflow", input=[DataBlock(data={})]),
        after=0.01,
    )
    child.add(StepCompleted(index=0, name="book", result="T-5"), after=0.2)
    child.add(RunCompleted(output=[TextBlock(text="T-5")]))
    parent.add(
        ToolCallCompleted(call_id="call-r", tool="reserve", result_preview="T-5"), after=0.01
    )
    parent.add(MessageCompleted(message_id="m-9", text="Reserved: T-5"), after=0.2)
    parent.add(UsageReported(model="gpt-5-mini", usage=_usage(130, 8)))
    parent.add(RunCompleted(output=[TextBlock(text="Reserved: T-5")]))
    return Scenario(events, content=(prompt, "T-5"), names=("concierge", "reserve", "book"))


def _usage(input_tokens: int, output_tokens: int, *, requests: int = 1) -> Usage:
    return Usage(
        requests=requests,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
    )
