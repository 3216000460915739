"""Run status as a pure fold of the run's own events.

Nothing stores a status as a fact of its own: every store, every process and the property tests
run :func:`fold` (or its single step :func:`apply`) over the same events and get the same answer.
A store may keep the folded result in an index for listing, but it computes it with this module.

The transition table (:data:`TRANSITIONS`) says which lifecycle edge is designed; a store refuses
an append that would take an edge not in it, and the fold ignores such an event should one ever
be read (terminal states absorb everything). There is no state from which only ``cancel``
escapes: a paused run resumes, a waiting run is answered, and a pending pause on a waiting run is
lifted by ``resume()``.

The operation table (:data:`OPERATIONS`) says what each public call does in each state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from agentdeck.model.events import Event
from agentdeck.model.payloads import AnswerRecorded, RunInterrupted, RunPaused
from agentdeck.vocabulary import TERMINAL, RunStatus

__all__ = [
    "OPERATIONS",
    "TRANSITIONS",
    "OpenInterrupt",
    "Operation",
    "Rule",
    "RunState",
    "Verdict",
    "apply",
    "fold",
    "fold_status",
    "is_transition_allowed",
    "next_status",
    "operation_verdict",
]


_KIND_TO_STATUS: Mapping[str, RunStatus] = MappingProxyType(
    {
        "run.started": RunStatus.RUNNING,
        "run.resumed": RunStatus.RUNNING,
        "run.queued": RunStatus.QUEUED,
        "run.claimed": RunStatus.RUNNING,
        "run.paused": RunStatus.PAUSED,
        "run.interrupted": RunStatus.WAITING_ANSWER,
        "run.completed": RunStatus.COMPLETED,
        "run.failed": RunStatus.FAILED,
        "run.cancelled": RunStatus.CANCELLED,
    }
)

TRANSITIONS: Mapping[RunStatus | None, frozenset[str]] = MappingProxyType(
    {
        None: frozenset({"run.started"}),
        # A run admitted to an execution that queues is queued right after it is opened, and
        # leaves the queue when a worker claims it (or it is cancelled, or fails to be handed
        # over) -- only ever once: a queued run's next status is never queued again.
        RunStatus.QUEUED: frozenset({"run.claimed", "run.cancelled", "run.failed"}),
        RunStatus.RUNNING: frozenset(
            {
                "run.queued",
                "run.paused",
                "run.interrupted",
                "run.completed",
                "run.failed",
                "run.cancelled",
            }
        ),
        RunStatus.PAUSED: frozenset({"run.resumed", "run.cancelled"}),
        # A second question while one is open keeps the run waiting: several may be open at once.
        RunStatus.WAITING_ANSWER: frozenset({"run.resumed", "run.cancelled", "run.interrupted"}),
        RunStatus.COMPLETED: frozenset(),
        RunStatus.FAILED: frozenset(),
        RunStatus.CANCELLED: frozenset(),
    }
)
"""Lifecycle kinds each status accepts. Anything else is refused by stores, ignored by the fold."""


# The tables above as plain dicts, for the per-event paths (a read-only view costs a little more
# per lookup); the public names stay read-only.
_STATUS_AFTER: dict[str, RunStatus] = dict(_KIND_TO_STATUS)
_EDGES: dict[RunStatus | None, frozenset[str]] = dict(TRANSITIONS)

FOLDED_KINDS = frozenset({*_KIND_TO_STATUS, "answer.recorded"})
"""Kinds that change more than a run's last seq and time when folded: its lifecycle edges and
answers. Every other event leaves status, open questions and timer as they were."""


def next_status(status: RunStatus | None, kind: str) -> RunStatus | None:
    """The status after an event of ``kind``; unchanged for non-lifecycle or refused kinds."""
    target = _STATUS_AFTER.get(kind)
    if target is None or kind not in _EDGES[status]:
        return status
    return target


def is_transition_allowed(status: RunStatus | None, kind: str) -> bool:
    """Whether a store may append an event of ``kind`` to a run in ``status``.

    Non-lifecycle kinds are allowed on a live run and refused once it is terminal (nothing is
    appended after a run's last word) or before it has started.
    """
    if kind in _STATUS_AFTER:
        return kind in _EDGES[status]
    return status is not None and status not in TERMINAL


@dataclass(frozen=True, slots=True)
class OpenInterrupt:
    """One question a run is waiting on, as :meth:`Run.pending` reports it."""

    interrupt_id: str
    seq: int
    payload: Any
    reason: str
    expected: Any = None


@dataclass(frozen=True, slots=True)
class RunState:
    """Everything folded from a run's events that the runtime, stores and handles need."""

    status: RunStatus | None = None
    last_seq: int = -1
    last_ts: datetime | None = None
    interrupts: tuple[OpenInterrupt, ...] = field(default_factory=tuple)
    wake_at: datetime | None = None

    @property
    def pending(self) -> OpenInterrupt | None:
        """The oldest open interrupt, if the run is waiting on one."""
        return self.interrupts[0] if self.interrupts else None


def apply(state: RunState, event: Event) -> RunState:
    """Fold one event into ``state``. Pure; events must arrive in seq order.

    Interrupts are open only while a run waits: an answer closes its own, and any lifecycle edge
    other than another question closes the rest (an engine that resumes with questions still
    unanswered announces them again).
    """
    kind, payload = event.kind, event.payload
    status, interrupts, wake_at = state.status, state.interrupts, state.wake_at
    target = _STATUS_AFTER.get(kind)
    if target is not None:
        if kind in _EDGES[status]:
            status, wake_at = target, None
            if isinstance(payload, RunInterrupted):
                if all(i.interrupt_id != payload.interrupt_id for i in interrupts):
                    interrupts = (
                        *interrupts,
                        OpenInterrupt(
                            interrupt_id=payload.interrupt_id,
                            seq=event.seq,
                            payload=payload.payload,
                            reason=str(payload.reason),
                            expected=payload.expected,
                        ),
                    )
            else:
                interrupts = ()
                if isinstance(payload, RunPaused):
                    wake_at = payload.wake_at
    elif isinstance(payload, AnswerRecorded) and status is RunStatus.WAITING_ANSWER:
        interrupts = tuple(i for i in interrupts if i.interrupt_id != payload.interrupt_id)
    # Positional: every event of every run is folded here, and keywords cost a little each.
    return RunState(status, event.seq, event.ts, interrupts, wake_at)


def fold(events: Iterable[Event], state: RunState | None = None) -> RunState:
    """Fold a run's events (in seq order), optionally continuing from an earlier ``state``."""
    current = state if state is not None else RunState()
    for event in events:
        current = apply(current, event)
    return current


# --------------------------------------------------------------------------- operations


class Operation(StrEnum):
    """The public calls whose legality depends on a run's status."""

    NEW_RUN_ON_SESSION = "new_run_on_session"
    ANSWER = "answer"
    RESUME = "resume"
    PAUSE = "pause"
    CANCEL = "cancel"


class Verdict(StrEnum):
    LEGAL = "legal"
    NOOP = "noop"
    """Does nothing and says nothing: the call's purpose already holds."""
    REFUSED = "refused"
    """Raises (``RunStateError``, or ``SessionBusyError`` for a new run on the session)."""


@dataclass(frozen=True, slots=True)
class Rule:
    verdict: Verdict
    hint: str | None = None
    """The call that is right instead, for a refusal that has one."""
    note: str | None = None


_TERMINAL_ROW: Mapping[Operation, Rule] = MappingProxyType(
    {
        Operation.NEW_RUN_ON_SESSION: Rule(Verdict.LEGAL),
        Operation.ANSWER: Rule(Verdict.NOOP),
        Operation.RESUME: Rule(Verdict.NOOP),
        Operation.PAUSE: Rule(Verdict.NOOP),
        Operation.CANCEL: Rule(Verdict.NOOP),
    }
)

_RUNNING_ROW: Mapping[Operation, Rule] = MappingProxyType(
    {
        Operation.NEW_RUN_ON_SESSION: Rule(Verdict.REFUSED, note="the session is busy"),
        Operation.ANSWER: Rule(
            Verdict.REFUSED, note="nothing is waiting for an answer while it runs"
        ),
        Operation.RESUME: Rule(Verdict.NOOP),
        Operation.PAUSE: Rule(Verdict.LEGAL, note="acted on at the next safe point"),
        Operation.CANCEL: Rule(Verdict.LEGAL, note="acted on at the next safe point"),
    }
)

_QUEUED_ROW: Mapping[Operation, Rule] = MappingProxyType(
    {
        Operation.NEW_RUN_ON_SESSION: Rule(Verdict.REFUSED, note="the session is busy"),
        Operation.ANSWER: Rule(
            Verdict.REFUSED, note="nothing is waiting for an answer before a worker plays it"
        ),
        Operation.RESUME: Rule(Verdict.NOOP),
        Operation.PAUSE: Rule(Verdict.LEGAL, note="acted on at its first safe point"),
        Operation.CANCEL: Rule(Verdict.LEGAL, note="ends it at once: no worker plays it"),
    }
)

_PAUSED_ROW: Mapping[Operation, Rule] = MappingProxyType(
    {
        Operation.NEW_RUN_ON_SESSION: Rule(Verdict.REFUSED, hint="resume"),
        Operation.ANSWER: Rule(
            Verdict.REFUSED, hint="resume", note="a paused run has no open question"
        ),
        Operation.RESUME: Rule(Verdict.LEGAL),
        Operation.PAUSE: Rule(Verdict.NOOP),
        Operation.CANCEL: Rule(Verdict.LEGAL, note="ends it at once"),
    }
)

_WAITING_ROW: Mapping[Operation, Rule] = MappingProxyType(
    {
        Operation.NEW_RUN_ON_SESSION: Rule(Verdict.REFUSED, hint="answer"),
        Operation.ANSWER: Rule(Verdict.LEGAL),
        Operation.RESUME: Rule(
            Verdict.REFUSED,
            hint="answer",
            note="a waiting run continues when answered; resume() only lifts a pending pause",
        ),
        Operation.PAUSE: Rule(
            Verdict.LEGAL, note="recorded; vetoes answers until resume() lifts it"
        ),
        Operation.CANCEL: Rule(Verdict.LEGAL, note="ends it at once"),
    }
)

OPERATIONS: Mapping[RunStatus, Mapping[Operation, Rule]] = MappingProxyType(
    {
        RunStatus.QUEUED: _QUEUED_ROW,
        RunStatus.RUNNING: _RUNNING_ROW,
        RunStatus.PAUSED: _PAUSED_ROW,
        RunStatus.WAITING_ANSWER: _WAITING_ROW,
        RunStatus.COMPLETED: _TERMINAL_ROW,
        RunStatus.FAILED: _TERMINAL_ROW,
        RunStatus.CANCELLED: _TERMINAL_ROW,
    }
)
"""What each call does in each status, as ``../reference-behaviour.md`` tabulates it.

Read-only all the way down: every row is a mapping proxy, so no caller can edit the table.
"""


def operation_verdict(status: RunStatus, operation: Operation) -> Rule:
    """Look up the rule for ``operation`` on a run in ``status``."""
    return OPERATIONS[status][operation]


def fold_status(events: Iterable[Event]) -> RunStatus | None:
    """Shorthand: only the status of :func:`fold`."""
    return fold(events).status
