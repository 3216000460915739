"""The canonical refusals of a store: one wording for every backend.

A caller (the runtime, a CLI user, a test) reads the same message and the same error fields
whichever store refused, so the wording lives here once instead of in every store. Each function
builds the error and returns it; the store raises it (or, deciding optimistically, keeps it).
"""

from __future__ import annotations

from collections.abc import Collection

from agentdeck.errors import NotFoundError, RunStateError
from agentdeck.model.status import is_transition_allowed
from agentdeck.vocabulary import TERMINAL, RunStatus

__all__ = [
    "accepting",
    "moved_on",
    "no_such_run",
    "not_as_expected",
    "refuse_transition",
    "run_id_taken",
]


def accepting(kind: str) -> list[RunStatus]:
    """The statuses in which an event of ``kind`` may be appended (the refusal's ``accepted``)."""
    return [status for status in RunStatus if is_transition_allowed(status, kind)]


def _shown(status: RunStatus | None) -> str:
    return status.value if status is not None else "not started"


def no_such_run(run_id: str) -> NotFoundError:
    """An append (or another write) named a run this store does not hold."""
    return NotFoundError(
        f"run '{run_id}' is not in this store (never opened here, or pruned)",
        what="run",
        name=run_id,
    )


def run_id_taken(run_id: str, status: RunStatus | None) -> RunStateError:
    """``open_run`` with the id of a run the store already holds (``status``: that run's)."""
    return RunStateError(
        f"run id '{run_id}' is already taken; mint a fresh id for every run",
        run_id=run_id,
        status=status,
    )


def not_as_expected(
    run_id: str, status: RunStatus | None, expect: Collection[RunStatus]
) -> RunStateError:
    """An append whose ``expect=`` set does not hold the run's recorded ``status``."""
    wanted = " or ".join(sorted(s.value for s in expect)) or "any status"
    return RunStateError(
        f"run '{run_id}' is {_shown(status)}, not {wanted} as the append expected; "
        "nothing was recorded",
        run_id=run_id,
        status=status,
        accepted=sorted(expect),
    )


def moved_on(
    run_id: str, status: RunStatus | None, last_seq: int, expect_seq: int
) -> RunStateError:
    """An append whose ``expect_seq=`` is not the run's last seq (another writer went first)."""
    return RunStateError(
        f"run '{run_id}' has moved on: its last seq is {last_seq}, not {expect_seq} as the "
        "append expected; nothing was recorded",
        run_id=run_id,
        status=status,
    )


def refuse_transition(
    run_id: str, status: RunStatus | None, at: RunStatus | None, kind: str, position: int
) -> RunStateError:
    """The refusal of ``kind`` at ``position`` of a batch, reaching it in status ``at``.

    ``status`` (the error's field) is the run's recorded status, which the refusal leaves as it
    was; the message also names the status the batch itself would have reached.
    """
    within = (
        f" (the batch's earlier events would leave it {at.value})"
        if at is not None and at is not status
        else ""
    )
    shown = _shown(status)
    if at is not None and at in TERMINAL:
        message = (
            f"run '{run_id}' is {shown}{within}: nothing is appended after a terminal event "
            f"(refused '{kind}' at position {position} of the batch); nothing was recorded"
        )
    else:
        allowed = ", ".join(s.value for s in accepting(kind)) or "nowhere"
        message = (
            f"run '{run_id}' is {shown}{within}: '{kind}' is not a designed transition from "
            f"there (accepted from: {allowed}); nothing was recorded"
        )
    return RunStateError(message, run_id=run_id, status=status, accepted=accepting(kind))
