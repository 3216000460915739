"""Control: pause and cancel requests, and acting on them where no engine has to.

A request is a fact recorded in the control port, never a status change. A playing run meets it
at its engine's next safe point (the play's checkpointer, :mod:`agentdeck.runtime.play`); a
suspended run has no safe point to reach, so a cancel pending on one ends it here at once
(:meth:`RunControl.act_on_parked`), and cancelling a run cancels its unfinished children
(:meth:`RunControl.cascade_cancel`).

**Seeing a request at once.** Between stream items a play reads the control port at most every
``CONTROL_RECHECK`` seconds (:mod:`agentdeck.runtime.play`) -- a read per token would put a
store round trip between every two. A request made *in this process* must still be seen at the
very next safe point, so every request bumps a count, and a play whose last read is older than
the count reads again at once. The count belongs to the port's state, not to a module:
:class:`ControlRequests` uses the count of an in-process port whose state other port objects
share (a named ``memory://name`` port, :class:`CountsRequests`), so a request made through one
deck is seen at once by a run of another deck on the same named port; for any other port it
keeps a count of the requests made through it, and a request made through another port object
(another process, or another deck on the same database) is seen within ``CONTROL_RECHECK``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import NoReturn, Protocol, runtime_checkable

from agentdeck.errors import NotFoundError, RunCancelledError, RunFinishedError, RunStateError
from agentdeck.model.payloads import (
    ControlObserved,
    ControlRequested,
    Payload,
    RunCancelled,
    RunPaused,
)
from agentdeck.ports import ControlPort, EventStore, RunQuery
from agentdeck.runtime.held import HeldRuns
from agentdeck.runtime.recording import Recorder
from agentdeck.vocabulary import SUSPENDED, TERMINAL, ControlVerb, RunStatus, SafePoint

__all__ = [
    "ControlRequests",
    "CountsRequests",
    "RequestCounter",
    "RunControl",
    "control_payloads",
    "refuse_finished",
]


class RequestCounter(Protocol):
    """A count of the requests made to a control port's state in this process."""

    @property
    def value(self) -> int: ...


@runtime_checkable
class CountsRequests(Protocol):
    """A control port that counts the requests recorded in its state.

    Implemented by a port whose state lives in this process and may be shared by other port
    objects in it (a named in-memory port, :class:`~agentdeck.memory.MemoryControlPort`): its
    count is the one every runtime on that state watches. Used only for a port that is not
    ``shared`` with other processes; for any other port the runtime counts the requests made
    through its own handle.
    """

    @property
    def request_count(self) -> RequestCounter: ...


@dataclass(slots=True, eq=False)
class _OwnCount:
    value: int = 0


class ControlRequests:
    """The runtime's handle on its control port: the port, and the count of requests made to
    its state that a play compares with its last read (see the module docstring)."""

    __slots__ = ("_own", "count", "port")

    def __init__(self, port: ControlPort) -> None:
        self.port = port
        self._own: _OwnCount | None = None
        # A shared port's state is written by other processes too: no count kept in this one
        # is complete, so the play's scheduled reads find those, and this handle counts its own.
        if isinstance(port, CountsRequests) and not port.shared:
            self.count: RequestCounter = port.request_count
        else:
            self._own = _OwnCount()
            self.count = self._own

    async def request(self, run_id: str, verb: ControlVerb, reason: str | None) -> bool:
        """Record a request; whether the port recorded it (``False``: one was pending)."""
        made = await self.port.request(run_id, verb, reason)
        if self._own is not None:
            self._own.value += 1  # after the request: a play that reads now finds it
        return made


def control_payloads(
    verb: ControlVerb, reason: str | None, point: SafePoint
) -> tuple[Payload, ...]:
    """What acting on a request records: the request, where it was observed, and the ending."""
    ending: Payload = (
        RunCancelled(reason=reason) if verb is ControlVerb.CANCEL else RunPaused(reason=reason)
    )
    return (
        ControlRequested(verb=verb, reason=reason),
        ControlObserved(verb=verb, safe_point=point),
        ending,
    )


_NOT_PLAYING = SUSPENDED | {RunStatus.QUEUED}
"""Statuses of a run nothing plays: a cancel ends it at once."""


