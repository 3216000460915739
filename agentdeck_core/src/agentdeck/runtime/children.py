"""Child runs: an engine starting another invocable of the deck as a run of its own, and the
parent continuing once the child ends.

An engine gets ``invoke_child(name, input, *, key=None)`` (:meth:`Children.invoker`); the child
is an ordinary run with ``parent_run_id`` set, the parent's namespace and context. A child that
parks makes the parent park too, as ``run.paused(waiting_on="child_runs", waiting_for=[...])``:
the typed fields say what it waits on, and nothing here reads the pause's human-readable
reason. When a child's play ends it, the runtime resumes a parent paused waiting for it
(:meth:`Children.child_ended`), and a parent that paused just after its child ended is resumed
too (:meth:`Children.parent_paused`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agentdeck.errors import (
    DuplicateKeyError,
    NotFoundError,
    ReplayError,
    RunStateError,
    RunSuspendedError,
)
from agentdeck.model.payloads import RunPaused
from agentdeck.model.results import result_of
from agentdeck.ports import Engine, EventStore, Invocable, Invocation
from agentdeck.runtime.config import StartRequest
from agentdeck.runtime.opening import Opener
from agentdeck.runtime.recording import Recorder
from agentdeck.vocabulary import SUSPENDED, TERMINAL, RunStatus, WaitKind

__all__ = ["Children"]


class Children:
    """Starts child runs for the engines of one runtime, and wakes their parents."""

    def __init__(
        self,
        *,
        store: EventStore,
        invocables: Mapping[str, Invocable],
        engines: Mapping[str, Engine],
        recorder: Recorder,
        opener: Opener,
        resume: Callable[..., Awaitable[bool]],
        queued: bool = False,
    ) -> None:
        """``resume(run_id, reason=...)`` continues a parent (the runtime's own, so on an
        execution that queues it is recorded and the parent's worker woken, not played here);
        ``queued``: children are admitted to workers rather than played in this process."""
        self.store = store
        self.invocables = invocables
        self.engines = engines
        self.recorder = recorder
        self.opener = opener
        self.resume = resume
        self.queued = queued

    def invoker(self, parent: Invocation) -> Callable[..., Awaitable[Any]]:
        """``invoke_child(name, input, *, key=None) -> result`` for the engine playing ``parent``.

        Starts ``name`` as a child run (the parent's namespace and context, ``parent_run_id``
        set) and returns its result as JSON data: a workflow's return value, an agent's final
        text or structured output. A ``key`` already claimed attaches to the run holding it, so a
        replay after a crash finds the same child instead of starting another. A child that fails
        or is cancelled raises ``RunFailedError``; one that parks raises ``RunSuspendedError`` —
        the parent then parks too, and is resumed here when the child ends.

        The closure holds the parent's fields, not the invocation that will hold the closure:
        a reference cycle per run would leave every run's invocation to the cyclic garbage
        collector instead of freeing it when the play ends.
        """
        context, namespace, parent_run_id, deltas = (
            parent.context,
            parent.namespace,
            parent.run_id,
            parent.deltas,
        )

        async def invoke_child(name: str, input: Any = None, *, key: str | None = None) -> Any:
            invocable = self.invocables.get(name)
            if invocable is None:
                raise NotFoundError(
                    f"no agent or workflow named {name!r}; available: "
                    + ", ".join(sorted(self.invocables)),
                    what="invocable",
                    name=name,
                    available=sorted(self.invocables),
                )
            blocks = self.engines[invocable.engine].prepare_input(invocable, input)
            try:
                record, _ = await self.opener.start(
                    StartRequest(
                        invocable=invocable,
                        input=blocks,
                        context=context,
                        namespace=namespace,
                        parent_run_id=parent_run_id,
                        key=key,
                        deltas=deltas,
                    )
                )
                child_id = record.run_id
            except DuplicateKeyError as held:
                child_id = held.holder_run_id
            return await self.outcome(child_id, kind=invocable.kind)

        return invoke_child

    async def outcome(self, run_id: str, *, kind: str) -> Any:
        """Wait for a run's play to end and return its result as JSON data, or raise why it
        has none (:func:`~agentdeck.model.results.result_of`).

        Where children are queued for workers, a child that has not ended raises
        ``RunSuspendedError`` at once, whatever it is doing: the parent parks rather than hold
        a worker's slot while it waits, and the child's end resumes it (:meth:`child_ended`) on
        whichever worker takes it. Waiting in place could wait for good: with every slot held by
        a waiting parent, no worker is left to play their children.
        """
        recorder = self.recorder
        ending = await recorder.played_ending(run_id)
        if ending is None:
            record = await recorder.record(run_id)
            if self.queued and record.status not in TERMINAL:
                raise RunSuspendedError(run_id=run_id, status=record.status)
            if record.status in SUSPENDED:
                # Parked, whatever its last event: one a deck has yet to act on (an answer
                # recorded without playing) parks the parent too rather than hold its play.
                ending = await recorder.stopped_ending(run_id, record)
                if ending is None:
                    raise RunSuspendedError(run_id=run_id, status=record.status)
            else:
                ending = await recorder.logged_ending(run_id, record)
        return result_of(ending, kind=kind, as_json=True)

    async def parent_paused(self, run_id: str, paused: RunPaused) -> None:
        """Close the gap between a parent deciding to wait and its pause being recorded: a child
        that ended in between found the parent still running and could not wake it."""
        for child_id in paused.waiting_for:
            child = await self.store.get_run(child_id)
            if child is not None and child.status in TERMINAL:
                await self.child_ended(run_id, child_id)
                return

    async def child_ended(self, parent_run_id: str, child_run_id: str) -> None:
        """A child ended: a parent paused waiting for it continues (if it still waits)."""
        parent = await self.store.get_run(parent_run_id)
        if parent is None or parent.status is not RunStatus.PAUSED:
            return
        last = await self.store.read(parent_run_id, from_seq=parent.last_seq, limit=1)
        paused = last[0].payload if last else None
        if (
            not isinstance(paused, RunPaused)
            or paused.waiting_on != WaitKind.CHILD_RUNS
            or child_run_id not in paused.waiting_for
        ):
            return
        with contextlib.suppress(RunStateError, ReplayError, NotFoundError):
            await self.resume(parent_run_id, reason=f"child run {child_run_id} ended")
