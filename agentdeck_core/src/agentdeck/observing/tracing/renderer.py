"""The trace renderer: one process's event stream in, finished span records out, run by run.

:class:`TraceRenderer` keeps the table of open runs: it places each run that starts in its trace
(a nested run under its parent's root; a run started under a caller's W3C trace context under the
caller's span, in the caller's trace), continues under the root another process exported a run
first seen mid-way, hands every later event to :func:`~.event_spans.apply_event`, and finishes a
run's root when the run ends — or, marked unfinished, when the stream ends first or the table is
full.

Where a run belongs is written in its ``run.started``. A process that meets a run mid-way (it
continues a run another process started) can still place it exactly: :meth:`TraceRenderer.unplaced`
names the run whose start it lacks, and :meth:`TraceRenderer.adopt` takes that start, read from
the log; :func:`place` does both for an exporter with a way to read a run's first event. Without
it, a run met mid-way is taken to be in the trace its own id derives.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from agentdeck.model.events import Event
from agentdeck.model.payloads import RunStarted, Usage
from agentdeck.observing.capture import ContentPolicy
from agentdeck.observing.tracing.attributes import (
    GEN_AI_AGENT_NAME,
    GEN_AI_OPERATION_NAME,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_WORKFLOW_NAME,
    INVOCABLE_KIND,
    NAMESPACE,
    OPERATION_INVOKE_AGENT,
    OPERATION_INVOKE_WORKFLOW,
    RUN_CONTINUED,
    RUN_ID,
    RUN_PARENT_ID,
    RUN_STATUS,
    SPAN_UNFINISHED,
    provider_of,
    usage_attributes,
)
from agentdeck.observing.tracing.context import trace_parent_of
from agentdeck.observing.tracing.event_spans import RunEnding, apply_event
from agentdeck.observing.tracing.ids import span_id_for, trace_id_for
from agentdeck.observing.tracing.run_spans import (
    OpenSpan,
    RunSpans,
    announce_root,
    close_children,
    record,
    remember,
    text_message,
)
from agentdeck.observing.tracing.spans import AttributeValue, ChatMessage, Rendered, SpanType

__all__ = ["ReadStart", "TraceRenderer", "place"]

_KNOWN_KINDS = frozenset({"agent", "workflow", "graph"})
_MAX_ADOPTED = 10_000
_MAX_DEPTH = 16

ReadStart = Callable[[str], Awaitable[Event | None]]
"""Reads a run's ``run.started`` event from the log (``None`` when the run is unknown)."""


