"""What one event does to its run's spans: open one, finish one, or mark a point in time.

:func:`apply_event` is the renderer's step for every event of a run after its start: a tool
call opens a tool span and its completion finishes it; a usage report finishes a generation
(from the previous boundary, with the prompt and completion captured since); a question or a
pause opens a span its answer or resume finishes; decisions, reports, handoffs, control requests
and application events are instantaneous. A terminal event finishes nothing here: it returns the
:class:`RunEnding` the renderer finishes the run's root with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

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
    InputAppended,
    MessageCompleted,
    NodeUpdated,
    PlanUpdated,
    Report,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunPaused,
    RunResumed,
    StepCompleted,
    ToolCallCompleted,
    ToolCallStarted,
    Usage,
    UsageReported,
)
from agentdeck.observing.capture import ContentPolicy
from agentdeck.observing.tracing.attributes import (
    AGENT_NEXT,
    AGENT_PREVIOUS,
    ANSWER_ORIGIN,
    APPROVAL_APPROVED,
    APPROVAL_ORIGIN,
    ARTIFACT_MEDIA_TYPE,
    ARTIFACT_SIZE,
    CONTROL_SAFE_POINT,
    CONTROL_VERB,
    ERROR_CODE,
    ERROR_RETRYABLE,
    ERROR_WHERE,
    GEN_AI_OPERATION_NAME,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_NAME,
    GEN_AI_TOOL_TYPE,
    INTERRUPT_ID,
    INTERRUPT_REASON,
    NODE_STEP,
    OPERATION_CHAT,
    OPERATION_EXECUTE_TOOL,
    PAUSE_WAKE_AT,
    PLAN_ITEMS,
    REPORT_LEVEL,
    STEP_INDEX,
    TOOL_ARGS_INVALID,
    TOOL_ERROR,
    TOOL_RESULT_SIZE,
    usage_attributes,
)
from agentdeck.observing.tracing.ids import span_id_for
from agentdeck.observing.tracing.run_spans import (
    OpenSpan,
    RunSpans,
    record,
    remember,
    text_message,
)
from agentdeck.observing.tracing.spans import (
    AttributeValue,
    ChatMessage,
    MessagePart,
    Rendered,
    SpanLevel,
    SpanType,
)
from agentdeck.vocabulary import ReportLevel

__all__ = ["RunEnding", "apply_event"]

_EMPTY: Mapping[str, AttributeValue] = MappingProxyType({})

_REPORT_LEVELS = {
    ReportLevel.ERROR.value: SpanLevel.ERROR,
    ReportLevel.WARNING.value: SpanLevel.WARNING,
    ReportLevel.INFO.value: SpanLevel.DEFAULT,
    ReportLevel.RECORD.value: SpanLevel.DEBUG,
}


@dataclass(frozen=True, slots=True)
class RunEnding:
    """How a terminal event ends its run: what the renderer puts on the run's root record."""

    status: str
    """``completed``, ``failed`` or ``cancelled``: the root's ``agentdeck.run.status``."""
    level: SpanLevel = SpanLevel.DEFAULT
    status_message: str | None = None
    output: str | None = None
    usage: Usage | None = None
    """The run's total as the terminal event reports it; when absent (or zero) the renderer uses
    the sum of the usage reported along the way."""
    extra: Mapping[str, AttributeValue] = field(default_factory=dict)
    """Attributes the root carries beside its own (the error's code, retryability, place)."""


