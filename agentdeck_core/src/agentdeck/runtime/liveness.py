"""Liveness: how a run that is playing says so, and what happens when its worker is gone.

* A run playing here holds a **lease**, taken and given back by its play
  (:mod:`agentdeck.runtime.play`) and renewed on a schedule by one renewer task for every run
  of the process.
* Whoever sees a **lapsed** lease on a running run closes it as ``run.failed(lease_expired)``
  in its own name (:meth:`Liveness.close_lapsed`, part of the deck's sweep). So is a running run
  that nobody has held a lease for since its last event, one TTL ago
  (:meth:`Liveness.close_unleased`): its worker died before its lease was written (between
  ``run.started`` or ``run.resumed`` and the lease), or its play stopped without recording an
  ending because the store was unreachable. A run is never ``running`` with no owner for longer
  than one TTL and one sweep interval.
* A finished run leaves two things to **tidy**: control requests that arrived too late to be
  acted on, and its lease. Neither is read again (every control verb on a finished run is a
  no-op; a lease only matters while its run is running), so both are dropped shortly after,
  together with those of the other runs that finished meanwhile: one ``forget`` for many runs,
  and releases that a durable port commits together, rather than writes on every run's way out
  that contend with the next runs' opens. Closing the runtime tidies what is left.

The per-run costs here were measured: no task, timer or callback per run beyond the one a
shared lease port's acquire needs (see ``test_runtime_hot_path.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta

from agentdeck.errors import AgentDeckError
from agentdeck.model.clock import Clock
from agentdeck.ports import (
    ControlPort,
    EventStore,
    LeasePort,
    LeaseState,
    RunQuery,
    RunRecord,
)
from agentdeck.runtime.config import RuntimeConfig
from agentdeck.runtime.held import HeldRuns
from agentdeck.runtime.recording import Recorder
from agentdeck.runtime.tasks import stop_task
from agentdeck.vocabulary import ErrorCode, RunStatus

__all__ = ["LAPSED_PAGE", "TIDY_BATCH_SECONDS", "Liveness"]

log = logging.getLogger("agentdeck.runtime")

LAPSED_PAGE = 100
"""How many lapsed leases one read of the lease port lists (the sweep reads page after page)."""

TIDY_BATCH_SECONDS = 0.05
"""How long finished runs' leftovers wait to be tidied together (a batching delay in real time,
not a timer of the run model: the injected clock does not govern it)."""


class Liveness:
    """Leases, their renewal, tidying after finished runs, and closing abandoned runs."""

    def __init__(
        self,
        *,
        store: EventStore,
        control: ControlPort,
        leases: LeasePort,
        recorder: Recorder,
        held: HeldRuns,
        clock: Clock,
        config: RuntimeConfig,
        owner: str,
    ) -> None:
        self.store = store
        self.control = control
        self.leases = leases
        self.recorder = recorder
        self.held = held
        self.clock = clock
        self.config = config
        self.owner = owner
        self.leased: dict[str, None] = {}
        """Runs whose lease this process holds, renewed together by one task (``_renewer``);
        a play drops its run from here when it stops."""
        self._renewer: asyncio.Task[None] | None = None
        self._renewals_failing = False
        """The last round of renewals failed on the store (said once, until one succeeds)."""
        self._unacquired: dict[str, None] = {}
        """Runs held here whose lease could not be taken (the store failed): the renewer takes it
        instead of renewing it, so a store hiccup at the start of a run costs it no lease."""
        # Finished runs whose leftover control requests are still to be dropped, and whose
        # leases are still to be released (together, by `_tidier`).
        self._ended: dict[str, None] = {}
        self._unleased: dict[str, None] = {}
        self._tidier: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------------------- leases

    def acquire_alongside(self, run_id: str) -> asyncio.Task[bool]:
        """Take ``run_id``'s lease from a shared port, where it is a round trip: in a task
        alongside the play rather than before it. Held (renewed) once it lands.

        Until it lands the run's lease reads ``NONE``, which lets nobody take the run over.
        """
        return asyncio.get_running_loop().create_task(self._acquire_and_hold(run_id))

    async def _acquire_and_hold(self, run_id: str) -> bool:
        """Hold the lease inside the task that takes it, so the play sees it held whenever it
        sees the task done.

        (A done-callback would run one loop turn after the task is done: a run that ended in
        that turn gave its lease back first and was then held -- renewed, and reported lost,
        long after it finished.)
        """
        try:
            taken = await self.leases.acquire(run_id, self.owner, self.config.lease_ttl)
        except AgentDeckError as exc:
            log.warning("run %s: taking its lease failed (%s); retried at renewals", run_id, exc)
            self._unacquired[run_id] = None
            taken = True  # held from here on: the renewer takes it as soon as the port answers
        if taken:
            self.hold(run_id)
        return taken

    def hold(self, run_id: str) -> None:
        """Keep the lease just taken for ``run_id`` renewed while it plays here.

        One renewer serves every run this process plays (a task per run would cost each run a
        task, a timer and a cancellation). Each lease is renewed at least once per
        ``lease_renew_every`` after it was taken, so it never gets closer to lapsing than the
        per-run schedule allowed.
        """
        self.leased[run_id] = None
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.create_task(self._renew_leases(), name="lease-renewer")

    def release_later(self, run_id: str) -> None:
        """Release a finished run's lease soon, with other runs' (it is never played again);
        a parked run's is released by its play at once, as it may be continued any moment."""
        self._unleased[run_id] = None
        self._tidy_soon()

    async def _renew_leases(self) -> None:
        """Renew the leases of the runs playing here, every ``lease_renew_every``, until none
        is left (the next lease taken starts a new renewer)."""
        while self.leased:
            await self.clock.sleep(self.config.lease_renew_every)
            held = list(self.leased)
            ttl, owner, unacquired = self.config.lease_ttl, self.owner, self._unacquired
            outcomes = await asyncio.gather(
                *(
                    self.leases.acquire(run_id, owner, ttl)
                    if run_id in unacquired
                    else self.leases.renew(run_id, owner, ttl)
                    for run_id in held
                ),
                return_exceptions=True,
            )
            failed: list[tuple[str, BaseException]] = []
            for run_id, renewed in zip(held, outcomes, strict=True):
                if run_id not in self.leased:
                    unacquired.pop(run_id, None)
                    continue  # released while the renewal was in flight
                if isinstance(renewed, BaseException):
                    failed.append((run_id, renewed))
                    continue
                if unacquired.pop(run_id, False) is None and renewed:
                    continue  # taken at last
                if not renewed:
                    log.warning("run %s lost its lease", run_id)
                    del self.leased[run_id]  # as before: a lost lease is not renewed again
            self._renewals_failed(failed)

    def _renewals_failed(self, failed: list[tuple[str, BaseException]]) -> None:
        """Say once that renewals fail, not once per run and round: in an outage every
        renewal fails until the store is back (which the store itself reports), and the runs
        whose leases lapse meanwhile are closed by a sweep. Anything but a store error is a
        bug, and is logged with its traceback each time."""
        store_errors = [(run_id, exc) for run_id, exc in failed if isinstance(exc, AgentDeckError)]
        for run_id, exc in failed:
            if not isinstance(exc, AgentDeckError):
                log.warning("run %s: lease renewal failed", run_id, exc_info=exc)
        if store_errors and not self._renewals_failing:
            run_id, exc = store_errors[0]
            log.warning(
                "renewing the leases of %d run(s) failed, retried every %g s (first: run %s: %s)",
                len(store_errors),
                self.config.lease_renew_every,
                run_id,
                exc,
            )
        self._renewals_failing = bool(store_errors)

    # ------------------------------------------------------------------------------- lapsed

    async def close_lapsed(self) -> None:
        """Close the running runs whose leases lapsed (not the ones this process plays), and
        forget the lapsed leases of runs that ended; then :meth:`close_unleased`.

        Every lapsed lease is looked at, page after page: a list that stopped at its first
        page would never reach a lapse behind a hundred older ones. A lease is forgotten only
        once its run is finished or gone (a parked run's lease may be taken again by whoever
        continues it), so it goes with its run instead of being listed for ever.
        """
        seen: set[str] = set()
        limit = LAPSED_PAGE
        while True:
            listed = await self.leases.lapsed(limit)
            ended: list[str] = []
            for run_id in listed:
                if run_id in seen:
                    continue
                seen.add(run_id)  # also a run played here: the next page must reach past it
                if run_id in self.held.playing:
                    continue
                if await self._closed_or_gone(run_id):
                    ended.append(run_id)
            if ended:
                await self.leases.forget(ended)
            if len(listed) < limit:
                break
            # The next page. Forgotten leases left the list, so this reaches at least a page
            # past everything seen, and each round meets one lease it had not seen: it ends.
            limit = len(seen) + LAPSED_PAGE
        await self.close_unleased()

    async def _closed_or_gone(self, run_id: str) -> bool:
        """Close ``run_id`` if it is still running (its lease lapsed); whether it is now
        finished or gone, so that its lease can be forgotten."""
        record = await self.store.get_run(run_id)
        if record is None or record.status.is_terminal:
            return True
        if record.status is not RunStatus.RUNNING:
            return False  # parked: whoever continues it takes the lease again
        return await self.recorder.close_abandoned(
            run_id, ErrorCode.LEASE_EXPIRED, "the worker playing this run stopped renewing"
        )

    async def close_unleased(self) -> None:
        """Close the running runs nobody holds a lease for, one TTL after their last event.

        Judged only where leases are shared: a port private to a process cannot see another's
        leases, so its silence says nothing. A run is closed only if its log has not moved
        since it was listed, and only by a conditional append on that seq: a run continued or
        ended meanwhile is left alone. Every page of quiet running runs is looked at.
        """
        if not self.leases.shared:
            return
        cutoff = self.clock.now() - timedelta(seconds=self.config.lease_ttl)
        cursor: str | None = None
        while True:
            quiet = await self.store.list_runs(
                RunQuery(
                    all_namespaces=True,
                    status=RunStatus.RUNNING,
                    updated_before=cutoff,
                    cursor=cursor,
                )
            )
            for listed in quiet.runs:
                await self._close_if_unleased(listed)
            cursor = quiet.next_cursor
            if cursor is None:
                return

    async def _close_if_unleased(self, listed: RunRecord) -> None:
        run_id = listed.run_id
        if run_id in self.held.playing:
            return
        if await self.leases.state(run_id) is LeaseState.ALIVE:
            return
        record = await self.store.get_run(run_id)
        if (
            record is None
            or record.status is not RunStatus.RUNNING
            or record.last_seq != listed.last_seq
        ):
            return
        await self.recorder.close_abandoned(
            run_id,
            ErrorCode.LEASE_EXPIRED,
            "no worker held this run's lease for one lease TTL (its worker stopped, or could "
            "not record the run's ending)",
            expect_seq=record.last_seq,
        )

    # ------------------------------------------------------------------------------- tidying

    def forget_signals_later(self, run_id: str) -> None:
        """Drop a finished run's leftover control requests soon, with other runs'."""
        self._ended[run_id] = None
        self._tidy_soon()

    def _tidy_soon(self) -> None:
        if self._tidier is None or self._tidier.done():
            self._tidier = asyncio.create_task(self._tidy_in_batches(), name="tidy-finished-runs")

    async def _tidy_in_batches(self) -> None:
        while self._ended or self._unleased:
            await asyncio.sleep(TIDY_BATCH_SECONDS)
            await self.tidy()

    async def tidy(self) -> None:
        """Drop the leftovers of every run that finished since the last tidy."""
        ended, unleased = list(self._ended), list(self._unleased)
        self._ended.clear()
        self._unleased.clear()
        if ended:
            try:
                await self.control.forget(ended)
            except AgentDeckError:
                log.warning("dropping the control requests of %d run(s) failed", len(ended))
        if not unleased:
            return
        if self.leases.shared:  # I/O: issued together, so the port can commit them together
            outcomes = await asyncio.gather(
                *(self.leases.release(run_id, self.owner) for run_id in unleased),
                return_exceptions=True,
            )
            failed = sum(isinstance(outcome, BaseException) for outcome in outcomes)
        else:  # in this process: each is immediate, and a task apiece would cost more
            failed = 0
            for run_id in unleased:
                try:
                    await self.leases.release(run_id, self.owner)
                except Exception:
                    failed += 1
        if failed:
            log.warning("releasing the leases of %d finished run(s) failed", failed)

    async def close(self, *, grace: float) -> None:
        """Stop the renewer and the tidier, then tidy what is left (bounded by ``grace``)."""
        for task in (self._renewer, self._tidier):
            if task is not None:
                await stop_task(task)
        # Best effort, and bounded: a port torn down under us (at interpreter exit) must not
        # hold the close; what is left of a finished run is harmless, and pruned with it.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.tidy(), timeout=grace)
