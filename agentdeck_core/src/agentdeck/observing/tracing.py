"""Render the canonical event stream as trace spans, for every exporter to share.

One run is one trace. The run's root span covers ``run.started`` to its terminal event; model
calls become generations, tool calls tool spans, interrupts and pauses spans covering the wait,
and decisions, reports and control requests instantaneous events. A nested run (its events carry
``parent_run_id``) is placed under its parent's root, in its parent's trace.

The rendering is pure: :class:`TraceRenderer` turns :class:`~agentdeck.model.events.Event` objects
into finished :class:`SpanRecord` objects -- names, ids, parent ids, times, attributes, usage
and (under ``full`` capture) content -- and knows no telemetry SDK. A run's root is announced
with a :class:`SpanStarted` when the run starts (it finishes only with the run), for exporters
whose SDK wants a parent to be live while its children are recorded; an exporter that writes
each span whole can ignore those. Each exporter (the Langfuse
and OpenTelemetry plugins, or yours) maps records onto its own SDK; none of them re-derives the
tree, which is why an agent turn and a workflow run are traced by the same code.

Ids are derived from run ids, not drawn at random: a run's trace id and its root's span id are
the same in every process. A child finished (and exported) before its parent can name the
parent's span id, and a run resumed by another process after a restart continues under the
root the first process exported.

What a record may contain is decided by the :class:`~agentdeck.observing.capture.ContentPolicy` the
renderer was built with; exporters add nothing from the events themselves.

Attribute keys follow the OpenTelemetry GenAI conventions where one exists (``gen_ai.*``,
``session.id``) and use ``agentdeck.*`` otherwise.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
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
    RunStarted,
    StepCompleted,
    ToolCallCompleted,
    ToolCallStarted,
    Usage,
    UsageReported,
)
from agentdeck.observing.capture import ContentPolicy
from agentdeck.vocabulary import ReportLevel

__all__ = [
    "PROMPT_ITEMS",
    "AttributeValue",
    "Rendered",
    "SpanLevel",
    "SpanRecord",
    "SpanStarted",
    "SpanType",
    "TraceRenderer",
    "span_id_for",
    "trace_id_for",
]

AttributeValue = str | bool | int | float
"""What an attribute may hold: the scalar types every OTLP backend accepts."""

PROMPT_ITEMS = 20
"""How many of the latest conversation items a generation's captured prompt keeps."""

_EMPTY: Mapping[str, AttributeValue] = MappingProxyType({})


class SpanType(StrEnum):
    """What a span stands for; the Langfuse observation types, which OTLP carries as an
    attribute."""

    AGENT = "agent"
    CHAIN = "chain"
    """A workflow (or any run that is not an agent turn)."""
    GENERATION = "generation"
    TOOL = "tool"
    SPAN = "span"
    EVENT = "event"
    """Instantaneous: ``start == end``."""


class SpanLevel(StrEnum):
    """How much a span matters; ``ERROR`` is what exporters turn into an error status."""

    DEBUG = "DEBUG"
    DEFAULT = "DEFAULT"
    WARNING = "WARNING"
    ERROR = "ERROR"


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """One finished span, ready to hand to an exporter.

    ``trace_id`` is 32 and ``span_id``/``parent_span_id`` 16 lower-case hex digits (the W3C
    sizes). ``parent_span_id`` is ``None`` only for the root of a top-level run. ``model``,
    ``input``, ``output`` and ``session_id`` are already filtered by the content policy: an
    exporter puts them where its backend expects them and adds nothing else.
    """

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    type: SpanType
    start: datetime
    end: datetime
    level: SpanLevel = SpanLevel.DEFAULT
    status_message: str | None = None
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    model: str | None = None
    usage: Usage | None = None
    input: str | None = None
    output: str | None = None
    session_id: str | None = None
    """The run's session as the policy lets it out (hashed, raw, or ``None``)."""
    trace_name: str = "agentdeck"
    """The name of the trace: its top-level run's (generic under ``off``)."""
    run_root: bool = False
    """Whether this is a run's own root span (carrying its outcome and total usage)."""


