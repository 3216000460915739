"""The append-batch check: may this batch be appended to a run as it stands?

Every store decides an append the same way, before it writes anything: the ``expect=`` set must
hold the run's recorded status, ``expect_seq=`` must be its last seq, and each event must be a
designed transition from the status the batch has reached so far. A store hands this module the
run's recorded status and last seq; the answer is the canonical refusal or nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from agentdeck.errors import RunStateError
from agentdeck.model.payloads import Payload
from agentdeck.model.status import is_transition_allowed, next_status
from agentdeck.storage.refusals import moved_on, not_as_expected, refuse_transition
from agentdeck.vocabulary import RunStatus

__all__ = ["batch_refusal", "check_batch"]


def batch_refusal(
    run_id: str,
    status: RunStatus | None,
    last_seq: int,
    payloads: Sequence[Payload],
    *,
    expect: Collection[RunStatus] | None = None,
    expect_seq: int | None = None,
) -> RunStateError | None:
    """Why ``payloads`` may not be appended to a run at ``status``/``last_seq``, or ``None``.

    Returned rather than raised for a store that decides on a state it remembered and confirms a
    refusal with its backend before raising it (the Redis store does).
    """
    if expect is not None and status not in expect:
        return not_as_expected(run_id, status, expect)
    if expect_seq is not None and last_seq != expect_seq:
        return moved_on(run_id, status, last_seq, expect_seq)
    reached = status
    for position, payload in enumerate(payloads):
        kind = payload.kind
        if not is_transition_allowed(reached, kind):
            return refuse_transition(run_id, status, reached, kind, position)
        reached = next_status(reached, kind)
    return None


def check_batch(
    run_id: str,
    status: RunStatus | None,
    last_seq: int,
    payloads: Sequence[Payload],
    *,
    expect: Collection[RunStatus] | None = None,
    expect_seq: int | None = None,
) -> None:
    """Raise the :func:`batch_refusal` of this batch, if it has one."""
    refusal = batch_refusal(
        run_id, status, last_seq, payloads, expect=expect, expect_seq=expect_seq
    )
    if refusal is not None:
        raise refusal
