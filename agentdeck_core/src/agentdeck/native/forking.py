"""Forking a native ``@workflow`` run: which part of its journal a new run reuses.

A body's operations (steps, ``invoke`` calls, sleeps) share one ordinal sequence, and each
completed one is a ``step.completed`` event with its ordinal as ``index``
(:mod:`agentdeck.native.journal`). A fork at ``at`` copies the journal entries ``0 .. at-1``
into the new run's log, so its replay hands those results back without executing their
bodies, and operation ``at`` onwards executes for real. A retry copies every entry the origin
completed. Questions the body asked are not copied: an ask before the fork point is asked again
in the new run (its answer belonged to the origin's moment).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentdeck.errors import InvalidInputError
from agentdeck.model.events import Event
from agentdeck.model.payloads import StepCompleted
from agentdeck.ports import ForkPlan

__all__ = ["plan_fork"]


def plan_fork(history: Sequence[Event], at: int | None) -> ForkPlan:
    """The plan for a fork of the run whose log is ``history`` from operation ``at`` (a retry
    when ``None``: every completed operation is reused, and ``at`` is the first that is not).

    ``at`` may be any ordinal up to the first the origin did not complete; beyond it the new
    run would have to be handed results nobody computed, so it is refused.
    """
    steps = {
        event.payload.index: event.payload
        for event in history
        if isinstance(event.payload, StepCompleted)
    }
    first_missing = next(i for i in range(len(steps) + 1) if i not in steps)
    if at is None:
        return ForkPlan(at=first_missing, seed=tuple(steps[i] for i in sorted(steps)))
    run_id = history[0].run_id if history else ""
    if at < 0 or at > first_missing:
        raise InvalidInputError(
            f"run '{run_id}' cannot be forked at operation {at}: its journal holds operations "
            f"0 to {first_missing - 1} in a row, so a fork starts at 0 to {first_missing}"
            if first_missing
            else f"run '{run_id}' cannot be forked at operation {at}: it completed no "
            "operation, so a fork starts at 0",
            name=run_id,
            field="at",
        )
    return ForkPlan(at=at, seed=tuple(steps[i] for i in range(at)))