@dataclass(frozen=True, slots=True)
class SpanStarted:
    """A run's root span has started; its :class:`SpanRecord` (same ``span_id``) comes when the
    run ends, or when the renderer is closed first."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    type: SpanType
    start: datetime
    session_id: str | None
    trace_name: str


Rendered = SpanRecord | SpanStarted
"""What :meth:`TraceRenderer.feed` returns, in the order an exporter should apply it."""


def trace_id_for(run_id: str) -> str:
    """The trace id of a top-level run: the same in every process that renders it."""
    return _hex_digest("agentdeck.trace", run_id, length=32)


def span_id_for(run_id: str, key: str) -> str:
    """The span id of one part (``key``) of a run; ``span_id_for(run_id, "run")`` is its root."""
    return _hex_digest("agentdeck.span", f"{run_id}\x00{key}", length=16)


def _hex_digest(domain: str, value: str, *, length: int) -> str:
    digest = hashlib.sha256(f"{domain}\x00{value}".encode()).hexdigest()[:length]
    # An all-zero id is invalid in W3C trace context; a hash hitting it is a curiosity, but the
    # guard costs nothing.
    return digest if digest.strip("0") else digest[:-1] + "1"


@dataclass(slots=True)
class _Open:
    """A span that has started and not ended yet."""

    span_id: str
    name: str
    type: SpanType
    start: datetime
    attributes: dict[str, AttributeValue] = field(default_factory=dict)
    input: str | None = None


@dataclass(slots=True)
class _Run:
    run_id: str
    trace_id: str
    parent_span_id: str | None
    trace_name: str
    session_id: str | None
    root: _Open
    """The run's root span, or -- when this process first saw the run mid-way (it was resumed
    after a restart) -- a continuation span under the root another process exported."""
    continued: bool
    boundary: datetime
    """Where the next model call (or workflow step) is taken to start: the end of the last one,
    of the last tool call, or the (re)start of the run."""
    last_ts: datetime
    status: str = "running"
    prompt: list[str] = field(default_factory=list)
    completion: list[str] = field(default_factory=list)
    tools: dict[str, _Open] = field(default_factory=dict)
    interrupts: dict[str, _Open] = field(default_factory=dict)
    pause: _Open | None = None
    usage: Usage = field(default_factory=Usage)


class TraceRenderer:
    """Turns one process's event stream into finished spans, run by run.

    :meth:`feed` takes events in log order per run (interleaving across runs is fine) and
    returns the spans each event finished -- usually none or one, several at a run's end --
    preceded, for ``run.started``, by the root's :class:`SpanStarted`.
    :meth:`close` finishes what is still open (runs suspended when the stream ends), marking it
    unfinished. Not thread-safe: an observer feeds it from one task.

    At most ``max_open_runs`` runs are tracked; beyond that the oldest is finished early (marked
    unfinished), so a deck whose runs park forever cannot grow it without bound.
    """

    def __init__(self, policy: ContentPolicy | None = None, *, max_open_runs: int = 10_000):
        self.policy = policy if policy is not None else ContentPolicy()
        self._max_open_runs = max_open_runs
        self._runs: dict[str, _Run] = {}

    @property
    def open_runs(self) -> int:
        """How many runs have started (here) and not yet ended."""
        return len(self._runs)

    # ----------------------------------------------------------------------------- feeding

    def feed(self, event: Event) -> list[Rendered]:
        """The spans ``event`` started (a run's root) or finished."""
        out: list[Rendered] = []
        payload = event.payload
        if isinstance(payload, RunStarted):
            self._start(event, payload, out)
            return out
        run = self._runs.get(event.run_id)
        if run is None:
            run = self._continue(event, out)
        run.last_ts = max(run.last_ts, event.ts)
        self._apply(run, event, out)
        return out

    def close(self, now: datetime) -> list[Rendered]:
        """Finish every open span as unfinished, ending no earlier than its run's last event."""
        out: list[Rendered] = []
        for run in list(self._runs.values()):
            self._abandon(run, max(now, run.last_ts), out)
        return out

    # ----------------------------------------------------------------------------- lifecycle

    def _start(self, event: Event, started: RunStarted, out: list[Rendered]) -> None:
        policy = self.policy
        parent = self._runs.get(event.parent_run_id) if event.parent_run_id else None
        is_agent = started.invocable_kind == "agent"
        generic = started.invocable_kind if started.invocable_kind in _KNOWN_KINDS else "run"
        name = policy.name(started.name or event.origin, generic)
        attributes = self._run_attributes(event)
        attributes["agentdeck.invocable.kind"] = started.invocable_kind
        if policy.names:
            attributes["gen_ai.operation.name"] = "invoke_agent" if is_agent else "invoke_workflow"
            attributes["gen_ai.agent.name" if is_agent else "agentdeck.workflow.name"] = name
        root = _Open(
            span_id=span_id_for(event.run_id, "run"),
            name=name,
            type=SpanType.AGENT if is_agent else SpanType.CHAIN,
            start=event.ts,
            attributes=attributes,
            input=policy.text(started.input),
        )
        run = _Run(
            run_id=event.run_id,
            trace_id=self._trace_of(event, parent),
            parent_span_id=self._parent_span_of(event, parent),
            trace_name=parent.trace_name if parent is not None else name,
            session_id=self._session_of(event, parent),
            root=root,
            continued=False,
            boundary=event.ts,
            last_ts=event.ts,
        )
        _remember(run, root.input)
        self._track(run, out)
        out.append(_started(run))

    def _continue(self, event: Event, out: list[Rendered]) -> _Run:
        """A run first seen mid-way: continue under the root another process rendered."""
        parent = self._runs.get(event.parent_run_id) if event.parent_run_id else None
        continuation = _Open(
            span_id=span_id_for(event.run_id, f"continued:{event.seq}"),
            name=self.policy.name(event.origin, "run"),
            type=SpanType.SPAN,
            start=event.ts,
            attributes={**self._run_attributes(event), "agentdeck.run.continued": True},
        )
        run = _Run(
            run_id=event.run_id,
            trace_id=self._trace_of(event, parent),
            parent_span_id=span_id_for(event.run_id, "run"),
            trace_name=parent.trace_name if parent is not None else continuation.name,
            session_id=self._session_of(event, parent),
            root=continuation,
            continued=True,
            boundary=event.ts,
            last_ts=event.ts,
        )
        self._track(run, out)
        out.append(_started(run))
        return run

    def _track(self, run: _Run, out: list[Rendered]) -> None:
        self._runs[run.run_id] = run
        while len(self._runs) > self._max_open_runs:
            oldest = next(iter(self._runs.values()))
            self._abandon(oldest, oldest.last_ts, out)

    def _trace_of(self, event: Event, parent: _Run | None) -> str:
        if parent is not None:
            return parent.trace_id
        # A parent this process never saw start is taken to be top-level: the only id it can
        # know without reading the store.
        return trace_id_for(event.parent_run_id or event.run_id)

    def _parent_span_of(self, event: Event, parent: _Run | None) -> str | None:
        if parent is not None:
            return parent.root.span_id
        return span_id_for(event.parent_run_id, "run") if event.parent_run_id else None

    def _session_of(self, event: Event, parent: _Run | None) -> str | None:
        if event.session_id is not None and self.policy.names:
            return self.policy.identifier(event.session_id)
        return parent.session_id if parent is not None else None

    def _run_attributes(self, event: Event) -> dict[str, AttributeValue]:
        policy = self.policy
        attributes: dict[str, AttributeValue] = {
            "agentdeck.run.id": policy.identifier(event.run_id)
        }
        if event.parent_run_id:
            attributes["agentdeck.run.parent_id"] = policy.identifier(event.parent_run_id)
        if policy.names and event.namespace is not None:
            attributes["agentdeck.namespace"] = policy.identifier(event.namespace)
        return attributes

    def _end_run(
        self,
        run: _Run,
        event: Event,
        out: list[Rendered],
        *,
        status: str,
        level: SpanLevel = SpanLevel.DEFAULT,
        status_message: str | None = None,
        output: str | None = None,
        usage: Usage | None = None,
        extra: Mapping[str, AttributeValue] = _EMPTY,
    ) -> None:
        self._close_children(run, event.ts, out)
        total = usage if usage is not None and usage != Usage() else run.usage
        attributes = {**run.root.attributes, **extra, "agentdeck.run.status": status}
        attributes.update(_usage_attributes(total))
        out.append(
            self._record(
                run,
                run.root,
                end=event.ts,
                level=level,
                status_message=status_message,
                output=output,
                usage=total,
                attributes=attributes,
                parent_span_id=run.parent_span_id,
                run_root=not run.continued,
            )
        )
        del self._runs[run.run_id]

    def _abandon(self, run: _Run, end: datetime, out: list[Rendered]) -> None:
        """End a run's open spans without an outcome (the stream ended first)."""
        self._close_children(run, end, out)
        attributes = {
            **run.root.attributes,
            "agentdeck.run.status": run.status,
            "agentdeck.span.unfinished": True,
            **_usage_attributes(run.usage),
        }
        out.append(
            self._record(
                run,
                run.root,
                end=end,
                usage=run.usage,
                attributes=attributes,
                parent_span_id=run.parent_span_id,
                run_root=not run.continued,
            )
        )
        del self._runs[run.run_id]

    def _close_children(self, run: _Run, end: datetime, out: list[Rendered]) -> None:
        opened = [*run.tools.values(), *run.interrupts.values()]
        if run.pause is not None:
            opened.append(run.pause)
        for span in opened:
            attributes = {**span.attributes, "agentdeck.span.unfinished": True}
            out.append(self._record(run, span, end=max(end, span.start), attributes=attributes))
        run.tools.clear()
        run.interrupts.clear()
        run.pause = None

    # ----------------------------------------------------------------------------- one event

    def _apply(self, run: _Run, event: Event, out: list[Rendered]) -> None:
        policy = self.policy
        match event.payload:
            case RunCompleted() as done:
                self._end_run(
                    run,
                    event,
                    out,
                    status="completed",
                    output=policy.text(done.output),
                    usage=done.usage,
                )
            case RunFailed() as failed:
                code = str(failed.error_code)
                extra: dict[str, AttributeValue] = {
                    "agentdeck.error.code": code,
                    "agentdeck.error.retryable": failed.retryable,
                }
                if failed.where and policy.names:
                    extra["agentdeck.error.where"] = failed.where
                detail = policy.text(failed.message)
                self._end_run(
                    run,
                    event,
                    out,
                    status="failed",
                    level=SpanLevel.ERROR,
                    status_message=f"{code}: {detail}" if detail else code,
                    extra=extra,
                )
            case RunCancelled() as cancelled:
                reason = policy.text(cancelled.reason)
                self._end_run(
                    run,
                    event,
                    out,
                    status="cancelled",
                    level=SpanLevel.WARNING,
                    status_message=f"cancelled: {reason}" if reason else "cancelled",
                )
            case RunPaused() as paused:
                run.status = "paused"
                attributes: dict[str, AttributeValue] = {}
                if paused.wake_at is not None:
                    attributes["agentdeck.pause.wake_at"] = paused.wake_at.isoformat()
                run.pause = _Open(
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
                    out.append(self._record(run, run.pause, end=event.ts))
                    run.pause = None
                run.boundary = event.ts
            case RunInterrupted() as interrupted:
                run.status = "waiting_answer"
                run.interrupts[interrupted.interrupt_id] = _Open(
                    span_id=span_id_for(run.run_id, f"interrupt:{interrupted.interrupt_id}"),
                    name="approval" if interrupted.reason == "approval" else "interrupt",
                    type=SpanType.SPAN,
                    start=event.ts,
                    attributes={
                        "agentdeck.interrupt.id": policy.identifier(interrupted.interrupt_id),
                        "agentdeck.interrupt.reason": str(interrupted.reason),
                    },
                    input=policy.text(interrupted.payload),
                )
            case AnswerRecorded() as answer:
                value = policy.text(answer.value)
                _remember(run, value)
                waiting = run.interrupts.pop(answer.interrupt_id, None)
                if waiting is None:
                    self._point(run, event, out, "answer", output=value)
                else:
                    attributes = {
                        **waiting.attributes,
                        "agentdeck.answer.origin": str(answer.origin),
                    }
                    out.append(
                        self._record(
                            run, waiting, end=event.ts, output=value, attributes=attributes
                        )
                    )
            case AnswerRefused() as refused:
                reason = policy.text(refused.reason)
                self._point(
                    run,
                    event,
                    out,
                    "answer refused",
                    level=SpanLevel.WARNING,
                    status_message=reason or "answer refused",
                    attributes={"agentdeck.interrupt.id": policy.identifier(refused.interrupt_id)},
                )
            case ApprovalDecided() as decided:
                attributes = {
                    "agentdeck.approval.approved": decided.approved,
                    "agentdeck.approval.origin": str(decided.origin),
                    "gen_ai.tool.call.id": policy.identifier(decided.call_id),
                }
                if policy.names:
                    attributes["gen_ai.tool.name"] = decided.tool
                self._point(
                    run,
                    event,
                    out,
                    "approval",
                    level=SpanLevel.DEFAULT if decided.approved else SpanLevel.WARNING,
                    output=policy.text(decided.message),
                    attributes=attributes,
                )
            case ControlRequested() as requested:
                self._point(
                    run,
                    event,
                    out,
                    "control requested",
                    attributes={"agentdeck.control.verb": str(requested.verb)},
                    output=policy.text(requested.reason),
                )
            case ControlObserved() as observed:
                self._point(
                    run,
                    event,
                    out,
                    "control observed",
                    attributes={
                        "agentdeck.control.verb": str(observed.verb),
                        "agentdeck.control.safe_point": str(observed.safe_point),
                    },
                )
            case MessageCompleted() as message:
                text = policy.text(message.text)
                if text is not None:
                    run.completion.append(text)
            case AgentChanged() as changed:
                attributes = {}
                if policy.names:
                    attributes["agentdeck.agent.next"] = changed.next
                    if changed.previous is not None:
                        attributes["agentdeck.agent.previous"] = changed.previous
                self._point(run, event, out, "handoff", attributes=attributes)
            case ToolCallStarted() as call:
                attributes = {"gen_ai.tool.call.id": policy.identifier(call.call_id)}
                if policy.names:
                    attributes["gen_ai.operation.name"] = "execute_tool"
                    attributes["gen_ai.tool.name"] = call.tool
                if call.args_error is not None:
                    attributes["agentdeck.tool.args_invalid"] = True
                run.tools[call.call_id] = _Open(
                    span_id=span_id_for(run.run_id, f"tool:{call.call_id}"),
                    name=policy.name(call.tool, "tool"),
                    type=SpanType.TOOL,
                    start=event.ts,
                    attributes=attributes,
                    input=policy.text(call.args),
                )
            case ToolCallCompleted() as done:
                self._tool_completed(run, event, done, out)
            case UsageReported() as reported:
                self._generation(run, event, reported, out)
            case StepCompleted() as step:
                self._step(
                    run,
                    event,
                    out,
                    policy.name(step.name, "step"),
                    {"agentdeck.step.index": step.index},
                    step.result,
                )
            case NodeUpdated() as node:
                attributes = {} if node.step is None else {"agentdeck.node.step": node.step}
                self._step(run, event, out, policy.name(node.node, "node"), attributes, node.update)
            case Report() as report:
                self._point(
                    run,
                    event,
                    out,
                    "report",
                    level=_REPORT_LEVELS.get(str(report.level), SpanLevel.DEFAULT),
                    attributes={"agentdeck.report.level": str(report.level)},
                    output=policy.text(
                        {"message": report.message, "fields": report.fields}
                        if report.fields
                        else report.message
                    ),
                )
            case Custom() as custom:
                self._point(
                    run,
                    event,
                    out,
                    policy.name(custom.name, "custom"),
                    output=policy.text(custom.data),
                )
            case PlanUpdated() as plan:
                self._point(
                    run,
                    event,
                    out,
                    "plan",
                    attributes={"agentdeck.plan.items": len(plan.items)},
                    output=policy.text([item.model_dump() for item in plan.items]),
                )
            case ArtifactCreated() as artifact:
                attributes = (
                    {} if artifact.size is None else {"agentdeck.artifact.size": artifact.size}
                )
                if policy.names:
                    attributes["agentdeck.artifact.media_type"] = artifact.media_type
                self._point(
                    run,
                    event,
                    out,
                    "artifact",
                    attributes=attributes,
                    output=policy.text(artifact.uri),
                )
            case InputAppended() as appended:
                text = policy.text(appended.input)
                _remember(run, text)
                self._point(run, event, out, "input", output=text)
            case _:
                # Deltas are carried by message.completed; kinds this release does not know
                # have no place in the tree yet.
                pass

    def _tool_completed(
        self, run: _Run, event: Event, done: ToolCallCompleted, out: list[Rendered]
    ) -> None:
        policy = self.policy
        started = run.tools.pop(done.call_id, None)
        if started is None:  # its start was rendered by another process, or never logged
            started = _Open(
                span_id=span_id_for(run.run_id, f"tool:{done.call_id}"),
                name=policy.name(done.tool, "tool"),
                type=SpanType.TOOL,
                start=event.ts,
                attributes={"gen_ai.tool.call.id": policy.identifier(done.call_id)},
            )
        result = policy.text(done.result_preview)
        attributes = {**started.attributes, "agentdeck.tool.result_size": done.result_size}
        level, message = SpanLevel.DEFAULT, None
        if done.error is not None:
            level = SpanLevel.ERROR
            message = policy.text(done.error) or "tool error"
            attributes["agentdeck.tool.error"] = True
        out.append(
            self._record(
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
            _remember(run, f"{done.tool}: {result}")
        run.boundary = event.ts

    def _generation(
        self, run: _Run, event: Event, reported: UsageReported, out: list[Rendered]
    ) -> None:
        policy = self.policy
        usage = reported.usage
        run.usage = run.usage + usage
        attributes: dict[str, AttributeValue] = _usage_attributes(usage)
        if policy.names:
            attributes["gen_ai.operation.name"] = "chat"
            if reported.model:
                attributes["gen_ai.request.model"] = reported.model
        span = _Open(
            span_id=span_id_for(run.run_id, f"generation:{event.seq}"),
            name=policy.name(reported.model, "generation"),
            type=SpanType.GENERATION,
            start=min(run.boundary, event.ts),
            attributes=attributes,
            input=policy.text("\n".join(run.prompt)) if run.prompt else None,
        )
        completion = policy.text("\n".join(run.completion)) if run.completion else None
        out.append(
            self._record(
                run,
                span,
                end=event.ts,
                output=completion,
                model=reported.model if policy.names else None,
                usage=usage,
            )
        )
        _remember(run, completion)
        run.completion.clear()
        run.boundary = event.ts

    def _step(
        self,
        run: _Run,
        event: Event,
        out: list[Rendered],
        name: str,
        attributes: dict[str, AttributeValue],
        result: object,
    ) -> None:
        span = _Open(
            span_id=span_id_for(run.run_id, f"step:{event.seq}"),
            name=name,
            type=SpanType.SPAN,
            start=min(run.boundary, event.ts),
            attributes=attributes,
        )
        out.append(self._record(run, span, end=event.ts, output=self.policy.text(result)))
        run.boundary = event.ts

    def _point(
        self,
        run: _Run,
        event: Event,
        out: list[Rendered],
        name: str,
        *,
        level: SpanLevel = SpanLevel.DEFAULT,
        status_message: str | None = None,
        output: str | None = None,
        attributes: Mapping[str, AttributeValue] = _EMPTY,
    ) -> None:
        span = _Open(
            span_id=span_id_for(run.run_id, f"event:{event.seq}"),
            name=name,
            type=SpanType.EVENT,
            start=event.ts,
            attributes=dict(attributes),
        )
        out.append(
            self._record(
                run, span, end=event.ts, level=level, status_message=status_message, output=output
            )
        )

    def _record(
        self,
        run: _Run,
        span: _Open,
        *,
        end: datetime,
        level: SpanLevel = SpanLevel.DEFAULT,
        status_message: str | None = None,
        input: str | None = None,
        output: str | None = None,
        model: str | None = None,
        usage: Usage | None = None,
        attributes: Mapping[str, AttributeValue] | None = None,
        parent_span_id: str | None = None,
        run_root: bool = False,
    ) -> SpanRecord:
        merged: dict[str, AttributeValue] = {
            "agentdeck.run.id": self.policy.identifier(run.run_id),
            **(attributes if attributes is not None else span.attributes),
        }
        if self.policy.names:
            merged["langfuse.observation.type"] = span.type.value
        is_root_or_continuation = span is run.root
        return SpanRecord(
            trace_id=run.trace_id,
            span_id=span.span_id,
            parent_span_id=parent_span_id if is_root_or_continuation else run.root.span_id,
            name=span.name,
            type=span.type,
            start=span.start,
            end=max(end, span.start),
            level=level,
            status_message=status_message,
            attributes=MappingProxyType(merged),
            model=model,
            usage=usage,
            input=input if input is not None else span.input,
            output=output,
            session_id=run.session_id,
            trace_name=run.trace_name,
            run_root=run_root,
        )


_KNOWN_KINDS = frozenset({"agent", "workflow", "graph"})

_REPORT_LEVELS = {
    ReportLevel.ERROR.value: SpanLevel.ERROR,
    ReportLevel.WARNING.value: SpanLevel.WARNING,
    ReportLevel.INFO.value: SpanLevel.DEFAULT,
    ReportLevel.RECORD.value: SpanLevel.DEBUG,
}


def _started(run: _Run) -> SpanStarted:
    return SpanStarted(
        trace_id=run.trace_id,
        span_id=run.root.span_id,
        parent_span_id=run.parent_span_id,
        name=run.root.name,
        type=run.root.type,
        start=run.root.start,
        session_id=run.session_id,
        trace_name=run.trace_name,
    )


def _remember(run: _Run, item: str | None) -> None:
    """Keep a captured conversation item for the next generation's prompt (the latest few)."""
    if item is not None:
        run.prompt.append(item)
        del run.prompt[:-PROMPT_ITEMS]


def _usage_attributes(usage: Usage) -> dict[str, AttributeValue]:
    return {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "agentdeck.usage.total_tokens": usage.total_tokens,
        "agentdeck.usage.requests": usage.requests,
    }
