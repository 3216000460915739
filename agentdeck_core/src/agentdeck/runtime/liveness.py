"""Liveness: how a run that is playing says so, and what happens when its worker is gone.

* A run playing here holds a **lease**, taken and given back by its play
  (:mod:`agentdeck.runtime.play`) and renewed on a schedule by one renewer task for every run
  of the process.
* Whoever sees a **lapsed** lease on a running run closes it as ``run.failed(lease_expired)``
  in its own name (:meth:`Liveness.close_lapsed`, part of the deck's sweep).
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

from agentdeck.errors import AgentDeckError
from agentdeck.model.clock import Clock
from agentdeck.ports import ControlPort, EventStore, LeasePort
from agentdeck.runtime.config import RuntimeConfig
from agentdeck.runtime.held import HeldRuns
from agentdeck.runtime.recording import Recorder
from agentdeck.vocabulary import ErrorCode, RunStatus

__all__ = ["TIDY_BATCH_SECONDS", "Liveness"]

log = logging.getLogger("agentdeck.runtime")

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
        taken = await self.leases.acquire(run_id, self.owner, self.config.lease_ttl)
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
            outcomes = await asyncio.gather(
                *(self.leases.renew(run_id, self.owner, self.config.lease_ttl) for run_id in held),
                return_exceptions=True,
            )
            for run_id, renewed in zip(held, outcomes, strict=True):
                if run_id not in self.leased:
                    continue  # released while the renewal was in flight
                if isinstance(renewed, BaseException):
                    log.warning("run %s: lease renewal failed", run_id, exc_info=renewed)
                elif not renewed:
                    log.warning("run %s lost its lease", run_id)
                    del self.leased[run_id]  # as before: a lost lease is not renewed again

    # ------------------------------------------------------------------------------- lapsed

    async def close_lapsed(self) -> None:
        """Close the running runs whose leases lapsed (not the ones this process plays)."""
        for run_id in await self.leases.lapsed():
            if run_id in self.held.playing:
                continue
            record = await self.store.get_run(run_id)
            if record is not None and record.status is RunStatus.RUNNING:
                await self.recorder.close_abandoned(
                    run_id, ErrorCode.LEASE_EXPIRED, "the worker playing this run stopped renewing"
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
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        # Best effort, and bounded: a port torn down under us (at interpreter exit) must not
        # hold the close; what is left of a finished run is harmless, and pruned with it.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.tidy(), timeout=grace)
