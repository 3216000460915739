"""The words of the run model: statuses, ending kinds, verbs, codes and reasons.

This is the bottom of the core: it imports nothing of AgentDeck, so :mod:`agentdeck.errors`
can carry a :class:`RunStatus` and every other layer can name an ending kind without reaching
for the event schema.

Each vocabulary is a ``StrEnum`` of the values this release produces. Event fields accept
``Enum | str`` (see :mod:`agentdeck.model.field_types`), so a value a newer minor adds still parses,
as a plain string, instead of failing the whole event; a value this release knows comes back as
the member (``ErrorCode.DEADLINE``), never as an equal plain string that an ``is`` check or a
``match`` on the member's type would miss.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "ENDING_KINDS",
    "LIFECYCLE_KINDS",
    "SUSPENDED",
    "SUSPENDING_KINDS",
    "TERMINAL",
    "TERMINAL_KINDS",
    "AnswerOrigin",
    "ControlVerb",
    "ErrorCode",
    "InterruptReason",
    "ReportLevel",
    "RunStatus",
    "SafePoint",
    "WaitKind",
]

# --------------------------------------------------------------------------- statuses


class RunStatus(StrEnum):
    """Where a run stands: always the fold of its own events
    (:func:`agentdeck.model.status.fold`)."""

    QUEUED = "queued"
    """Admitted to an execution that queues runs (``AGENTDECK_EXECUTION``), waiting for a
    worker to claim it; nothing plays it yet."""
    RUNNING = "running"
    PAUSED = "paused"
    WAITING_ANSWER = "waiting_answer"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def is_terminal(self) -> bool:
        return self in TERMINAL

    @property
    def is_suspended(self) -> bool:
        return self in SUSPENDED


TERMINAL = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED})
"""Statuses a run never leaves."""

SUSPENDED = frozenset({RunStatus.PAUSED, RunStatus.WAITING_ANSWER})
"""Statuses of a run that is stopped but not over: nothing plays it until it is continued."""

# --------------------------------------------------------------------------- ending kinds

TERMINAL_KINDS = frozenset({"run.completed", "run.failed", "run.cancelled"})
"""Kinds of a run's last event."""

SUSPENDING_KINDS = frozenset({"run.paused", "run.interrupted"})
"""Kinds that stop a play without ending the run."""

ENDING_KINDS = TERMINAL_KINDS | SUSPENDING_KINDS
"""Kinds that end a *play*: where ``deck.stream()``, ``run.events(follow=True)`` and a waiting
caller stop reading. One set, used everywhere a play's end is recognized."""

LIFECYCLE_KINDS = (
    frozenset({"run.started", "run.resumed", "run.queued", "run.claimed"}) | ENDING_KINDS
)
"""Kinds that move a run's status."""

# --------------------------------------------------------------------------- codes and reasons


class ErrorCode(StrEnum):
    """Why a run failed (``run.failed.error_code``)."""

    ENGINE_ERROR = "engine_error"
    TOOL_ERROR = "tool_error"
    BUDGET_EXCEEDED = "budget_exceeded"
    DEADLINE = "deadline"
    CANCELLED_HARD = "cancelled_hard"
    LEASE_EXPIRED = "lease_expired"
    NOT_ADMITTED = "not_admitted"
    """The execution that queues runs refused or could not be reached to take it."""


class ControlVerb(StrEnum):
    """What a control request asks for."""

    CANCEL = "cancel"
    PAUSE = "pause"
    RESUME = "resume"


class SafePoint(StrEnum):
    """Where an engine acted on a control request."""

    STREAM_ITEM = "stream_item"
    TOOL_DISPATCH = "tool_dispatch"
    NODE_BOUNDARY = "node_boundary"
    WORKFLOW_SAFEPOINT = "workflow_safepoint"
    SUSPENDED = "suspended"
    """Acted on while the run was parked: no engine needed to reach a safe point."""


class InterruptReason(StrEnum):
    """Why a run is waiting for an answer."""

    HUMAN = "human"
    APPROVAL = "approval"


class AnswerOrigin(StrEnum):
    """Who decided: a person answering, or the application's own policy."""

    HUMAN = "human"
    POLICY = "policy"


class ReportLevel(StrEnum):
    """How much a ``report`` matters; ``record`` is data kept for later, not a message."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"
    RECORD = "record"


class WaitKind(StrEnum):
    """What a paused run waits on (``run.paused.waiting_on``), when it waits on something.

    A pause with no ``waiting_on`` is an operator's (or a closing deck's): only ``resume()``
    continues it. The runtime continues the others itself, when what they wait on happens.
    """

    CHILD_RUNS = "child_runs"
    """Child runs it started; continued when one of ``waiting_for`` ends."""
    TIMER = "timer"
    """A durable timer (``wake_at``); continued by the sweep once it is due."""
