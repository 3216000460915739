"""The Temporal workflow of one AgentDeck run: ids and statuses in, a status out.

What this workflow's history holds is the point of the design: a :class:`RunTicket` (the run's
id and namespace, the heartbeat timeout) and the status string the play activity returns --
never the run's input, messages, tool calls or output, which stay in AgentDeck's event store.
A long chat therefore never grows the history past a few events per play.

Temporal runs this module inside its workflow sandbox, so it imports nothing but the SDK and
the standard library: AgentDeck itself (and every engine SDK a worker's deck loads) stays out
of the sandbox, in the activity (:mod:`agentdeck_temporal.activities`).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

__all__ = [
    "BUSY",
    "NOT_PLAYABLE",
    "PLAY_ACTIVITY",
    "WAKE_SIGNAL",
    "WORKFLOW_NAME",
    "PlayOutcome",
    "RunTicket",
    "RunWorkflow",
    "workflow_id",
]

WORKFLOW_NAME = "agentdeck.run"
PLAY_ACTIVITY = "agentdeck.play_run"
NOT_PLAYABLE = "AgentDeckRunNotPlayable"
"""The error type of an activity failure no retry can mend (the run is not in the worker's
catalog, or no longer queued): Temporal does not retry it."""

BUSY = "AgentDeckRunBusy"
"""The error type of an activity that found its run played by another worker: retried."""

_PLAY_TIMEOUT = timedelta(days=30)
"""How long one play may take in all: long, since heartbeats are what detect a dead worker."""
_RETRY_EVERY = timedelta(seconds=1)
"""How soon a failed play is tried again -- always, never backed off. Every hand-over of a run
(a worker killed, heartbeats lost, the next worker told BUSY until the dead one's lease lapses)
is a retry of the *same* activity, so its attempt count only grows over a run's life: with
Temporal's default doubling, the fifth kill of a long run's worker waited 16 s before anyone
tried again and every kill from the sixth on 30 s (measured: takeovers of 3.3, 3.4, 5.0, 9.8,
17.9, then ~32 s). A constant second keeps every takeover at heartbeat timeout + lease + ~1 s,
and costs a failing play (a store outage) one attempt a second."""


@dataclass(frozen=True)
class RunTicket:
    """Everything Temporal is told about a run: which one, and how often its worker checks in."""

    run_id: str
    namespace: str | None = None
    heartbeat_seconds: float = 10.0


@dataclass(frozen=True)
class PlayOutcome:
    """What a play tells the workflow: the status it left the run in, and for a paused run
    with a timer its wake time (ISO 8601) -- the durable timer the workflow then sets."""

    status: str
    wake_at: str | None = None


def workflow_id(run_id: str) -> str:
    """The Temporal workflow id of an AgentDeck run: one workflow per run, found by its id."""
    return f"agentdeck-run-{run_id}"


WAKE_SIGNAL = "agentdeck.wake"
"""Sent by a client deck once it recorded an answer or a resume request for the run."""

_SUSPENDED = frozenset({"paused", "waiting_answer"})


@workflow.defn(name=WORKFLOW_NAME)
class RunWorkflow:
    """Plays the run on whichever worker takes the activity, and again each time a client wakes
    it while it is suspended; returns the status it ended in.

    A suspended run waits here, in Temporal, for :data:`WAKE_SIGNAL` -- not in any worker's
    memory, so a parked run costs no worker anything and survives every worker's restart.
    """

    def __init__(self) -> None:
        self._woken = False

    @workflow.run
    async def run(self, ticket: RunTicket) -> str:
        outcome = await self._play(ticket)
        while outcome.status in _SUSPENDED:
            timeout = None
            if outcome.wake_at is not None:
                due = datetime.fromisoformat(outcome.wake_at)
                timeout = max((due - workflow.now()).total_seconds(), 0.0)
            # A Temporal timer when the run sleeps (no sweep, no worker memory); its firing
            # is a wake like a client's: the next play resumes the run.
            with contextlib.suppress(TimeoutError):
                await workflow.wait_condition(lambda: self._woken, timeout=timeout)
            self._woken = False
            outcome = await self._play(ticket)
        return outcome.status

    @workflow.signal(name=WAKE_SIGNAL)
    def wake(self) -> None:
        self._woken = True

    async def _play(self, ticket: RunTicket) -> PlayOutcome:
        outcome: PlayOutcome = await workflow.execute_activity(
            PLAY_ACTIVITY,
            ticket,
            result_type=PlayOutcome,
            start_to_close_timeout=_PLAY_TIMEOUT,
            heartbeat_timeout=timedelta(seconds=ticket.heartbeat_seconds),
            retry_policy=RetryPolicy(
                initial_interval=_RETRY_EVERY,
                backoff_coefficient=1.0,
                maximum_interval=_RETRY_EVERY,
                non_retryable_error_types=[NOT_PLAYABLE],
            ),
        )
        return outcome
