"""Status fold bookkeeping: the events a batch records and the run state it leaves.

A store assigns each event its seq (the run's last plus one, gapless) and one time for the whole
batch, never earlier than the run's previous event whatever the clock does, and indexes the
status :func:`agentdeck.model.status.apply` folds from them. Those rules are the same for every
store, so they are written once here; the store keeps only where it writes the result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from agentdeck.model.clock import utc
from agentdeck.model.events import Event
from agentdeck.model.payloads import Payload
from agentdeck.model.status import FOLDED_KINDS, RunState, apply
from agentdeck.ports import NewRun

__all__ = ["EventRecorder", "append_time", "compose_batch", "started_event"]

EventRecorder = Callable[
    [Payload, int, str, datetime, str | None, str | None, str | None, str], Event
]
"""How an envelope is built, positionally: ``(payload, seq, run_id, ts, session_id, namespace,
parent_run_id, origin)``. The default validates (:meth:`Event.record`); a store whose parts are
all its own may pass :func:`agentdeck.model.events.record_unchecked`."""


def _record(
    payload: Payload,
    seq: int,
    run_id: str,
    ts: datetime,
    session_id: str | None,
    namespace: str | None,
    parent_run_id: str | None,
    origin: str,
) -> Event:
    return Event.record(
        payload,
        seq=seq,
        run_id=run_id,
        ts=ts,
        session_id=session_id,
        namespace=namespace,
        parent_run_id=parent_run_id,
        origin=origin,
    )


def append_time(now: datetime, last_ts: datetime | None) -> datetime:
    """The time of a batch appended at ``now`` (the store's clock) to a run last written at
    ``last_ts``: ``now`` in UTC, but a run's times never go backwards."""
    ts = utc(now)
    return last_ts if last_ts is not None and ts < last_ts else ts


def started_event(new: NewRun, ts: datetime, *, record: EventRecorder = _record) -> Event:
    """The ``run.started`` event (seq 0) that ``open_run`` records for ``new`` at ``ts``.

    Its ``origin`` is the name the caller addressed (``new.started.name``).
    """
    started = new.started
    return record(
        started,
        0,
        new.run_id,
        utc(ts),
        new.session_id,
        new.namespace,
        new.parent_run_id,
        started.name,
    )


def compose_batch(
    state: RunState,
    payloads: Sequence[Payload],
    *,
    run_id: str,
    ts: datetime,
    session_id: str | None,
    namespace: str | None,
    parent_run_id: str | None,
    origin: str,
    record: EventRecorder = _record,
) -> tuple[list[Event], RunState]:
    """The events ``payloads`` record after ``state`` at ``ts``, and the state they fold to.

    ``ts`` is the batch's time (see :func:`append_time`). The batch must already have passed
    :func:`agentdeck.storage.batch.check_batch`. Events that change nothing but the last seq
    and time skip the fold, which is what makes a long run of deltas cheap.
    """
    seq = state.last_seq
    events: list[Event] = []
    for payload in payloads:
        seq += 1
        event = record(payload, seq, run_id, ts, session_id, namespace, parent_run_id, origin)
        if payload.kind in FOLDED_KINDS:
            state = apply(state, event)
        events.append(event)
    if events and state.last_seq != seq:
        state = replace(state, last_seq=seq, last_ts=ts)
    return events, state
