"""``deck.runs`` and the ``Run`` handle: find or start a run, then act on it.

A :class:`Run` is a deck-bound handle, not a second runtime: it caches no authoritative state
(every read goes to the store, so two handles on one run always agree) and acts through the
deck's :class:`~agentdeck.deck.service.RunService`. The one thing it holds is the ``context=``
it was started with, reused by ``resume()`` and ``answer()``; a handle recovered with
``runs.get()`` has none, because a context is never written anywhere (a continuation in the
process that started the run still finds the one that process holds).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator, Mapping
from typing import TYPE_CHECKING, Any, Literal

from agentdeck.deck.boundary import checked_limit
from agentdeck.errors import InvalidInputError
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunStarted
from agentdeck.model.results import InterruptResult, result_of
from agentdeck.ports import RunQuery, RunRecord
from agentdeck.vocabulary import ControlVerb, RunStatus

if TYPE_CHECKING:
    from datetime import datetime

    from agentdeck.deck.deck import Deck
    from agentdeck.deck.service import RunService
    from agentdeck.runtime.config import Budget

__all__ = ["Run", "Runs"]


class Run:
    """One run, addressed by its minted id. Every method reads or writes through the deck."""

    def __init__(self, service: RunService, record: RunRecord, *, context: Any = None) -> None:
        self._service = service
        self._context = context
        self.id = record.run_id
        self.key = record.key
        self.namespace = record.namespace
        self.session_id = record.session_id
        self.name = record.name
        self.kind = record.invocable_kind

    @classmethod
    def opened(cls, service: RunService, started: Event, *, context: Any = None) -> Run:
        """The handle on a run this process just opened, from the ``run.started`` it recorded
        (what its record would say, without building one)."""
        payload = started.payload
        assert isinstance(payload, RunStarted)
        run = cls.__new__(cls)
        run._service, run._context = service, context
        run.id, run.key, run.name = started.run_id, payload.key, payload.name
        run.namespace, run.session_id = started.namespace, started.session_id
        run.kind = payload.invocable_kind
        return run

    def __repr__(self) -> str:
        return f"Run(id={self.id!r}, name={self.name!r}, namespace={self.namespace!r})"

    # ------------------------------------------------------------------------------- reading

    async def status(self) -> RunStatus:
        """This run's current status, folded from its own events."""
        return (await self._service.record(self.id)).status

    def events(self, *, from_seq: int = 0, follow: bool = False) -> AsyncIterator[Event]:
        """This run's events: a snapshot by default; with ``follow=True``, tailed live until a
        terminal event or a suspension the run is still in (the boundary ``deck.stream()`` ends
        at; a suspension the log has moved past is streamed through, so following a finished
        run from its start reaches its end)."""
        return self._service.events(self.id, from_seq=from_seq, follow=follow)

    async def pending(self) -> InterruptResult | None:
        """The oldest question this run waits on, or ``None`` if it is not ``WAITING_ANSWER``."""
        state = await self._service.state(self.id)
        if state.status is not RunStatus.WAITING_ANSWER or state.pending is None:
            return None
        return InterruptResult(run_id=self.id, interrupt=state.pending)

    async def pending_all(self) -> list[InterruptResult]:
        """Every open question, oldest first (several may be open at once)."""
        state = await self._service.state(self.id)
        if state.status is not RunStatus.WAITING_ANSWER:
            return []
        return [InterruptResult(run_id=self.id, interrupt=i) for i in state.interrupts]

    # ------------------------------------------------------------------------------- control

    async def pause(self, reason: str | None = None) -> bool:
        """Ask the run to stop at its next safe point. Returns at once, not when it stops.

        A paused run is left as it is; a finished one refuses with :class:`RunFinishedError`
        (:class:`RunCancelledError` when it was cancelled)."""
        return await self._service.request_control(self.id, ControlVerb.PAUSE, reason)

    async def cancel(self, reason: str | None = None) -> bool:
        """Ask the run to stop for good; a suspended run ends at once. Cascades to children.

        A cancelled run is left as it is; one that completed or failed refuses with
        :class:`RunFinishedError`."""
        return await self._service.request_control(self.id, ControlVerb.CANCEL, reason)

    async def resume(self) -> None:
        """Continue a paused run (no-op on a running one; on a waiting run it lifts a pending
        pause, and otherwise refuses: answer it instead). A finished run refuses with
        :class:`RunFinishedError`."""
        await self._service.resume(self.id, context=self._context)

    async def answer(
        self, value: Any, *, interrupt_id: str | None = None, play: bool = True
    ) -> None:
        """Answer the question this run waits on and let it continue.

        Returns only when this value is the one recorded for the question -- now, or by the
        very same answer earlier (a retry is safe). Otherwise it raises a
        :class:`RunStateError` saying what happened: :class:`AlreadyAnsweredError` when another
        caller answered first (with the winner's ``origin``, never its value),
        :class:`RunCancelledError` / :class:`RunFinishedError` when the run ended first, and a
        plain :class:`RunStateError` naming the call that is right for a running or paused run.

        ``interrupt_id`` is needed only when several questions are open (pass it anyway when
        answering a question read earlier: the answer is then judged against that question).
        A value that does not fit the question's declared shape is refused with
        :class:`AnswerRefusedError` (and an ``answer.refused`` event) while the run stays parked.

        ``play=False`` records the answer without continuing the run in this process, for a
        deck that has no engine for it (the ``agentdeck`` command without a project): the run
        stays ``waiting_answer`` with the question closed, and a deck that has the engine
        continues it at its next sweep.
        """
        await self._service.answer(
            self.id, value, interrupt_id=interrupt_id, context=self._context, play=play
        )

    async def retry(self, *, context: Any = None) -> Run:
        """Start a new run retrying this failed or cancelled one (see :meth:`Runs.retry`)."""
        started = await self._service.retry(self.id, context=context)
        return Run.opened(self._service, started, context=context)

    async def fork(self, *, at: int, context: Any = None) -> Run:
        """Start a new run forked from this one at its recorded point ``at`` (see
        :meth:`Runs.fork`)."""
        started = await self._service.fork(self.id, at=at, context=context)
        return Run.opened(self._service, started, context=context)

    # ------------------------------------------------------------------------------- result

    def __await__(self) -> Generator[Any, None, Any]:
        return self.result().__await__()

    async def result(self) -> Any:
        """Wait for the run to end and return its result (``await run`` does the same).

        A ``TurnResult`` for an agent; the body's return value for a workflow. A run that stops
        without finishing raises :class:`RunSuspendedError` instead of hanging; one that failed
        or was cancelled raises :class:`RunFailedError`.
        """
        # A run this process is playing hands its ending over directly; the log is read only
        # for a run played elsewhere, or already stopped. A parent paused on children that
        # still play is followed past that pause: it goes on by itself.
        ending = await self._service.awaited_ending(self.id)
        return result_of(ending, kind=self.kind)


