"""The execution port: *where* a deck's runs execute.

A deck records every run in its event store; what happens next is the execution's decision. The
default (:class:`~agentdeck.runtime.in_process.InProcessExecution`, ``AGENTDECK_EXECUTION``
unset) plays the run at once in the process that opened it, and leases plus the deck's sweep
hand a dead process's runs on. An execution that *queues* (Temporal, ``temporal://...``) records
the run as ``queued`` and hands only its id to a pool of workers; one of them plays it through
:meth:`RecordedRuns.play_admitted`, reading everything it needs from the shared store. The
executor never holds run content: inputs, messages and outputs stay in the event store.

Import these names from :mod:`agentdeck.ports`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import ClassVar, Protocol

from agentdeck.errors import ConfigError
from agentdeck.ports.stores import RunRecord

__all__ = ["Admission", "Execution", "RecordedRuns"]


@dataclass(frozen=True, slots=True)
class Admission:
    """A run the store has just opened, handed to the execution.

    Only ids travel: an execution that queues puts ``run_id`` (and ``namespace``, for its own
    bookkeeping) in its queue and nothing else.
    """

    run_id: str
    name: str
    """The invocable the run was started from (what a worker must have in its catalog)."""
    namespace: str | None
    play_here: Callable[[], None]
    """Starts playing the run in this process, in a task of its own. The in-process execution
    calls it; an execution that queues never does (its workers play the run from the store)."""


class RecordedRuns(Protocol):
    """What a worker plays runs through: the runtime of the worker's own open deck."""

    def play_admitted(self, run_id: str) -> Awaitable[RunRecord]:
        """Claim the queued run ``run_id`` -- or continue it, when it was answered, asked to
        resume, or left by a worker that stopped or died -- play it to its next ending, and
        return the status that ending left it in (suspended or terminal).

        Raises :class:`~agentdeck.errors.NotFoundError` for a run the store does not have,
        :class:`~agentdeck.errors.RunStateError` for one that is no longer queued (another
        worker claimed it, or it was cancelled; its ``status`` says which), and
        :class:`~agentdeck.errors.ReplayError` for one started from an invocable this worker's
        deck does not have.
        """
        ...


class Execution(ABC):
    """Where runs execute: the in-process runtime, or an engine that queues them to workers.

    Built unopened by the factory its plugin registered (``agentdeck_register_executions``),
    opened when the deck opens and closed when it closes.
    """

    queues: ClassVar[bool] = True
    """Whether admitted runs wait for a worker instead of playing where they were opened.

    A run admitted to an execution that queues is recorded ``queued`` until a worker claims it;
    such an execution needs an event store every worker shares (a deck on ``memory://``
    refuses to build with it), and it replaces leases and the sweep for its runs, so a deck on
    it runs no sweep."""

    url: str = ""
    """The URL the execution was built for, as ``AGENTDECK_EXECUTION`` gave it."""

    async def open(self) -> None:
        """Connect (a client of the engine, for instance). Called once, when the deck opens."""

    async def close(self) -> None:
        """Release what :meth:`open` acquired. Idempotent."""

    @abstractmethod
    async def admit(self, admission: Admission) -> None:
        """Hand a run the store just recorded to wherever it executes.

        Called once per run, after its ``run.started`` (and, when :attr:`queues`, its
        ``run.queued``) is recorded. An execution that queues returns once the run is durably
        in its queue; raising leaves the run recorded and queued, for an operator to cancel.
        """

    async def wake(self, run_id: str) -> None:
        """A run of this execution was answered, or asked to resume, and the answer or the
        request is recorded: have a worker continue it. Called only when :attr:`queues`; the
        default does nothing (an execution whose waits are the store's own needs no call)."""

    async def work(self, runs: RecordedRuns, *, concurrency: int) -> None:
        """Serve as a worker: play queued runs through ``runs``, at most ``concurrency`` at a
        time, until cancelled. ``agentdeck worker`` calls this.

        The default refuses: an execution that does not queue has no runs waiting for a worker.
        """
        raise ConfigError(
            "this deck's runs play in the process that starts them (AGENTDECK_EXECUTION is "
            "unset or in-process), so there is nothing for a worker to take; set "
            "AGENTDECK_EXECUTION to an execution that queues runs, such as "
            "temporal://HOST:PORT/NAMESPACE?task_queue=NAME",
            setting="AGENTDECK_EXECUTION",
        )
