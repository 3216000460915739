"""``deck.runs`` and the ``Run`` handle: find or start a run, then act on it.

A :class:`Run` is a deck-bound handle, not a second runtime: it caches no authoritative state
(every read goes to the store, so two handles on one run always agree) and delegates every
operation back through the deck's runtime. The one thing it holds is the ``context=`` it was
started with, reused by ``resume()`` and ``answer()``; a handle recovered with ``runs.get()``
has none, because a context is never written anywhere.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Generator, Mapping
from typing import TYPE_CHECKING, Any, Literal

from agentdeck.errors import (
    AnswerRefusedError,
    InvalidInputError,
    NotFoundError,
    RunFailedError,
    RunStateError,
    RunSuspendedError,
)
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    AnswerRefused,
    AnswerShape,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunStarted,
)
from agentdeck.model.results import InterruptResult, TurnResult, agent_output, workflow_output
from agentdeck.model.status import OpenInterrupt, RunState, fold
from agentdeck.ports import RunQuery, RunRecord
from agentdeck.runtime.runtime import closing
from agentdeck.vocabulary import SUSPENDED, TERMINAL, ControlVerb, RunStatus

if TYPE_CHECKING:
    from datetime import datetime

    from agentdeck.deck.deck import Deck
    from agentdeck.runtime.runtime import Budget

__all__ = ["Run", "Runs"]

_ENDING = frozenset(
    {"run.completed", "run.failed", "run.cancelled", "run.paused", "run.interrupted"}
)


class Run:
    """One run, addressed by its minted id. Every method reads or writes through the deck."""

    def __init__(self, deck: Deck, record: RunRecord, *, context: Any = None) -> None:
        self._deck = deck
        self._context = context
        self.id = record.run_id
        self.key = record.key
        self.namespace = record.namespace
        self.session_id = record.session_id
        self.name = record.name
        self.kind = record.invocable_kind

    @classmethod
    def opened(cls, deck: Deck, started: Event, *, context: Any = None) -> Run:
        """The handle on a run this process just opened, from the ``run.started`` it recorded
        (what its record would say, without building one)."""
        payload = started.payload
        assert isinstance(payload, RunStarted)
        run = cls.__new__(cls)
        run._deck, run._context = deck, context
        run.id, run.key, run.name = started.run_id, payload.key, payload.name
        run.namespace, run.session_id = started.namespace, started.session_id
        run.kind = payload.invocable_kind
        return run

    def __repr__(self) -> str:
        return f"Run(id={self.id!r}, name={self.name!r}, namespace={self.namespace!r})"

    # ------------------------------------------------------------------------------- reading

    async def status(self) -> RunStatus:
        """This run's current status, folded from its own events."""
        return (await self._record()).status

    def events(self, *, from_seq: int = 0, follow: bool = False) -> AsyncIterator[Event]:
        """This run's events: a snapshot by default; with ``follow=True``, tailed live until a
        terminal event or a suspension (the same boundary ``deck.stream()`` ends at)."""
        return self._events(from_seq, follow)

    async def _events(self, from_seq: int, follow: bool) -> AsyncIterator[Event]:
        store = self._deck._require_open().store
        if not follow:
            for event in await store.read(self.id, from_seq=from_seq):
                yield event
            return
        async with closing(store.follow(self.id, from_seq=from_seq)) as log:
            async for event in log:
                yield event
                if event.kind in _ENDING:
                    return

    async def pending(self) -> InterruptResult | None:
        """The oldest question this run waits on, or ``None`` if it is not ``WAITING_ANSWER``."""
        state = await self._state()
        if state.status is not RunStatus.WAITING_ANSWER or state.pending is None:
            return None
        return InterruptResult(run_id=self.id, interrupt=state.pending)

    async def pending_all(self) -> list[InterruptResult]:
        """Every open question, oldest first (several may be open at once)."""
        state = await self._state()
        if state.status is not RunStatus.WAITING_ANSWER:
            return []
        return [InterruptResult(run_id=self.id, interrupt=i) for i in state.interrupts]

    # ------------------------------------------------------------------------------- control

    async def pause(self, reason: str | None = None) -> bool:
        """Ask the run to stop at its next safe point. Returns at once, not when it stops."""
        runtime = self._deck._require_open()
        return await runtime.request_control(self.id, ControlVerb.PAUSE, reason)

    async def cancel(self, reason: str | None = None) -> bool:
        """Ask the run to stop for good; a suspended run ends at once. Cascades to children."""
        runtime = self._deck._require_open()
        return await runtime.request_control(self.id, ControlVerb.CANCEL, reason)

    async def resume(self) -> None:
        """Continue a paused run (no-op if it is not paused; on a waiting run it lifts a pending
        pause, and otherwise refuses: answer it instead)."""
        runtime = self._deck._require_open()
        await runtime.resume(self.id, context=self._context_for_continuation())

    async def answer(
        self, value: Any, *, interrupt_id: str | None = None, play: bool = True
    ) -> None:
        """Answer the question this run waits on and let it continue.

        ``interrupt_id`` is needed only when several questions are open. A value that does not
        fit the question's declared shape is refused with :class:`AnswerRefusedError` (and an
        ``answer.refused`` event) while the run stays parked. Answering a finished run does
        nothing; answering a running or paused one raises :class:`RunStateError` naming the
        call that is right.

        ``play=False`` records the answer without continuing the run in this process, for a
        deck that has no engine for it (the ``agentdeck`` command without a project): the run
        stays ``waiting_answer`` with the question closed, and a deck that has the engine
        continues it at its next sweep.
        """
        runtime = self._deck._require_open()
        state = await self._state()
        status = state.status
        if status is None or status in TERMINAL:
            return
        if status is not RunStatus.WAITING_ANSWER:
            hint = "resume" if status is RunStatus.PAUSED else None
            raise RunStateError(
                f"run '{self.id}' is {status.value}, not waiting for an answer"
                + ("; continue it with run.resume()" if hint else ""),
                run_id=self.id,
                status=status,
                accepted=(RunStatus.WAITING_ANSWER,),
                hint=hint,
            )
        signals = await runtime.control.pending(self.id)
        if any(s.verb is ControlVerb.PAUSE for s in signals):
            raise RunStateError(
                f"run '{self.id}' has a pause pending, which holds answers back; "
                "lift it with run.resume() first",
                run_id=self.id,
                status=status,
                accepted=(RunStatus.WAITING_ANSWER,),
                hint="resume",
            )
        interrupt = self._choose(state, interrupt_id)
        reason = _refusal(interrupt.expected, value)
        if reason is not None:
            with contextlib.suppress(RunStateError):
                await runtime.append(
                    self.id,
                    [AnswerRefused(interrupt_id=interrupt.interrupt_id, reason=reason)],
                    expect=(RunStatus.WAITING_ANSWER,),
                )
            raise AnswerRefusedError(
                run_id=self.id, interrupt_id=interrupt.interrupt_id, reason=reason
            )
        try:
            await runtime.answer(
                self.id,
                interrupt.interrupt_id,
                value,
                context=self._context_for_continuation(),
                last=len(state.interrupts) == 1,
                expect_seq=state.last_seq,
                play=play,
            )
        except RunStateError:
            # Someone else moved the run first (another answer, a cancel): say what it is now.
            now = await self._state()
            still_open = any(i.interrupt_id == interrupt.interrupt_id for i in now.interrupts)
            if now.status is RunStatus.WAITING_ANSWER and still_open:
                raise
            if now.status is not None and now.status in TERMINAL:
                return
            raise RunStateError(
                f"interrupt '{interrupt.interrupt_id}' of run '{self.id}' was answered or "
                "closed by another caller first",
                run_id=self.id,
                status=now.status,
                accepted=(RunStatus.WAITING_ANSWER,),
            ) from None

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
        # for a run played elsewhere, or already stopped.
        ending = await self._deck._require_open().played_ending(self.id)
        if ending is None:
            ending = await self._logged_ending()
        return self._shape(ending)

    async def _logged_ending(self) -> Event:
        runtime = self._deck._require_open()
        record = await self._record()
        if record.status in TERMINAL or record.status in SUSPENDED:
            [ending] = await runtime.store.read(self.id, from_seq=record.last_seq)
            if ending.kind in _ENDING:
                return ending
        async with closing(runtime.store.follow(self.id, from_seq=record.last_seq)) as log:
            async for event in log:
                if event.kind in _ENDING:
                    return event
        raise RunStateError(
            f"the log of run '{self.id}' ended without a final event",
            run_id=self.id,
            status=None,
        )

    def _shape(self, ending: Event) -> Any:
        payload = ending.payload
        if isinstance(payload, RunCompleted):
            if self.kind == "agent":
                return TurnResult(
                    output=agent_output(payload),
                    usage=payload.usage,
                    run_id=self.id,
                    session_id=self.session_id,
                    blocks=list(payload.output),
                    last_agent=payload.agent,
                )
            return workflow_output(payload)
        if isinstance(payload, RunFailed):
            raise RunFailedError(
                run_id=self.id,
                status=RunStatus.FAILED,
                error_code=str(payload.error_code),
                reason=payload.message,
                where=payload.where,
            )
        if isinstance(payload, RunCancelled):
            raise RunFailedError(run_id=self.id, status=RunStatus.CANCELLED, reason=payload.reason)
        status = RunStatus.PAUSED if ending.kind == "run.paused" else RunStatus.WAITING_ANSWER
        raise RunSuspendedError(run_id=self.id, status=status, pending=self._pending_of(ending))

    def _pending_of(self, ending: Event) -> InterruptResult | None:
        payload = ending.payload
        if not isinstance(payload, RunInterrupted):
            return None
        return InterruptResult(
            run_id=self.id,
            interrupt=OpenInterrupt(
                interrupt_id=payload.interrupt_id,
                seq=ending.seq,
                payload=payload.payload,
                reason=str(payload.reason),
                expected=payload.expected,
            ),
        )

    # ------------------------------------------------------------------------------- helpers

    async def _record(self) -> RunRecord:
        record = await self._deck._require_open().store.get_run(self.id)
        if record is None:
            raise NotFoundError(f"run '{self.id}' no longer exists", what="run", name=self.id)
        return record

    async def _state(self) -> RunState:
        return fold(await self._deck._require_open().store.read(self.id))

    def _context_for_continuation(self) -> Any:
        if self._context is not None:
            return self._context
        return self._deck._require_open().context_of(self.id)

    def _choose(self, state: RunState, interrupt_id: str | None) -> OpenInterrupt:
        open_ids = [i.interrupt_id for i in state.interrupts]
        if interrupt_id is None:
            if len(state.interrupts) == 1:
                return state.interrupts[0]
            raise InvalidInputError(
                f"run '{self.id}' has {len(open_ids)} open questions "
                f"({', '.join(open_ids)}); say which with answer(value, interrupt_id=...)",
                name=self.id,
                field="interrupt_id",
            )
        for interrupt in state.interrupts:
            if interrupt.interrupt_id == interrupt_id:
                return interrupt
        raise InvalidInputError(
            f"run '{self.id}' has no open question '{interrupt_id}'; open: "
            + (", ".join(open_ids) or "none"),
            name=self.id,
            field="interrupt_id",
        )


