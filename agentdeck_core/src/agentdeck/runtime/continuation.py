"""Continuing a suspended run: resume, answer, and the continuations a sweep owes.

Continuing is one conditional append of ``run.resumed`` (with the answer that closes the last
open question, for an answer): whichever process wins it plays the run, from its log and the
store's engine-state area; a loser is told what the run is now. The rules of an answer -- it
needs a run waiting for one and no pending pause, names its question when several are open,
fits the question's declared shape, and is recorded only if the log has not moved since it was
read -- are judged by :mod:`agentdeck.runtime.answers` and applied by
:meth:`Continuation.answer`, and nowhere else.

A process without the run's engine (the ``agentdeck`` command without a project) records the
decision and nothing more (``play=False``): an ``answer.recorded`` closing the last question, or
``control.requested(verb="resume")`` on a paused run. Each deck's sweep continues such runs, the
runs a closing deck paused, and paused runs whose timer is due (:meth:`Continuation.wake_due`,
:meth:`Continuation.continue_owed`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentdeck.errors import (
    AgentDeckError,
    AnswerRefusedError,
    NotFoundError,
    ReplayError,
    RunStateError,
)
from agentdeck.model.clock import Clock
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    AnswerRecorded,
    AnswerRefused,
    ControlRequested,
    Payload,
    RunPaused,
    RunResumed,
    RunStarted,
)
from agentdeck.model.status import RunState, fold
from agentdeck.ports import Engine, Entry, EventStore, Invocable, Invocation, RunQuery, RunRecord
from agentdeck.runtime.answers import judge_answer
from agentdeck.runtime.control import ControlRequests, RunControl, refuse_finished
from agentdeck.runtime.held import HeldRuns
from agentdeck.runtime.play import CLOSING_PAUSE_REASON, Player
from agentdeck.runtime.recording import Recorder
from agentdeck.vocabulary import SUSPENDED, TERMINAL, ControlVerb, RunStatus

__all__ = ["Answered", "Continuation", "refuse_changed_code"]

log = logging.getLogger("agentdeck.runtime")

_ANSWER_ATTEMPTS = 8
"""Reads of the log one answer may take when its conditional append keeps losing to events that
leave its question open; each loss means some other writer made progress."""


@dataclass(frozen=True, slots=True)
class Answered:
    """What an answer did, from the one read of the log it was decided on.

    ``before`` is the run as that read folded it, ``appended`` what the answer wrote, and
    ``interrupt_id`` the question it answered. ``appended`` is empty only when the very same
    answer was already recorded (a retry): an answer that cannot be recorded raises instead.
    """

    before: RunState
    appended: Sequence[Event]
    interrupt_id: str | None

    @property
    def after(self) -> RunState:
        """The run as the answer left it, before any play of it moved on (folded on demand:
        a caller that only answers does not pay for it)."""
        return fold(self.appended, self.before)


def refuse_changed_code(
    run_id: str, started: RunStarted, invocable: Invocable, *, opened: str, here: str, note: str
) -> None:
    """Refuse to play ``run_id`` from its log on other code than it started with.

    ``run.started`` pins the digest of the code the run was opened with, and playing its log on
    changed code could repeat or skip its steps. So a worker claiming a queued run and a deck
    continuing a suspended one both refuse it here, before they append anything, with
    :class:`~agentdeck.errors.ReplayError` (``reason="code_changed"``); a digest missing on
    either side proves no change. The caller words the message for where it stands: how the run
    was ``opened`` ("started"), who ``here`` has the other code ("this deck"), and a ``note``
    after the semicolon (what to do, or why it matters).
    """
    if (
        invocable.code_digest is not None
        and started.code_digest is not None
        and invocable.code_digest != started.code_digest
    ):
        raise ReplayError(
            f"run '{run_id}' {opened} with different code for {started.name!r} than {here} "
            f"has; {note}",
            run_id=run_id,
            reason="code_changed",
        )


class Continuation:
    """Resumes and answers runs for one runtime, and finds the continuations it owes."""

    def __init__(
        self,
        *,
        store: EventStore,
        invocables: Mapping[str, Invocable],
        engines: Mapping[str, Engine],
        clock: Clock,
        recorder: Recorder,
        held: HeldRuns,
        player: Player,
        control: RunControl,
        requests: ControlRequests,
    ) -> None:
        self.store = store
        self.invocables = invocables
        self.engines = engines
        self.clock = clock
        self.recorder = recorder
        self.held = held
        self.player = player
        self.control = control
        self.requests = requests
        self.closed = False
        """Set when the runtime closes: a closing deck admits no continuations from its sweep."""
        # run id -> last seq the sweep already checked for an owed continuation.
        self._owed_checked: dict[str, int] = {}

    # ------------------------------------------------------------------------------- resume

    async def resume(
        self, run_id: str, *, context: Any = None, reason: str = "resumed", play: bool = True
    ) -> bool:
        """Continue a paused run (conditional ``run.resumed``); returns whether this call won.

        On a waiting run it lifts a pending pause, and otherwise refuses (answer it instead).
        A finished run refuses with :class:`~agentdeck.errors.RunFinishedError` (or
        :class:`~agentdeck.errors.RunCancelledError`): it cannot go on.
        A pending pause on a running run is withdrawn; a pending cancel on a paused run ends it.

        ``play=False`` is for a process that has no engine for the run: a paused run is not
        continued here, the request is recorded as ``control.requested(verb="resume")`` and a
        deck that has the engine continues it at its next sweep.
        """
        port = self.requests.port
        record = await self.recorder.record(run_id)
        if record.status in TERMINAL:
            await refuse_finished(self.store, run_id, record.status, "resume")
        if record.status is RunStatus.RUNNING:
            await port.withdraw(run_id, ControlVerb.PAUSE)
            return False
        if record.status is RunStatus.WAITING_ANSWER:
            if await port.withdraw(run_id, ControlVerb.PAUSE):
                return False
            raise RunStateError(
                f"run '{run_id}' is waiting for an answer; continue it with run.answer(...)",
                run_id=run_id,
                status=record.status,
                accepted=(RunStatus.PAUSED,),
                hint="answer",
            )
        await port.withdraw(run_id, ControlVerb.PAUSE)
        if any(s.verb is ControlVerb.CANCEL for s in await port.pending(run_id)):
            # A cancel was asked first: it wins, and the resume is told so.
            await self.control.act_on_parked(run_id)
            ended = await self.recorder.record(run_id)
            if ended.status in TERMINAL:
                await refuse_finished(self.store, run_id, ended.status, "resume")
            return False
        if not play:
            await self.recorder.append(
                run_id,
                [ControlRequested(verb=ControlVerb.RESUME, reason=reason)],
                expect=(RunStatus.PAUSED,),
            )
            return False
        try:
            await self._continue(
                run_id, [RunResumed(reason=reason)], entry=Entry.AFTER_PAUSE, context=context
            )
            return True
        except RunStateError:
            # The conditional run.resumed lost to another caller (a sweep, another process)
            # that continued or ended the run first: this call did not win, as documented.
            now = await self.store.get_run(run_id)
            if now is not None and now.status in TERMINAL:
                await refuse_finished(self.store, run_id, now.status, "resume")
            if now is not None and now.status is not RunStatus.PAUSED:
                return False
            raise

    # ------------------------------------------------------------------------------- answer

    async def answer(
        self,
        run_id: str,
        value: Any,
        *,
        interrupt_id: str | None = None,
        context: Any = None,
        play: bool = True,
    ) -> Answered:
        """Answer the question ``run_id`` waits on; continue the run when it was the last one.

        Returns only when this value is the one recorded for the question (now, or by an
        identical earlier answer: a retry). Otherwise the rules of
        :func:`~agentdeck.runtime.answers.judge_answer` raise: the question was answered by
        another caller first (:class:`~agentdeck.errors.AlreadyAnsweredError`), the run was
        cancelled or finished, it is running or paused, or a pending pause holds answers back. A
        value that does not fit the question's declared shape is refused with
        :class:`AnswerRefusedError` (and an ``answer.refused`` event).

        The answer is appended only if the log has not moved since it was read; when it has,
        the log is read again and the answer judged again -- so a loser is told what beat it,
        and an answer that lost only to an unrelated event (another question's answer) is
        recorded after all.

        ``play=False`` records the answer and nothing more, even when it closes the last
        question: the run stays ``waiting_answer`` until a deck with its engine sweeps.
        """
        given = AnswerRecorded(interrupt_id=interrupt_id or "", value=value)
        for _ in range(_ANSWER_ATTEMPTS):
            history = await self.store.read(run_id)
            state = fold(history)
            paused = any(
                s.verb is ControlVerb.PAUSE for s in await self.requests.port.pending(run_id)
            )
            verdict = judge_answer(
                run_id, history, state, given, interrupt_id=interrupt_id, pause_pending=paused
            )
            if verdict.interrupt is None:  # this very answer is already recorded
                return Answered(before=state, appended=(), interrupt_id=verdict.interrupt_id)
            if verdict.refused is not None:
                with contextlib.suppress(RunStateError):
                    await self.recorder.append(
                        run_id,
                        [AnswerRefused(interrupt_id=verdict.interrupt_id, reason=verdict.refused)],
                        expect=(RunStatus.WAITING_ANSWER,),
                    )
                raise AnswerRefusedError(
                    run_id=run_id, interrupt_id=verdict.interrupt_id, reason=verdict.refused
                )
            payloads: list[Payload] = [
                AnswerRecorded(interrupt_id=verdict.interrupt_id, value=given.value)
            ]
            try:
                if len(state.interrupts) > 1 or not play:
                    events = await self.recorder.append(
                        run_id,
                        payloads,
                        expect=(RunStatus.WAITING_ANSWER,),
                        expect_seq=state.last_seq,
                    )
                else:
                    payloads.append(
                        RunResumed(reason="answered", interrupt_id=verdict.interrupt_id)
                    )
                    events = await self._continue(
                        run_id,
                        payloads,
                        entry=Entry.ANSWERED,
                        context=context,
                        expect_seq=state.last_seq,
                        history=history,
                    )
            except RunStateError:
                # The log moved since it was read (another answer, a cancel, an unrelated
                # event): judge again on the log as it is now.
                interrupt_id = verdict.interrupt_id
                continue
            return Answered(before=state, appended=events, interrupt_id=verdict.interrupt_id)
        raise RunStateError(
            f"run '{run_id}' kept changing while answering it ({_ANSWER_ATTEMPTS} reads); "
            "the answer was not recorded, try again",
            run_id=run_id,
            status=None,
            accepted=(RunStatus.WAITING_ANSWER,),
        )

    # ------------------------------------------------------------------------------- continuing

    async def _continue(
        self,
        run_id: str,
        payloads: list[Payload],
        *,
        entry: Entry,
        context: Any,
        expect_seq: int | None = None,
        history: Sequence[Event] | None = None,
    ) -> list[Event]:
        """Append ``payloads`` (ending in ``run.resumed``) if the run is still suspended, and
        play it on. Returns the events appended.

        ``history`` is the run's log as already read; pass it only together with the
        ``expect_seq`` of its last event, which makes the append prove it is still the whole log.
        """
        if history is None:
            history = await self.store.read(run_id)
        started = history[0].payload if history else None
        if not isinstance(started, RunStarted):
            raise NotFoundError(f"run '{run_id}' has no log", what="run", name=run_id)
        invocable = self.invocables.get(started.name)
        if invocable is None:
            raise ReplayError(
                f"run '{run_id}' was started from {started.name!r}, which this deck does not "
                "have, so it cannot be continued here",
                run_id=run_id,
                reason="unknown_invocable",
            )
        engine = self.engines[invocable.engine]
        parked = self.held.parked.get(run_id)
        if not engine.capabilities.durable_suspend and parked is None:
            raise ReplayError(
                f"run '{run_id}' was parked in memory by engine {engine.name!r} in a process "
                "that no longer holds it; this engine cannot continue a run from durable state",
                run_id=run_id,
                reason="parked_in_memory",
            )
        refuse_changed_code(
            run_id,
            started,
            invocable,
            opened="started",
            here="this deck",
            note="replaying it against changed code could repeat or skip its steps",
        )
        events = await self.recorder.append(
            run_id, payloads, expect=tuple(SUSPENDED), expect_seq=expect_seq
        )
        if context is None:
            context = self.held.contexts.get(run_id)
        self.held.parked.pop(run_id, None)
        # This call won the run: what the engine kept of its last play here goes to the play
        # that continues it (the engine checks the log still matches it, or replays).
        suspended = self.held.take(run_id)
        full = [*history, *events]
        answers: dict[str, Any] = {}
        for event in full:
            if isinstance(event.payload, AnswerRecorded):
                answers[event.payload.interrupt_id] = event.payload.value  # the last one counts
        first = full[0]
        self.player.launch(
            run_id,
            Invocation(
                run_id=run_id,
                invocable=invocable,
                input=list(started.input),
                entry=entry,
                context=context,
                session_id=first.session_id,
                namespace=first.namespace,
                parent_run_id=first.parent_run_id,
                answers=answers,
                history=tuple(full),
                clock=self.clock,
                suspended=suspended,
            ),
        )
        return events

    # ------------------------------------------------------------------------------- owed

    async def wake_due(self) -> None:
        """Resume the paused runs whose timer (``wake_at``) has passed."""
        due = await self.store.list_runs(
            RunQuery(
                all_namespaces=True,
                status=RunStatus.PAUSED,
                wake_before=self.clock.now(),
                limit=100,
            )
        )
        for record in due.runs:
            with contextlib.suppress(RunStateError, ReplayError):
                await self.resume(record.run_id, reason="timer")

    async def continue_owed(self) -> None:
        """Continue the suspended runs a process without their engine answered or resumed, and
        the runs a closing deck paused. Suspended bodies kept here for runs that are no longer
        suspended (another process continued and ended them) are released.

        Listing suspended runs reads only the index; a run's last event is read only when this
        deck has its invocable and its log moved since a sweep here last looked, so a run parked
        for days costs one read per process. Between several decks the conditional append of
        ``run.resumed`` picks one.
        """
        if self.closed:
            return  # a closing deck admits no continuations
        checked: dict[str, int] = {}
        kept_before = set(self.held.suspended)
        still_suspended: set[str] = set()
        cursor: str | None = None
        while True:
            page = await self.store.list_runs(
                RunQuery(all_namespaces=True, status=SUSPENDED, limit=500, cursor=cursor)
            )
            for record in page.runs:
                still_suspended.add(record.run_id)
                if record.name not in self.invocables:
                    continue
                if record.status is RunStatus.PAUSED and await self._resume_requested(record):
                    continue
                if self._owed_checked.get(record.run_id) == record.last_seq:
                    checked[record.run_id] = record.last_seq
                    continue
                try:
                    await self._continue_if_owed(record)
                except (RunStateError, ReplayError, NotFoundError) as refused:
                    log.warning("run %s cannot be continued here: %s", record.run_id, refused)
                except AgentDeckError:
                    log.warning("checking run %s failed", record.run_id, exc_info=True)
                    continue  # not marked checked: the next sweep tries again
                checked[record.run_id] = record.last_seq
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        self._owed_checked = checked
        # A body kept here for a run another process has since ended is of no use any more.
        for run_id in kept_before - still_suspended:
            if run_id not in self.held.playing:
                self.held.release(run_id)

    async def _resume_requested(self, record: RunRecord) -> bool:
        """Resume a paused run a process that could not read its log asked to resume through
        the shared control store (``agentdeck runs signal RUN resume --control-db``); whether
        it did. One control read per paused run per sweep, and only for a shared port."""
        port = self.requests.port
        if not port.shared:
            return False
        signals = await port.pending(record.run_id)
        if not any(s.verb is ControlVerb.RESUME for s in signals):
            return False
        taken = await port.take(record.run_id, ControlVerb.RESUME)
        if taken is None:
            return False
        try:
            await self.resume(record.run_id, reason=taken.reason or "resumed")
        except (RunStateError, ReplayError, NotFoundError) as refused:
            log.warning("run %s cannot be resumed here: %s", record.run_id, refused)
        return True

    async def continue_if_owed(self, record: RunRecord) -> None:
        """Continue ``record``'s run here if it is owed a continuation: answered (its last
        question closed) or asked to resume without being played. Nothing otherwise."""
        await self._continue_if_owed(record)

    async def _continue_if_owed(self, record: RunRecord) -> None:
        last = await self.store.read(record.run_id, from_seq=record.last_seq, limit=1)
        if not last:
            return
        payload = last[0].payload
        if record.status is RunStatus.PAUSED:
            if isinstance(payload, ControlRequested) and payload.verb == ControlVerb.RESUME:
                await self.resume(record.run_id, reason=payload.reason or "resumed")
            elif isinstance(payload, RunPaused) and payload.reason == CLOSING_PAUSE_REASON:
                # The pause was the closing deck's, not an operator's: a rolling restart or a
                # drained worker hands its live runs to whichever deck opens next.
                await self.resume(record.run_id, reason="continued after its deck closed")
            return
        if not isinstance(payload, AnswerRecorded):
            return
        history = await self.store.read(record.run_id)
        state = fold(history)
        if state.status is RunStatus.WAITING_ANSWER and not state.interrupts:
            await self._continue(
                record.run_id,
                [RunResumed(reason="answered", interrupt_id=payload.interrupt_id)],
                entry=Entry.ANSWERED,
                context=None,
                expect_seq=state.last_seq,
                history=history,
            )