class Runs:
    """``deck.runs``: start a run, find one by id or key, list them. Nothing per-run lives here."""

    def __init__(self, deck: Deck, service: RunService) -> None:
        self._deck = deck  # which starts runs: it resolves names and prepares input
        self._service = service

    async def start(
        self,
        name: str,
        input: Any = None,
        *,
        context: Any = None,
        session_id: str | None = None,
        namespace: str | None = None,
        key: str | None = None,
        deadline: datetime | None = None,
        budget: Budget | None = None,
        if_exists: Literal["raise", "return"] = "raise",
        trace_context: Mapping[str, str] | None = None,
    ) -> Run:
        """Start ``name`` and return its handle without waiting for it.

        ``key=`` claims ``(namespace, key)`` for good: reusing it raises
        :class:`~agentdeck.errors.DuplicateKeyError` naming the holder — unless
        ``if_exists="return"``, which hands back the holder's handle instead (an idempotent retry
        after an unknown outcome).

        ``trace_context=`` is the caller's W3C trace context, the headers of a traced request
        (``{"traceparent": "00-<trace id>-<span id>-01", "tracestate": ...}``, what an
        OpenTelemetry propagator injects into a dict): it is recorded in ``run.started``, and the
        trace observers render the run under that span, in that trace. A malformed
        ``traceparent`` raises :class:`~agentdeck.errors.InvalidInputError`.
        """
        return await self._deck._start(
            name,
            input,
            context=context,
            session_id=session_id,
            namespace=namespace,
            key=key,
            deadline=deadline,
            budget=budget,
            if_exists=if_exists,
            trace_context=trace_context,
        )

    async def get(
        self, id: str | None = None, *, namespace: str | None = None, key: str | None = None
    ) -> Run:
        """The run with this id, or the one holding ``(namespace, key)``; never mutates.

        Exactly one of ``id``/``key``. Raises :class:`NotFoundError` for a run this namespace
        has never heard of. The handle carries no context.
        """
        if (id is None) == (key is None):
            raise InvalidInputError(
                "runs.get() takes exactly one of id or key", field="id" if id is None else "key"
            )
        record = await self._service.find(id, namespace=namespace, key=key)
        return Run(self._service, record)

    async def retry(self, id: str, *, namespace: str | None = None, context: Any = None) -> Run:
        """Retry the failed or cancelled run ``id`` as a new run, and return its handle.

        The new run records ``retry_of=<id>`` in its ``run.started`` and keeps the origin's
        input, namespace and session. On an engine that forks (the native ``@workflow`` engine,
        LangGraph) it goes on from where the origin stopped: a workflow's completed steps are
        reused from the origin's journal, not executed again. On any other (an OpenAI agent) it
        is the same input started again. A run in another status raises
        :class:`~agentdeck.errors.RunStateError`.
        """
        record = await self._service.find(id, namespace=namespace)
        started = await self._service.retry(record.run_id, context=context)
        return Run.opened(self._service, started, context=context)

    async def fork(
        self, id: str, *, at: int, namespace: str | None = None, context: Any = None
    ) -> Run:
        """Fork the run ``id`` from its recorded point ``at`` as a new run; its handle.

        ``at`` is the engine's point: for a native ``@workflow`` the step number (operations
        ``0 .. at-1`` of its journal are reused, the body executes for real from operation
        ``at``); for LangGraph the step whose checkpoint the graph goes on from. The new run
        records ``forked_from={run_id, at}``. An engine that cannot fork raises
        :class:`~agentdeck.errors.ForkUnsupportedError`; a point the log does not hold,
        :class:`~agentdeck.errors.InvalidInputError`.
        """
        record = await self._service.find(id, namespace=namespace)
        started = await self._service.fork(record.run_id, at=at, context=context)
        return Run.opened(self._service, started, context=context)

    async def list(
        self,
        *,
        namespace: str | None = None,
        status: RunStatus | None = None,
        session_id: str | None = None,
        limit: int | None = None,
    ) -> list[Run]:
        """Runs of one namespace (no cross-namespace listing), oldest first."""
        checked_limit(limit)
        service = self._service
        runs: list[Run] = []
        cursor: str | None = None
        remaining = limit
        while True:
            page = await service.list_runs(
                RunQuery(
                    namespace=namespace,
                    status=status,
                    session_id=session_id,
                    limit=min(remaining, 500) if remaining is not None else 500,
                    cursor=cursor,
                )
            )
            runs.extend(Run(service, record) for record in page.runs)
            if remaining is not None:
                remaining -= len(page.runs)
                if remaining <= 0:
                    break
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        return runs