def _refusal(expected: Any, value: Any) -> str | None:
    """Why ``value`` does not fit the interrupt's declared shape (never echoing the value)."""
    if not isinstance(expected, AnswerShape):
        return None
    if expected.options is not None and value not in expected.options:
        return "the answer must be one of the offered options: " + ", ".join(
            repr(option) for option in expected.options
        )
    if expected.json_schema is not None:
        import jsonschema

        validator = jsonschema.Draft202012Validator(expected.json_schema)
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
        if errors:
            first = errors[0]
            where = "/".join(str(p) for p in first.absolute_path) or "the answer"
            return f"{where} does not match the expected schema ({first.validator} failed)"
    return None


class Runs:
    """``deck.runs``: start a run, find one by id or key, list them. Nothing per-run lives here."""

    def __init__(self, deck: Deck) -> None:
        self._deck = deck

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
        store = self._deck._require_open().store
        record = await (store.get_run(id) if id is not None else store.find_key(namespace, key))  # type: ignore[arg-type]
        if record is None or record.namespace != namespace:
            what = f"id '{id}'" if id is not None else f"key '{key}'"
            where = f"namespace '{namespace}'" if namespace is not None else "the default namespace"
            raise NotFoundError(
                f"no run with {what} in {where}", what="run", name=id or key, namespace=namespace
            )
        return Run(self._deck, record)

    async def list(
        self,
        *,
        namespace: str | None = None,
        status: RunStatus | None = None,
        session_id: str | None = None,
        limit: int | None = None,
    ) -> list[Run]:
        """Runs of one namespace (no cross-namespace listing), oldest first."""
        store = self._deck._require_open().store
        runs: list[Run] = []
        cursor: str | None = None
        remaining = limit
        while True:
            page = await store.list_runs(
                RunQuery(
                    namespace=namespace,
                    status=status,
                    session_id=session_id,
                    limit=min(remaining, 500) if remaining is not None else 500,
                    cursor=cursor,
                )
            )
            runs.extend(Run(self._deck, record) for record in page.runs)
            if remaining is not None:
                remaining -= len(page.runs)
                if remaining <= 0:
                    break
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        return runs