class RunControl:
    """Pause and cancel requests for one runtime, and acting on runs that are suspended."""

    def __init__(
        self, *, store: EventStore, requests: ControlRequests, recorder: Recorder, held: HeldRuns
    ) -> None:
        self.store = store
        self.requests = requests
        self.recorder = recorder
        self.held = held

    async def request(self, run_id: str, verb: ControlVerb, reason: str | None) -> bool:
        """Record a pause or cancel; act at once if the run is (or just became) suspended.

        The rule every verb follows (:func:`refuse_finished`): quiet when what it asks for
        already holds (a pause on a paused run, a cancel on a cancelled one), a typed
        :class:`~agentdeck.errors.RunFinishedError` when it can no longer happen (the run
        finished otherwise).
        """
        record = await self.recorder.record(run_id)
        if record.status in TERMINAL:
            if verb is ControlVerb.CANCEL and record.status is RunStatus.CANCELLED:
                return True
            await refuse_finished(self.store, run_id, record.status, verb.value)
        if verb is ControlVerb.PAUSE and record.status is RunStatus.PAUSED:
            return True
        await self.requests.request(run_id, verb, reason)
        if verb is ControlVerb.CANCEL:
            await self.act_on_parked(run_id)
            await self.cascade_cancel(run_id, reason or "parent run cancelled")
        return True

    async def request_unseen(self, run_id: str, verb: ControlVerb, reason: str | None) -> None:
        """Record a request for a run whose log this process cannot read (its events live in
        another process's store), in the shared control store alone.

        The run's own process meets a pause or cancel at its next safe point, the reason in its
        log, as if it had been asked there; a resume lifts a pause still pending and is taken by
        that process's sweep if the run is paused (:meth:`Continuation.continue_owed
        <agentdeck.runtime.continuation.Continuation.continue_owed>`). A control store no other
        process reads (``memory://``) could deliver none of that: refused with
        :class:`~agentdeck.errors.NotFoundError`, as for a run nobody knows.
        """
        port = self.requests.port
        if not port.shared:
            raise NotFoundError(
                f"no run with id '{run_id}' in this store, and the control store "
                f"({port.url}) is not shared with other processes, so no request can reach it",
                what="run",
                name=run_id,
            )
        if verb is ControlVerb.RESUME:
            await port.withdraw(run_id, ControlVerb.PAUSE)
        await self.requests.request(run_id, verb, reason)

    async def act_on_parked(self, run_id: str) -> None:
        """A cancel pending on a suspended or queued run ends it now (nothing plays it, so no
        safe point is needed)."""
        record = await self.store.get_run(run_id)
        if record is None or record.status not in _NOT_PLAYING:
            return
        port = self.requests.port
        signals = await port.pending(run_id)
        if not any(s.verb is ControlVerb.CANCEL for s in signals):
            return
        taken = await port.take(run_id, ControlVerb.CANCEL)
        if taken is None:
            return
        try:
            await self.recorder.append(
                run_id,
                control_payloads(ControlVerb.CANCEL, taken.reason, SafePoint.SUSPENDED),
                expect=tuple(_NOT_PLAYING),
            )
        except RunStateError:
            # It was resumed (or claimed by a worker) in between; the player acts on the
            # cancel at its next safe point.
            await self.requests.request(run_id, ControlVerb.CANCEL, taken.reason)
            return
        self.held.forget(run_id)
        await port.forget([run_id])

    async def cascade_cancel(self, run_id: str, reason: str) -> None:
        """Ask every unfinished child of ``run_id`` to cancel (and so theirs, in turn)."""
        page = await self.store.list_runs(
            RunQuery(all_namespaces=True, parent_run_id=run_id, limit=1000)
        )
        for child in page.runs:
            if child.status not in TERMINAL:
                # A child that finishes meanwhile needs no cancel: that race is not a refusal.
                with contextlib.suppress(RunFinishedError):
                    await self.request(child.run_id, ControlVerb.CANCEL, reason)


async def refuse_finished(store: EventStore, run_id: str, status: RunStatus, verb: str) -> NoReturn:
    """Raise the typed refusal for ``verb`` on a run that finished with ``status``: a
    :class:`~agentdeck.errors.RunCancelledError` (with the recorded reason) for a cancelled
    run, a :class:`~agentdeck.errors.RunFinishedError` for a completed or failed one."""
    if status is RunStatus.CANCELLED:
        last = await store.read(run_id, from_seq=0)
        reason = next(
            (e.payload.reason for e in reversed(last) if isinstance(e.payload, RunCancelled)),
            None,
        )
        raise RunCancelledError(run_id=run_id, verb=verb, cancel_reason=reason)
    raise RunFinishedError(run_id=run_id, status=status, verb=verb)