@dataclass(frozen=True, slots=True)
class _Placement:
    """Where a run whose start another process rendered belongs, from its ``run.started``."""

    parent_run_id: str | None
    trace_id: str | None
    """The caller's trace, when the run was started under a trace context."""
    trace_state: str | None
    invocable_kind: str


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
        self._runs: dict[str, RunSpans] = {}
        self._adopted: dict[str, _Placement | None] = {}
        """Runs placed from a start read from the log (``None``: the log had none)."""

    @property
    def open_runs(self) -> int:
        """How many runs have started (here) and not yet ended."""
        return len(self._runs)

    # ----------------------------------------------------------------------------- placing

    def unplaced(self, event: Event) -> str | None:
        """The run whose ``run.started`` this renderer needs, and has not seen, to place
        ``event`` exactly: its own run met mid-way, or an ancestor started elsewhere."""
        if event.kind == "run.started":
            run_id = event.parent_run_id
        elif event.run_id in self._runs:
            return None
        else:
            run_id = event.run_id
        for _ in range(_MAX_DEPTH):
            if run_id is None or run_id in self._runs:
                return None
            if run_id not in self._adopted:
                return run_id
            placement = self._adopted[run_id]
            if placement is None or placement.trace_id is not None:
                return None
            run_id = placement.parent_run_id
        return None

    def adopt(self, run_id: str, started: Event | None) -> None:
        """Take ``run_id``'s ``run.started`` (as read from the log; ``None``: it has none) to
        place its events when they arrive without it."""
        payload = started.payload if started is not None else None
        if started is None or not isinstance(payload, RunStarted):
            self._adopted[run_id] = None
        else:
            remote = trace_parent_of(payload.trace_context)
            self._adopted[run_id] = _Placement(
                parent_run_id=started.parent_run_id,
                trace_id=remote.trace_id if remote is not None else None,
                trace_state=remote.trace_state if remote is not None else None,
                invocable_kind=payload.invocable_kind,
            )
        while len(self._adopted) > _MAX_ADOPTED:
            del self._adopted[next(iter(self._adopted))]

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
        ending = apply_event(self.policy, run, event, out)
        if ending is not None:
            self._end_run(run, event, ending, out)
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
        attributes[INVOCABLE_KIND] = started.invocable_kind
        attributes[GEN_AI_OPERATION_NAME] = (
            OPERATION_INVOKE_AGENT if is_agent else OPERATION_INVOKE_WORKFLOW
        )
        if is_agent:
            attributes[GEN_AI_PROVIDER_NAME] = provider_of(started.invocable_kind)
        if policy.names:
            attributes[GEN_AI_AGENT_NAME if is_agent else GEN_AI_WORKFLOW_NAME] = name
        root = OpenSpan(
            span_id=span_id_for(event.run_id, "run"),
            name=name,
            type=SpanType.AGENT if is_agent else SpanType.CHAIN,
            start=event.ts,
            attributes=attributes,
            input=policy.text(started.input),
        )
        remote = trace_parent_of(started.trace_context) if event.parent_run_id is None else None
        trace_id, trace_state = self._trace_of(event, parent)
        run = RunSpans(
            run_id=event.run_id,
            trace_id=remote.trace_id if remote is not None else trace_id,
            parent_span_id=(
                remote.span_id if remote is not None else self._parent_span_of(event, parent)
            ),
            trace_name=parent.trace_name if parent is not None else name,
            session_id=self._session_of(event, parent),
            root=root,
            continued=False,
            boundary=event.ts,
            last_ts=event.ts,
            provider=provider_of(started.invocable_kind),
            trace_state=remote.trace_state if remote is not None else trace_state,
        )
        remember(run, root.input)
        self._track(run, out)
        out.append(announce_root(run))

    def _continue(self, event: Event, out: list[Rendered]) -> RunSpans:
        """A run first seen mid-way: continue under the root another process rendered."""
        parent = self._runs.get(event.parent_run_id) if event.parent_run_id else None
        continuation = OpenSpan(
            span_id=span_id_for(event.run_id, f"continued:{event.seq}"),
            name=self.policy.name(event.origin, "run"),
            type=SpanType.SPAN,
            start=event.ts,
            attributes={**self._run_attributes(event), RUN_CONTINUED: True},
        )
        placement = self._adopted.get(event.run_id)
        trace_id, trace_state = self._trace_of(event, parent)
        run = RunSpans(
            run_id=event.run_id,
            trace_id=trace_id,
            parent_span_id=span_id_for(event.run_id, "run"),
            trace_name=parent.trace_name if parent is not None else continuation.name,
            session_id=self._session_of(event, parent),
            root=continuation,
            continued=True,
            boundary=event.ts,
            last_ts=event.ts,
            provider=provider_of(placement.invocable_kind if placement else None),
            trace_state=trace_state,
        )
        self._track(run, out)
        out.append(announce_root(run))
        return run

    def _track(self, run: RunSpans, out: list[Rendered]) -> None:
        self._runs[run.run_id] = run
        while len(self._runs) > self._max_open_runs:
            oldest = next(iter(self._runs.values()))
            self._abandon(oldest, oldest.last_ts, out)

    def _trace_of(self, event: Event, parent: RunSpans | None) -> tuple[str, str | None]:
        """The trace (and its ``tracestate``) ``event``'s run belongs to, when it is not a
        top-level run started under a trace context here."""
        if parent is not None:
            return parent.trace_id, parent.trace_state
        # Climb what the log told us (adopted starts). A run nothing is known about is taken to
        # be top-level: the only id one can know without reading the store.
        run_id = event.run_id if event.kind != "run.started" else event.parent_run_id
        top = event.parent_run_id or event.run_id
        for _ in range(_MAX_DEPTH):
            if run_id is None:
                break
            known = self._runs.get(run_id) if run_id != event.run_id else None
            if known is not None:
                return known.trace_id, known.trace_state
            placement = self._adopted.get(run_id)
            if placement is None:
                break
            if placement.trace_id is not None:
                return placement.trace_id, placement.trace_state
            top = placement.parent_run_id or run_id
            run_id = placement.parent_run_id
        return trace_id_for(top), None

    def _parent_span_of(self, event: Event, parent: RunSpans | None) -> str | None:
        if parent is not None:
            return parent.root.span_id
        return span_id_for(event.parent_run_id, "run") if event.parent_run_id else None

    def _session_of(self, event: Event, parent: RunSpans | None) -> str | None:
        if event.session_id is not None and self.policy.names:
            return self.policy.identifier(event.session_id)
        return parent.session_id if parent is not None else None

    def _run_attributes(self, event: Event) -> dict[str, AttributeValue]:
        policy = self.policy
        attributes: dict[str, AttributeValue] = {RUN_ID: policy.identifier(event.run_id)}
        if event.parent_run_id:
            attributes[RUN_PARENT_ID] = policy.identifier(event.parent_run_id)
        if policy.names and event.namespace is not None:
            attributes[NAMESPACE] = policy.identifier(event.namespace)
        return attributes

    def _end_run(self, run: RunSpans, event: Event, ending: RunEnding, out: list[Rendered]) -> None:
        close_children(self.policy, run, event.ts, out)
        usage = ending.usage
        total = usage if usage is not None and usage != Usage() else run.usage
        attributes = {**run.root.attributes, **ending.extra, RUN_STATUS: ending.status}
        attributes.update(usage_attributes(total))
        answer = None
        if ending.output is not None and run.root.type is SpanType.AGENT:
            answer = (text_message("assistant", ending.output, finish_reason="stop"),)
        out.append(
            record(
                self.policy,
                run,
                run.root,
                end=event.ts,
                level=ending.level,
                status_message=ending.status_message,
                output=ending.output,
                usage=total,
                attributes=attributes,
                parent_span_id=run.parent_span_id,
                run_root=not run.continued,
                input_messages=_turn_input(run),
                output_messages=answer,
            )
        )
        del self._runs[run.run_id]

    def _abandon(self, run: RunSpans, end: datetime, out: list[Rendered]) -> None:
        """End a run's open spans without an outcome (the stream ended first)."""
        close_children(self.policy, run, end, out)
        attributes = {
            **run.root.attributes,
            RUN_STATUS: run.status,
            SPAN_UNFINISHED: True,
            **usage_attributes(run.usage),
        }
        out.append(
            record(
                self.policy,
                run,
                run.root,
                end=end,
                usage=run.usage,
                attributes=attributes,
                parent_span_id=run.parent_span_id,
                run_root=not run.continued,
                input_messages=_turn_input(run),
            )
        )
        del self._runs[run.run_id]


def _turn_input(run: RunSpans) -> tuple[ChatMessage, ...] | None:
    """An agent turn's input as the user's message (content capture only)."""
    if run.root.type is not SpanType.AGENT or run.root.input is None:
        return None
    return (text_message("user", run.root.input),)


async def place(renderer: TraceRenderer, event: Event, read_start: ReadStart) -> None:
    """Read from the log, with ``read_start``, every ``run.started`` ``renderer`` lacks to place
    ``event`` exactly (a run met mid-way, its ancestors): a few reads once per such run, none
    for a run this process saw start."""
    for _ in range(_MAX_DEPTH):
        run_id = renderer.unplaced(event)
        if run_id is None:
            return
        renderer.adopt(run_id, await read_start(run_id))
