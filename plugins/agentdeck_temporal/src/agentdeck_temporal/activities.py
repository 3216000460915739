"""The play activity: a worker plays one admitted run from AgentDeck's store, heartbeating.

The activity receives a :class:`~agentdeck_temporal.workflow.RunTicket` and nothing else; it
plays the run through its deck's runtime (:meth:`~agentdeck.ports.RecordedRuns.play_admitted`),
which claims it in the store, plays it on the worker's engines and records every event there.
While the play lasts it heartbeats every third of the heartbeat timeout, so a worker that dies
mid-run is seen dead by Temporal within one timeout and the activity goes to another worker.

What it returns (and so what enters Temporal's history) is the status the play ended in.
A run another worker still plays fails the activity as ``BUSY``, which Temporal retries: a
stopping worker pauses it moments later, and a dead one's lease lapses, and either way the
retry goes on with it. A run that cannot be
played here at all -- not in this worker's catalog, started from other code, paused by an
operator -- fails it as ``NOT_PLAYABLE`` with the reason, which Temporal does not retry.
"""

from __future__ import annotations

import asyncio
import logging

from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from agentdeck.errors import NotFoundError, ReplayError, RunStateError
from agentdeck.ports import RecordedRuns
from agentdeck.vocabulary import TERMINAL, RunStatus
from agentdeck_temporal.workflow import BUSY, NOT_PLAYABLE, PLAY_ACTIVITY, PlayOutcome, RunTicket

__all__ = ["PlayActivity"]

log = logging.getLogger("agentdeck.temporal")


class PlayActivity:
    """The play activity bound to one worker deck's runtime."""

    def __init__(self, runs: RecordedRuns, *, heartbeat_seconds: float) -> None:
        self.runs = runs
        self.beat_every = heartbeat_seconds / 3

    @activity.defn(name=PLAY_ACTIVITY)
    async def play_run(self, ticket: RunTicket) -> PlayOutcome:
        """Play ``ticket.run_id`` to its next ending; the status it ended in (and, for a
        timer, when it is due)."""
        play = asyncio.ensure_future(self.runs.play_admitted(ticket.run_id))
        try:
            while True:
                done, _ = await asyncio.wait({play}, timeout=self.beat_every)
                if done:
                    break
                activity.heartbeat()
            record = play.result()
            wake_at = record.wake_at.isoformat() if record.wake_at is not None else None
            return PlayOutcome(status=str(record.status), wake_at=wake_at)
        except RunStateError as refused:
            if refused.status is not None and refused.status in TERMINAL:
                # Cancelled (or ended) before a worker took it: nothing is left to play.
                return PlayOutcome(status=str(refused.status))
            if refused.status is RunStatus.RUNNING:
                # Another worker still holds it -- one that is stopping (about to pause it) or
                # dead (its lease about to lapse): retried, with backoff, until it can go on.
                # Benign: expected while a dead worker's lease runs out, so Temporal's worker
                # logs it at debug, not as a warning with a traceback each second.
                raise ApplicationError(
                    str(refused), type=BUSY, category=ApplicationErrorCategory.BENIGN
                ) from None
            raise ApplicationError(str(refused), type=NOT_PLAYABLE, non_retryable=True) from None
        except (NotFoundError, ReplayError) as refused:
            raise ApplicationError(str(refused), type=NOT_PLAYABLE, non_retryable=True) from None
        finally:
            if not play.done():  # the activity was cancelled (the worker is shutting down)
                play.cancel()
