"""W3C trace context: the ``traceparent`` (and ``tracestate``) a run was started under.

A caller that is itself traced -- an HTTP request carrying ``traceparent``, a Python caller with
its own OpenTelemetry context -- hands its trace context to ``deck.runs.start(...,
trace_context={"traceparent": ..., "tracestate": ...})``. The run records it in its
``run.started`` event, so every process that renders the run's trace from its events places the
run's root under the caller's span, in the caller's trace, the same way.

:func:`trace_context` checks what a caller passes (a malformed ``traceparent`` is an
:class:`~agentdeck.errors.InvalidInputError`); :func:`parse_traceparent` reads a header leniently
for a binding, which per the W3C recommendation ignores a header it cannot parse rather than
failing the request. Nothing here imports a telemetry SDK.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from agentdeck.errors import InvalidInputError

__all__ = [
    "TRACEPARENT",
    "TRACESTATE",
    "TraceParent",
    "parse_traceparent",
    "trace_context",
    "trace_parent_of",
]

TRACEPARENT = "traceparent"
TRACESTATE = "tracestate"
MAX_TRACESTATE = 512
"""The longest ``tracestate`` kept (W3C: 32 members; vendors keep theirs short)."""

_TRACEPARENT = re.compile(
    r"^(?P<version>[0-9a-f]{2})-(?P<trace_id>[0-9a-f]{32})-(?P<span_id>[0-9a-f]{16})"
    r"-(?P<flags>[0-9a-f]{2})(?P<rest>-.*)?$"
)


@dataclass(frozen=True, slots=True)
class TraceParent:
    """A parsed ``traceparent``: the caller's trace, its span, and whether it was sampled."""

    trace_id: str
    """32 lower-case hex digits."""
    span_id: str
    """16 lower-case hex digits: the span the run's root goes under."""
    sampled: bool
    trace_state: str | None = None

    def header(self) -> str:
        """The ``traceparent`` header value (version ``00``)."""
        return f"00-{self.trace_id}-{self.span_id}-{'01' if self.sampled else '00'}"


def parse_traceparent(value: str | None, trace_state: str | None = None) -> TraceParent | None:
    """``value`` as a :class:`TraceParent`, or ``None`` when it is absent or not a valid W3C
    ``traceparent`` (all-zero ids, version ``ff`` and, for version ``00``, trailing data are
    invalid; a later version's extra fields are ignored, as the recommendation says)."""
    if not isinstance(value, str):
        return None
    match = _TRACEPARENT.match(value.strip().lower())
    if match is None:
        return None
    version, rest = match["version"], match["rest"]
    if version == "ff" or (version == "00" and rest):
        return None
    trace_id, span_id = match["trace_id"], match["span_id"]
    if not trace_id.strip("0") or not span_id.strip("0"):
        return None
    state = trace_state.strip() if isinstance(trace_state, str) else None
    return TraceParent(
        trace_id=trace_id,
        span_id=span_id,
        sampled=bool(int(match["flags"], 16) & 1),
        trace_state=state[:MAX_TRACESTATE] if state else None,
    )


def trace_context(carrier: Mapping[str, str] | None) -> dict[str, str] | None:
    """The trace context to record from what a caller passed: ``traceparent`` (required) and
    ``tracestate`` (optional), other keys ignored; ``None`` for nothing.

    :raises InvalidInputError: when a ``traceparent`` is given but is not a valid one.
    """
    if not carrier:
        return None
    if not isinstance(carrier, Mapping):
        raise InvalidInputError(
            "trace_context takes a mapping of W3C trace-context headers "
            '({"traceparent": "00-<trace id>-<span id>-<flags>", "tracestate": ...})',
            field="trace_context",
        )
    lowered = {str(key).lower(): value for key, value in carrier.items()}
    header = lowered.get(TRACEPARENT)
    if header is None:
        return None
    parent = parse_traceparent(header, lowered.get(TRACESTATE))
    if parent is None:
        raise InvalidInputError(
            f"trace_context traceparent {str(header)[:80]!r} is not a W3C traceparent "
            "(00-<32 hex trace id>-<16 hex span id>-<2 hex flags>, ids not all zero)",
            field="trace_context.traceparent",
        )
    recorded = {TRACEPARENT: parent.header()}
    if parent.trace_state is not None:
        recorded[TRACESTATE] = parent.trace_state
    return recorded


def trace_parent_of(recorded: Mapping[str, str] | None) -> TraceParent | None:
    """The :class:`TraceParent` a ``run.started`` recorded (``None``: none, or unreadable)."""
    if not recorded:
        return None
    return parse_traceparent(recorded.get(TRACEPARENT), recorded.get(TRACESTATE))
