"""Session claims: when a new open may step over the run holding its session.

A session is held by the last run opened on ``(namespace, session_id)`` until that run is
terminal. A :class:`~agentdeck.ports.Takeover` lets an open displace a *running* holder whose
lease is known dead or whose last event is older than ``stale_before``; a suspended holder
(paused, waiting for an answer) is never displaced. Every store asks this one function.
"""

from __future__ import annotations

from datetime import datetime

from agentdeck.model.clock import utc
from agentdeck.ports import Takeover
from agentdeck.vocabulary import RunStatus

__all__ = ["may_step_over"]


def may_step_over(
    run_id: str, status: RunStatus | None, last_ts: datetime | None, takeover: Takeover | None
) -> bool:
    """May an open with ``takeover`` step over the holder ``run_id`` (at ``status``, last
    written at ``last_ts``)?"""
    if takeover is None or status is not RunStatus.RUNNING:
        return False
    if run_id in takeover.dead_run_ids:
        return True
    stale = takeover.stale_before
    return stale is not None and last_ts is not None and last_ts < utc(stale)