def apply_event(
    policy: ContentPolicy, run: RunSpans, event: Event, out: list[Rendered]
) -> RunEnding | None:
    """Apply ``event`` to ``run``'s spans, appending the records it finishes to ``out``.

    Returns how the run ends when ``event`` is terminal (the renderer then finishes the root);
    ``None`` otherwise.
    """
    match event.payload:
        case RunCompleted() as done:
            return RunEnding(
                status="completed",
                output=policy.text(done.output),
                usage=done.usage,
            )
        case RunFailed() as failed:
            code = str(failed.error_code)
            extra: dict[str, AttributeValue] = {
                ERROR_CODE: code,
                ERROR_RETRYABLE: failed.retryable,
            }
            if failed.where and policy.names:
                extra[ERROR_WHERE] = failed.where
            detail = policy.text(failed.message)
            return RunEnding(
                status="failed",
                level=SpanLevel.ERROR,
                status_message=f"{code}: {detail}" if detail else code,
                extra=extra,
            )
        case RunCancelled() as cancelled:
            reason = policy.text(cancelled.reason)
            return RunEnding(
                status="cancelled",
                level=SpanLevel.WARNING,
                status_message=f"cancelled: {reason}" if reason else "cancelled",
            )
        case RunPaused() as paused:
            run.status = "paused"
            attributes: dict[str, AttributeValue] = {}
            if paused.wake_at is not None:
                attributes[PAUSE_WAKE_AT] = paused.wake_at.isoformat()
            run.pause = OpenSpan(
                span_id=span_id_for(run.run_id, f"pause:{event.seq}"),
                name="paused",
                type=SpanType.SPAN,
                start=event.ts,
                attributes=attributes,
                input=policy.text(paused.reason),
            )
        case RunResumed():
            run.status = "running"
            if run.pause is not None:
                out.append(record(policy, run, run.pause, end=event.ts))
                run.pause = None
            run.boundary = event.ts
        case RunInterrupted() as interrupted:
            run.status = "waiting_answer"
            run.interrupts[interrupted.interrupt_id] = OpenSpan(
                span_id=span_id_for(run.run_id, f"interrupt:{interrupted.interrupt_id}"),
                name="approval" if interrupted.reason == "approval" else "interrupt",
                type=SpanType.SPAN,
                start=event.ts,
                attributes={
                    INTERRUPT_ID: policy.identifier(interrupted.interrupt_id),
                    INTERRUPT_REASON: str(interrupted.reason),
                },
                input=policy.text(interrupted.payload),
            )
        case AnswerRecorded() as answer:
            value = policy.text(answer.value)
            remember(run, value)
            waiting = run.interrupts.pop(answer.interrupt_id, None)
            if waiting is None:
                _point(policy, run, event, out, "answer", output=value)
            else:
                attributes = {
                    **waiting.attributes,
                    ANSWER_ORIGIN: str(answer.origin),
                }
                out.append(
                    record(policy, run, waiting, end=event.ts, output=value, attributes=attributes)
                )
        case AnswerRefused() as refused:
            reason = policy.text(refused.reason)
            _point(
                policy,
                run,
                event,
                out,
                "answer refused",
                level=SpanLevel.WARNING,
                status_message=reason or "answer refused",
                attributes={INTERRUPT_ID: policy.identifier(refused.interrupt_id)},
            )
        case ApprovalDecided() as decided:
            attributes = {
                APPROVAL_APPROVED: decided.approved,
                APPROVAL_ORIGIN: str(decided.origin),
                GEN_AI_TOOL_CALL_ID: policy.identifier(decided.call_id),
            }
            if policy.names:
                attributes[GEN_AI_TOOL_NAME] = decided.tool
            _point(
                policy,
                run,
                event,
                out,
                "approval",
                level=SpanLevel.DEFAULT if decided.approved else SpanLevel.WARNING,
                output=policy.text(decided.message),
                attributes=attributes,
            )
        case ControlRequested() as requested:
            _point(
                policy,
                run,
                event,
                out,
                "control requested",
                attributes={CONTROL_VERB: str(requested.verb)},
                output=policy.text(requested.reason),
            )
        case ControlObserved() as observed:
            _point(
                policy,
                run,
                event,
                out,
                "control observed",
                attributes={
                    CONTROL_VERB: str(observed.verb),
                    CONTROL_SAFE_POINT: str(observed.safe_point),
                },
            )
        case MessageCompleted() as message:
            text = policy.text(message.text)
            if text is not None:
                run.completion.append(text)
        case AgentChanged() as changed:
            attributes = {}
            if policy.names:
                attributes[AGENT_NEXT] = changed.next
                if changed.previous is not None:
                    attributes[AGENT_PREVIOUS] = changed.previous
            _point(policy, run, event, out, "handoff", attributes=attributes)
        case ToolCallStarted() as call:
            attributes = _tool_attributes(policy, call.call_id, call.tool)
            if call.args_error is not None:
                attributes[TOOL_ARGS_INVALID] = True
            arguments = policy.text(call.args)
            run.tools[call.call_id] = OpenSpan(
                span_id=span_id_for(run.run_id, f"tool:{call.call_id}"),
                name=policy.name(call.tool, "tool"),
                type=SpanType.TOOL,
                start=event.ts,
                attributes=attributes,
                input=arguments,
            )
            if policy.content:  # the model asked for it: the next call's prompt shows it
                part = MessagePart(
                    type="tool_call", content=arguments, id=call.call_id, name=call.tool
                )
                remember(run, None, ChatMessage(role="assistant", parts=(part,)))
        case ToolCallCompleted() as done:
            _tool_completed(policy, run, event, done, out)
        case UsageReported() as reported:
            _generation(policy, run, event, reported, out)
        case StepCompleted() as step:
            _step(
                policy,
                run,
                event,
                out,
                policy.name(step.name, "step"),
                {STEP_INDEX: step.index},
                step.result,
            )
        case NodeUpdated() as node:
            attributes = {} if node.step is None else {NODE_STEP: node.step}
            _step(policy, run, event, out, policy.name(node.node, "node"), attributes, node.update)
        case Report() as report:
            _point(
                policy,
                run,
                event,
                out,
                "report",
                level=_REPORT_LEVELS.get(str(report.level), SpanLevel.DEFAULT),
                attributes={REPORT_LEVEL: str(report.level)},
                output=policy.text(
                    {"message": report.message, "fields": report.fields}
                    if report.fields
                    else report.message
                ),
            )
        case Custom() as custom:
            _point(
                policy,
                run,
                event,
                out,
                policy.name(custom.name, "custom"),
                output=policy.text(custom.data),
            )
        case PlanUpdated() as plan:
            _point(
                policy,
                run,
                event,
                out,
                "plan",
                attributes={PLAN_ITEMS: len(plan.items)},
                output=policy.text([item.model_dump() for item in plan.items]),
            )
        case ArtifactCreated() as artifact:
            attributes = {} if artifact.size is None else {ARTIFACT_SIZE: artifact.size}
            if policy.names:
                attributes[ARTIFACT_MEDIA_TYPE] = artifact.media_type
            _point(
                policy,
                run,
                event,
                out,
                "artifact",
                attributes=attributes,
                output=policy.text(artifact.uri),
            )
        case InputAppended() as appended:
            text = policy.text(appended.input)
            remember(run, text)
            _point(policy, run, event, out, "input", output=text)
        case _:
            # Deltas are carried by message.completed; kinds this release does not know
            # have no place in the tree yet.
            pass
    return None


