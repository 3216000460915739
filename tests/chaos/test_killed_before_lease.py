"""A worker SIGKILLed between recording ``run.started`` and writing the run's lease.

The window is forced, not hoped for: the worker's lease port is the real one of the store,
except that taking a lease never finishes (``deck_worker.py --gate-leases``). The run is then
recorded ``running`` and has no lease row, which is exactly what a kill in that window leaves
(it was seen on its own in 1 of 20 Redis kills). What must follow, on every durable store: the
next sweep of any deck closes the run as ``run.failed(lease_expired)`` within one lease TTL of
its last event plus one sweep interval, and its session takes a new turn within that time --
not after the one-hour stale-run backstop.
"""

from __future__ import annotations

import time

from support import LEASE_TTL, SLACK, SWEEP_INTERVAL, deck_on, eventually, worker_on

from agentdeck import RunStatus
from agentdeck.model.payloads import RunFailed
from agentdeck.testing.processes import JsonLinesWorker


def _started_and_gated(worker: JsonLinesWorker, run_name: str, session: str) -> str:
    """Start a run on the worker; its id once both the start returned and the lease take
    began (the two lines come in either order)."""
    worker.send(op="start", name=run_name, session=session)
    run_id = gated = None
    while run_id is None or gated is None:
        reply = worker.reply()
        if "run_id" in reply:
            run_id = reply["run_id"]
        elif "lease_gate" in reply:
            gated = reply["lease_gate"]
        else:
            raise AssertionError(f"unexpected reply {reply}")
    assert gated == run_id
    return run_id


async def test_a_run_killed_before_its_lease_is_closed_and_its_session_freed(
    durable_url: str,
) -> None:
    session = "before-lease"
    bound = LEASE_TTL + SWEEP_INTERVAL
    async with deck_on(durable_url) as deck:  # another deck, already sweeping
        worker = worker_on(durable_url, "--gate-leases")
        try:
            run_id = _started_and_gated(worker, "hold", session)
            worker.kill()
            killed_at = time.monotonic()
        finally:
            worker.stop()
        handle = await deck.runs.get(run_id)

        async def closed() -> RunStatus | None:
            status = await handle.status()
            return status if status is not RunStatus.RUNNING else None

        status, _ = await eventually(closed, within=bound + SLACK)
        closed_after = time.monotonic() - killed_at
        assert status is RunStatus.FAILED
        events = [event async for event in handle.events()]
        assert [event.seq for event in events] == list(range(len(events)))  # gapless
        ending = events[-1].payload
        assert isinstance(ending, RunFailed) and ending.error_code == "lease_expired"
        # One TTL after its last event (the store's clock), and at most one sweep later.
        quiet = (events[-1].ts - events[-2].ts).total_seconds()
        assert LEASE_TTL <= quiet <= bound + SLACK, quiet
        # The session is free: a new turn on it plays to its end.
        assert await deck.run("ticking", {"count": 1}, session_id=session) == 1
    print(f"\n[chaos] killed before its lease: closed {closed_after:.2f} s after the kill")
