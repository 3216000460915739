"""Retrying and forking: a new run that goes on from what another one recorded.

Neither touches the origin: its log stays as it ended, and the new run is a run of its own
(its own id, log, lease and ending), linked to the origin in its ``run.started``
(``retry_of``, ``forked_from={run_id, at}``). What the new run reuses of the origin is copied
into its own log right after ``run.started`` (the engine's :class:`~agentdeck.ports.ForkPlan`
says what), so it is continued, read and forked again from that log alone, in any process,
even once the origin is pruned.

* **retry** takes a failed or cancelled run. An engine that forks (``capabilities.forks``)
  goes on from where the origin stopped, reusing everything it completed (a native
  ``@workflow``'s journal: step bodies that completed are not executed again). Any other engine
  starts the run again with the same recorded input (an OpenAI agent's turn is asked again).
* **fork** takes a run in any state and a point ``at`` in the engine's terms (a native
  operation ordinal, a LangGraph step); an engine that cannot fork refuses with
  :class:`~agentdeck.errors.ForkUnsupportedError`.

The new run keeps the origin's namespace, session and input; it claims no key (a key names one
run for good) and has no parent (it is started by an operator, not by the origin's parent).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from agentdeck.errors import InvalidInputError, NotFoundError, ReplayError, RunStateError
from agentdeck.model.events import Event
from agentdeck.model.payloads import ForkOrigin, RunStarted
from agentdeck.model.status import fold
from agentdeck.ports import Engine, EventStore, Invocable
from agentdeck.runtime.config import StartRequest
from agentdeck.runtime.opening import Opener
from agentdeck.vocabulary import RunStatus

__all__ = ["RETRYABLE", "Forking"]

RETRYABLE = (RunStatus.FAILED, RunStatus.CANCELLED)
"""The statuses a run can be retried from: it ended without finishing."""

_HINTS = {
    RunStatus.PAUSED: "resume",
    RunStatus.WAITING_ANSWER: "answer",
    RunStatus.RUNNING: "cancel",
    RunStatus.COMPLETED: "fork",
}


class Forking:
    """Starts retries and forks for one runtime, through its opener."""

    def __init__(
        self,
        *,
        store: EventStore,
        invocables: Mapping[str, Invocable],
        engines: Mapping[str, Engine],
        opener: Opener,
    ) -> None:
        self.store = store
        self.invocables = invocables
        self.engines = engines
        self.opener = opener

    async def retry(self, run_id: str, *, context: Any = None, deltas: bool = True) -> Event:
        """Start a retry of the failed or cancelled run ``run_id``; its ``run.started``.

        Raises :class:`RunStateError` for a run in any other status (naming the call that
        fits: resume, answer, cancel, or fork for a completed one).
        """
        history, started = await self._origin(run_id)
        status = fold(history).status
        if status not in RETRYABLE:
            raise RunStateError(
                f"run '{run_id}' is {status.value if status else 'unknown'}; only a failed or "
                "cancelled run is retried",
                run_id=run_id,
                status=status,
                accepted=RETRYABLE,
                hint=_HINTS.get(status) if status is not None else None,
            )
        invocable, engine = self._resolve(run_id, started)
        request = self._request(history[0], started, invocable, context, deltas)
        if engine.capabilities.forks:
            plan = await engine.plan_fork(invocable, history, at=None)
            request = _with(request, seed=plan.seed)
        return await self.opener.launch(_with(request, retry_of=run_id))

    async def fork(
        self, run_id: str, *, at: int, context: Any = None, deltas: bool = True
    ) -> Event:
        """Start a fork of ``run_id`` from its recorded point ``at``; its ``run.started``.

        Raises :class:`ForkUnsupportedError` when the run's engine cannot fork, and
        :class:`InvalidInputError` (``field="at"``) for a point its log does not hold.
        """
        if isinstance(at, bool) or not isinstance(at, int):
            raise InvalidInputError(
                f"fork point {at!r} is not a step number (an int)", name=run_id, field="at"
            )
        history, started = await self._origin(run_id)
        invocable, engine = self._resolve(run_id, started)
        plan = await engine.plan_fork(invocable, history, at=at)
        request = self._request(history[0], started, invocable, context, deltas)
        origin = ForkOrigin(run_id=run_id, at=plan.at)
        return await self.opener.launch(_with(request, forked_from=origin, seed=plan.seed))

    # ------------------------------------------------------------------------------- parts

    async def _origin(self, run_id: str) -> tuple[Sequence[Event], RunStarted]:
        history = await self.store.read(run_id)
        if not history or not isinstance(history[0].payload, RunStarted):
            raise NotFoundError(f"run '{run_id}' has no log", what="run", name=run_id)
        return history, history[0].payload

    def _resolve(self, run_id: str, started: RunStarted) -> tuple[Invocable, Engine]:
        invocable = self.invocables.get(started.name)
        if invocable is None:
            raise ReplayError(
                f"run '{run_id}' was started from {started.name!r}, which this deck does not "
                "have, so it cannot be retried or forked here",
                run_id=run_id,
                reason="invocable_missing",
            )
        return invocable, self.engines[invocable.engine]

    @staticmethod
    def _request(
        first: Event, started: RunStarted, invocable: Invocable, context: Any, deltas: bool
    ) -> StartRequest:
        return StartRequest(
            invocable=invocable,
            input=list(started.input),
            context=context,
            session_id=first.session_id,
            namespace=first.namespace,
            deltas=deltas,
            trace_context=started.trace_context,
        )


def _with(request: StartRequest, **changes: Any) -> StartRequest:
    return dataclasses.replace(request, **changes)
