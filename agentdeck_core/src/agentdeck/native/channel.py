"""The channel between a running ``@workflow`` body and the engine's ``play`` loop.

The body runs as its own task; ``play`` is the async generator the runtime consumes. Every
operation of the body's context that produces a payload posts a message here and waits, so the
body is never ahead of the log:

* :class:`Emit` carries a payload to record; the body continues only once the runtime has asked
  ``play`` for the next item, which it does after persisting this one ("persist before
  continue").
* :class:`Park` says the body waits on something that cannot happen during this play (an answer,
  a wake time, a suspended child run). The body's branch then waits until a later play of the
  run in this process wakes it (:meth:`Channel.wake`), or until the body is dropped; ``play``
  collects parks until the body has settled and ends the play on them.
* :class:`Fail` and :class:`Diverge` end the play because the body misused its context or
  replayed differently from its journal; :class:`Finished` and :class:`Crashed` carry the body's
  own ending.

A control directive does not travel as a message: :meth:`Channel.stop` stores it and wakes the
loop, which yields the directive's payloads and nothing else from then on (whatever other
branches had already posted is dropped, as the contract requires).

Two kinds of waiting: a branch *suspended* (parked, or paused at its safe point) can go on in a
later play, which wakes it; a branch *held* (its payload was dropped, it kept going after the
play decided to end) cannot, so a play that leaves one behind cannot keep its body for later
(:attr:`Channel.retainable`) and the run replays instead.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NoReturn

from agentdeck.errors import ReplayError
from agentdeck.model.payloads import Payload, RunFailed, RunInterrupted
from agentdeck.ports import ControlDirective

__all__ = [
    "Channel",
    "Crashed",
    "Diverge",
    "Emit",
    "Fail",
    "Finished",
    "Mailbox",
    "Message",
    "Park",
    "Wake",
]


@dataclass(slots=True)
class Emit:
    payload: Payload
    delivered: asyncio.Future[None]

    def acknowledge(self) -> None:
        if not self.delivered.done():
            self.delivered.set_result(None)


@dataclass(frozen=True, slots=True)
class Park:
    """A branch of the body waits past this play.

    Exactly one of ``interrupt`` (an ask), ``wake_at`` (a sleep) or ``child_run_id`` (an invoked
    run that suspended) is set; ``order`` keeps parks in the body's own ordinal order.
    """

    order: int
    interrupt: RunInterrupted | None = None
    wake_at: datetime | None = None
    child_run_id: str | None = None


@dataclass(frozen=True, slots=True)
class Fail:
    """The body misused its context: the engine records this failure, written by the engine."""

    failure: RunFailed


@dataclass(frozen=True, slots=True)
class Diverge:
    """The body replayed differently from its journal: ``play`` raises ``error``."""

    error: ReplayError


@dataclass(frozen=True, slots=True)
class Finished:
    result: Any


@dataclass(frozen=True, slots=True)
class Crashed:
    error: BaseException
    where: str | None = None


@dataclass(frozen=True, slots=True)
class Wake:
    """Nothing to deliver: look at the channel again (a directive arrived)."""


Message = Emit | Park | Fail | Diverge | Finished | Crashed | Wake


class Mailbox:
    """An unbounded FIFO with one reader (the play loop), cheaper than ``asyncio.Queue``.

    Every play makes one, and a trivial body posts a single message to it: a queue's getter and
    putter bookkeeping would cost more than the message.
    """

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[Message] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def put(self, message: Message) -> None:
        self._items.append(message)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get(self) -> Message:
        while not self._items:
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self._waiter = None
        return self._items.popleft()

    def poll(self) -> Message | None:
        return self._items.popleft() if self._items else None

    def pending(self) -> tuple[Message, ...]:
        """What is posted and not yet read (without reading it)."""
        return tuple(self._items)


@dataclass(slots=True)
class Channel:
    """One play's mailbox from body to engine, and the flags both sides read."""

    queue: Mailbox = field(default_factory=Mailbox)
    directive: ControlDirective | None = None
    closed: bool = False
    in_flight: int = 0
    """Steps and child runs executing now; a play does not park while one is running."""
    _checkpoint_lock: asyncio.Lock | None = None
    _held: set[asyncio.Future[None]] = field(default_factory=set)
    _suspended: set[asyncio.Future[None]] = field(default_factory=set)

    @property
    def checkpoint_lock(self) -> asyncio.Lock:
        """Serializes the body's safe points; made on first use (most bodies have none)."""
        lock = self._checkpoint_lock
        if lock is None:
            lock = self._checkpoint_lock = asyncio.Lock()
        return lock

    @property
    def stopping(self) -> bool:
        """The play is ending: the body may not produce anything more."""
        return self.closed or self.directive is not None

    # -- the body's side ---------------------------------------------------------------------

    async def emit(self, payload: Payload) -> None:
        """Hand ``payload`` to the runtime and return once it has been recorded."""
        await self.refuse_if_stopping()
        delivered: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._held.add(delivered)
        self.queue.put(Emit(payload, delivered))
        try:
            await delivered
        finally:
            self._held.discard(delivered)

    async def park(self, park: Park) -> None:
        """Post ``park`` and wait; returns when a later play of the run in this process wakes
        the body, which then looks again at what that play's journal says."""
        await self.refuse_if_stopping()
        self.queue.put(park)
        await self.suspend()

    async def fail(self, failure: RunFailed) -> NoReturn:
        await self.refuse_if_stopping()
        self.queue.put(Fail(failure))
        await self.hold()

    async def diverge(self, error: ReplayError) -> NoReturn:
        await self.refuse_if_stopping()
        self.queue.put(Diverge(error))
        await self.hold()

    def stop(self, directive: ControlDirective) -> None:
        """Record the directive the runtime gave at a safe point and wake the loop."""
        self.directive = directive
        self.queue.put(Wake())

    def finished(self, result: Any) -> None:
        self.queue.put(Finished(result))

    def crashed(self, error: BaseException, where: str | None) -> None:
        self.queue.put(Crashed(error, where))

    async def refuse_if_stopping(self) -> None:
        """A branch that keeps going after the play decided to end waits here until it is
        cancelled; after the play has ended, it is cancelled at once."""
        if self.closed:
            raise asyncio.CancelledError
        if self.directive is not None:
            await self.hold()

    async def suspend(self) -> None:
        """Wait until a later play wakes this branch (or the body is dropped, which cancels)."""
        if self.closed:
            raise asyncio.CancelledError
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._suspended.add(waiter)
        try:
            await waiter
        finally:
            self._suspended.discard(waiter)

    async def hold(self) -> NoReturn:
        """Wait until the play ends (which cancels the waiter)."""
        if self.closed:
            raise asyncio.CancelledError
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._held.add(waiter)
        try:
            await waiter
        finally:
            self._held.discard(waiter)
        raise asyncio.CancelledError  # pragma: no cover - the waiter is only ever cancelled

    # -- the engine's side -------------------------------------------------------------------

    def poll(self) -> Message | None:
        return self.queue.poll()

    @property
    def retainable(self) -> bool:
        """Whether the body can wait for a later play as it stands: nothing running, nothing
        posted and undelivered, no branch held -- only suspended ones."""
        if self.in_flight or any(not waiter.done() for waiter in self._held):
            return False
        return not any(isinstance(message, Emit) for message in self.queue.pending())

    def close(self) -> None:
        """The play is over and the body with it: release every branch still waiting."""
        self.detach()
        for waiter in list(self._suspended):
            waiter.cancel()

    def detach(self) -> None:
        """The play is over, the body is kept: cancel held branches, leave suspended ones for
        :meth:`wake`. A branch that calls its context before then is cancelled."""
        self.closed = True
        for waiter in list(self._held):
            waiter.cancel()
        while self.poll() is not None:
            pass

    def wake(self) -> None:
        """A later play continues the body: every suspended branch goes on (and looks again)."""
        for waiter in list(self._suspended):
            if not waiter.done():
                waiter.set_result(None)