def _tool_completed(
    policy: ContentPolicy, run: RunSpans, event: Event, done: ToolCallCompleted, out: list[Rendered]
) -> None:
    started = run.tools.pop(done.call_id, None)
    if started is None:  # its start was rendered by another process, or never logged
        started = OpenSpan(
            span_id=span_id_for(run.run_id, f"tool:{done.call_id}"),
            name=policy.name(done.tool, "tool"),
            type=SpanType.TOOL,
            start=event.ts,
            attributes=_tool_attributes(policy, done.call_id, done.tool),
        )
    result = policy.text(done.result_preview)
    attributes = {**started.attributes, TOOL_RESULT_SIZE: done.result_size}
    level, message = SpanLevel.DEFAULT, None
    if done.error is not None:
        level = SpanLevel.ERROR
        message = policy.text(done.error) or "tool error"
        attributes[TOOL_ERROR] = True
    out.append(
        record(
            policy,
            run,
            started,
            end=event.ts,
            level=level,
            status_message=message,
            output=result,
            attributes=attributes,
        )
    )
    if result is not None:
        response = MessagePart(type="tool_call_response", content=result, id=done.call_id)
        remember(run, f"{done.tool}: {result}", ChatMessage(role="tool", parts=(response,)))
    run.boundary = event.ts


