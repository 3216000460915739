"""The run service: the one door from a deck's surfaces to its runtime.

Every ``Run`` and ``Runs`` handle the deck hands out, the serving exposure, the command line and
the bindings act on runs through one :class:`RunService` per deck, never through the deck's
internals. It knows one thing about the deck -- whether it is open -- and refuses with the
deck's :class:`~agentdeck.errors.ConfigError` when it is not (not yet, or no longer); everything
else it hands to the runtime, which holds the run model's rules (an answer's included,
:meth:`Continuation.answer <agentdeck.runtime.continuation.Continuation.answer>`).

It lives in the deck layer rather than the runtime's because what it guards is the deck's
lifecycle: a runtime exists only while its deck is open, and a handle outlives both. It holds no
state of any run; two handles on one run always agree, because every read goes to the store.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable
from typing import Any

from agentdeck.deck.boundary import (
    checked_json,
    checked_limit,
    checked_seq,
    checked_statuses,
    optional_text,
)
from agentdeck.errors import ConfigError, InvalidInputError, NotFoundError
from agentdeck.model.events import Event
from agentdeck.model.status import RunState, fold
from agentdeck.ports import EventStore, RunPage, RunQuery, RunRecord
from agentdeck.runtime.continuation import Answered
from agentdeck.runtime.recording import closing
from agentdeck.runtime.runtime import Runtime
from agentdeck.vocabulary import SUSPENDING_KINDS, TERMINAL_KINDS, ControlVerb

__all__ = ["RunService", "recorded"]


class RunService:
    """What a deck's handles and surfaces act on runs through (``deck.service``)."""

    __slots__ = ("_runtime", "_state")

    def __init__(self) -> None:
        self._runtime: Runtime | None = None
        self._state = "new"

    def deck_moved(self, state: str, runtime: Runtime | None = None) -> None:
        """The deck entered ``state`` (its ``DeckState`` value); ``runtime`` while it is open."""
        self._state, self._runtime = state, runtime

    # ------------------------------------------------------------------------------- the gate

    @property
    def is_open(self) -> bool:
        return self._runtime is not None

    @property
    def runtime(self) -> Runtime:
        """The open deck's runtime; :class:`ConfigError` saying what to do when it is not open.

        For operators acting on runs as a deck does (the command line, a binding draining).
        """
        runtime = self._runtime
        if runtime is None:
            raise ConfigError(
                f"the deck is {self._state}: open it first (`async with deck:`) before starting "
                "or reading runs"
                if self._state != "closed"
                else "the deck is closed; construct a new one"
            )
        return runtime

    @property
    def store(self) -> EventStore:
        """The open deck's event store."""
        return self.runtime.store

    # ------------------------------------------------------------------------------- finding

    async def record(self, run_id: str) -> RunRecord:
        """The record of a run a handle addresses, in whichever namespace it is."""
        record = await self.store.get_run(run_id)
        if record is None:
            raise NotFoundError(f"run '{run_id}' no longer exists", what="run", name=run_id)
        return record

    async def find(
        self, run_id: str | None = None, *, namespace: str | None, key: str | None = None
    ) -> RunRecord:
        """The run with this id, or the one holding ``(namespace, key)``, in ``namespace``.

        A run of another namespace is reported exactly like one that does not exist, so a
        caller cannot tell the two apart.
        """
        run_id = optional_text(run_id, "id")
        namespace = optional_text(namespace, "namespace")
        key = optional_text(key, "key")
        store = self.store
        if run_id is not None:
            record = await store.get_run(run_id)
        elif key is not None:
            record = await store.find_key(namespace, key)
        else:
            raise InvalidInputError("a run is found by its id or by its key", field="id")
        if record is None or record.namespace != namespace:
            what = f"id '{run_id}'" if run_id is not None else f"key '{key}'"
            where = f"namespace '{namespace}'" if namespace is not None else "the default namespace"
            raise NotFoundError(
                f"no run with {what} in {where}",
                what="run",
                name=run_id or key,
                namespace=namespace,
            )
        return record

    def list_runs(self, query: RunQuery) -> Awaitable[RunPage]:
        """One page of runs, as the store lists them; a filter no store could match is refused
        as the caller's mistake (naming it), not left to the store to fail on."""
        for field in ("namespace", "session_id", "key", "name", "parent_run_id", "cursor"):
            optional_text(getattr(query, field), field)
        limit = checked_limit(query.limit) or 100
        status = checked_statuses(query.status)
        if limit != query.limit or status != query.status:
            query = dataclasses.replace(query, limit=limit, status=status)
        return self.store.list_runs(query)

    # ------------------------------------------------------------------------------- reading

    async def state(self, run_id: str) -> RunState:
        """The run folded from its whole log."""
        return fold(await self.store.read(run_id))

    async def events(
        self, run_id: str, *, from_seq: int = 0, follow: bool = False
    ) -> AsyncIterator[Event]:
        """The run's events: a snapshot, or with ``follow`` tailed live until an ending: a
        terminal event, or a suspension the run is still in. A suspension the log has already
        moved past (a question since answered, a pause resumed, a parked run cancelled) does not
        end the follow: replaying a finished run from its start reaches its real end."""
        from_seq = checked_seq(from_seq)
        store = self.store
        if not follow:
            for event in await store.read(run_id, from_seq=from_seq):
                yield event
            return
        async with closing(store.follow(run_id, from_seq=from_seq)) as log:
            async for event in log:
                yield event
                if event.kind in TERMINAL_KINDS:
                    return
                if event.kind in SUSPENDING_KINDS:
                    record = await store.get_run(run_id)
                    if record is None or record.last_seq <= event.seq:
                        return  # suspended there now: the follow's end

    def played_ending(self, run_id: str) -> Awaitable[Event | None]:
        """The ending this process's play of the run records next (``None`` at once if this
        process is not playing it)."""
        return self.runtime.played_ending(run_id)

    def awaited_ending(self, run_id: str) -> Awaitable[Event]:
        """The ending ``await run`` gets (see :mod:`agentdeck.runtime.awaiting`)."""
        return self.runtime.awaited_ending(run_id)

    async def logged_ending(self, run_id: str) -> Event:
        """The run's ending as its log tells it (waiting for it if the run still plays)."""
        return await self.runtime.logged_ending(run_id, await self.record(run_id))

    def context_of(self, run_id: str) -> Any:
        """The live context this process holds for ``run_id`` (``None`` if it holds none)."""
        return self.runtime.context_of(run_id)

    def wait_played(self, run_id: str) -> Awaitable[None]:
        """Wait until this process stops playing ``run_id`` (at once if it is not)."""
        return self.runtime.wait_played(run_id)

    # ------------------------------------------------------------------------------- acting

    def request_control(
        self, run_id: str, verb: ControlVerb, reason: str | None
    ) -> Awaitable[bool]:
        """Ask a run to pause or cancel (a suspended run is cancelled at once)."""
        optional_text(reason, "reason", name=run_id)
        return self.runtime.request_control(run_id, verb, reason)

    def resume(
        self, run_id: str, *, context: Any = None, reason: str = "resumed", play: bool = True
    ) -> Awaitable[bool]:
        """Continue a paused run; whether this call won. ``context`` falls back to the one
        this process holds for the run."""
        return self.runtime.resume(run_id, context=context, reason=reason, play=play)

    def retry(self, run_id: str, *, context: Any = None) -> Awaitable[Event]:
        """Start a retry of a failed or cancelled run; the new run's ``run.started``."""
        return self.runtime.retry(run_id, context=context)

    def fork(self, run_id: str, *, at: int, context: Any = None) -> Awaitable[Event]:
        """Start a fork of a run from its recorded point ``at``; the new run's
        ``run.started``."""
        return self.runtime.fork(run_id, at=at, context=context)

    def answer(
        self,
        run_id: str,
        value: Any,
        *,
        interrupt_id: str | None = None,
        context: Any = None,
        play: bool = True,
    ) -> Awaitable[Answered]:
        """Answer the question a run waits on, from one read of its log (see
        :meth:`Continuation.answer <agentdeck.runtime.continuation.Continuation.answer>`).
        ``context`` falls back to the one this process holds for the run."""
        checked_json(value, "value", name=run_id)
        optional_text(interrupt_id, "interrupt_id", name=run_id)
        return self.runtime.answer(
            run_id, value, interrupt_id=interrupt_id, context=context, play=play
        )


def recorded(record: RunRecord, state: RunState) -> RunRecord:
    """``record`` as the store indexes it once its log folds to ``state`` (a later state of the
    same run): what reading the record again would give, without the read."""
    if state.status is None or state.last_ts is None:
        raise NotFoundError(
            f"run '{record.run_id}' no longer exists", what="run", name=record.run_id
        )
    return dataclasses.replace(
        record,
        status=state.status,
        last_seq=state.last_seq,
        updated_at=state.last_ts,
        wake_at=state.wake_at,
    )