def _generation(
    policy: ContentPolicy, run: RunSpans, event: Event, reported: UsageReported, out: list[Rendered]
) -> None:
    usage = reported.usage
    run.usage = run.usage + usage
    attributes: dict[str, AttributeValue] = {
        GEN_AI_OPERATION_NAME: OPERATION_CHAT,
        GEN_AI_PROVIDER_NAME: run.provider,
        **usage_attributes(usage),
    }
    if policy.names and reported.model:
        attributes[GEN_AI_REQUEST_MODEL] = reported.model
    span = OpenSpan(
        span_id=span_id_for(run.run_id, f"generation:{event.seq}"),
        name=policy.name(reported.model, "generation"),
        type=SpanType.GENERATION,
        start=min(run.boundary, event.ts),
        attributes=attributes,
        input=policy.text("\n".join(run.prompt)) if run.prompt else None,
    )
    completion = policy.text("\n".join(run.completion)) if run.completion else None
    answer = None if completion is None else text_message("assistant", completion)
    out.append(
        record(
            policy,
            run,
            span,
            end=event.ts,
            output=completion,
            model=reported.model if policy.names else None,
            usage=usage,
            input_messages=tuple(run.messages) if run.messages else None,
            output_messages=None
            if completion is None
            else (text_message("assistant", completion, finish_reason="stop"),),
        )
    )
    remember(run, completion, answer)
    run.completion.clear()
    run.boundary = event.ts


def _tool_attributes(policy: ContentPolicy, call_id: str, tool: str) -> dict[str, AttributeValue]:
    attributes: dict[str, AttributeValue] = {
        GEN_AI_OPERATION_NAME: OPERATION_EXECUTE_TOOL,
        GEN_AI_TOOL_TYPE: "function",
        GEN_AI_TOOL_CALL_ID: policy.identifier(call_id),
    }
    if policy.names:
        attributes[GEN_AI_TOOL_NAME] = tool
    return attributes


def _step(
    policy: ContentPolicy,
    run: RunSpans,
    event: Event,
    out: list[Rendered],
    name: str,
    attributes: dict[str, AttributeValue],
    result: object,
) -> None:
    span = OpenSpan(
        span_id=span_id_for(run.run_id, f"step:{event.seq}"),
        name=name,
        type=SpanType.SPAN,
        start=min(run.boundary, event.ts),
        attributes=attributes,
    )
    out.append(record(policy, run, span, end=event.ts, output=policy.text(result)))
    run.boundary = event.ts


def _point(
    policy: ContentPolicy,
    run: RunSpans,
    event: Event,
    out: list[Rendered],
    name: str,
    *,
    level: SpanLevel = SpanLevel.DEFAULT,
    status_message: str | None = None,
    output: str | None = None,
    attributes: Mapping[str, AttributeValue] = _EMPTY,
) -> None:
    span = OpenSpan(
        span_id=span_id_for(run.run_id, f"event:{event.seq}"),
        name=name,
        type=SpanType.EVENT,
        start=event.ts,
        attributes=dict(attributes),
    )
    out.append(
        record(
            policy,
            run,
            span,
            end=event.ts,
            level=level,
            status_message=status_message,
            output=output,
        )
    )
