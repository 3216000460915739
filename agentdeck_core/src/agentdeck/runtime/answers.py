"""The rules of an answer, in one place: which question it answers, whether it may be recorded,
and -- when it may not -- what to tell the person who gave it.

Pure functions of a run's log as one read saw it, used by :meth:`Continuation.answer
<agentdeck.runtime.continuation.Continuation.answer>` before it writes anything and again after
a conditional append lost to another writer. Judging the same way both times is what makes an
answer truthful: it returns quietly only if *its* value is the one in the log (recorded now, or
an identical answer recorded before -- an idempotent retry); otherwise the caller gets a
:class:`~agentdeck.errors.RunStateError` subclass saying what happened instead
(:class:`~agentdeck.errors.AlreadyAnsweredError` with the winner's origin,
:class:`~agentdeck.errors.RunCancelledError`, :class:`~agentdeck.errors.RunFinishedError`).

A refusal never echoes a value: neither the caller's (it may be anything a person typed) nor the
winner's (it is another person's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentdeck.errors import (
    AlreadyAnsweredError,
    InvalidInputError,
    NotFoundError,
    RunCancelledError,
    RunFinishedError,
    RunStateError,
)
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    AnswerRecorded,
    AnswerShape,
    RunCancelled,
    RunInterrupted,
)
from agentdeck.model.status import OpenInterrupt, RunState
from agentdeck.vocabulary import TERMINAL, RunStatus

__all__ = ["AnswerVerdict", "choose_interrupt", "judge_answer", "refusal"]


@dataclass(frozen=True, slots=True)
class AnswerVerdict:
    """What the log allows an answer to do.

    ``interrupt`` is the open question to record it for; ``None`` when the very same answer is
    already recorded, so nothing is to be written and the call returns quietly. ``refused`` is
    why the value does not fit the question's declared shape (then an ``answer.refused`` is
    recorded and :class:`~agentdeck.errors.AnswerRefusedError` raised).
    """

    interrupt_id: str
    interrupt: OpenInterrupt | None
    refused: str | None = None


def judge_answer(
    run_id: str,
    history: Sequence[Event],
    state: RunState,
    answer: AnswerRecorded,
    *,
    interrupt_id: str | None,
    pause_pending: bool,
) -> AnswerVerdict:
    """Judge ``answer`` against the log ``history`` (folded: ``state``); raise when it cannot
    be recorded.

    The question meant is ``interrupt_id``, else the only open one, else -- on a run that no
    longer waits -- the one it was asked last: a caller who read ``run.pending()`` and answers a
    moment after another caller did meant that question, and must hear it was taken.
    """
    status = state.status
    if status is None:
        raise NotFoundError(f"run '{run_id}' has no log", what="run", name=run_id)
    waiting = status is RunStatus.WAITING_ANSWER
    target = interrupt_id
    if target is None:
        target = (
            choose_interrupt(run_id, state, None).interrupt_id
            if waiting and state.interrupts
            else _asked_last(history)
        )
    if target is not None:
        winner = _answer_after_question(history, target)
        if winner is not None:
            payload = winner.payload
            assert isinstance(payload, AnswerRecorded)
            if payload.value == answer.value and payload.origin == answer.origin:
                return AnswerVerdict(interrupt_id=target, interrupt=None)
            raise AlreadyAnsweredError(
                run_id=run_id,
                interrupt_id=target,
                origin=str(payload.origin),
                answered_seq=winner.seq,
                status=status,
            )
    if status in TERMINAL:
        if status is RunStatus.CANCELLED:
            raise RunCancelledError(
                run_id=run_id, verb="answer", cancel_reason=_cancel_reason(history)
            )
        raise RunFinishedError(run_id=run_id, status=status, verb="answer")
    if not waiting:
        hint = "resume" if status is RunStatus.PAUSED else None
        raise RunStateError(
            f"run '{run_id}' is {status.value}, not waiting for an answer"
            + ("; continue it with run.resume()" if hint else ""),
            run_id=run_id,
            status=status,
            accepted=(RunStatus.WAITING_ANSWER,),
            hint=hint,
        )
    if pause_pending:
        raise RunStateError(
            f"run '{run_id}' has a pause pending, which holds answers back; "
            "lift it with run.resume() first",
            run_id=run_id,
            status=status,
            accepted=(RunStatus.WAITING_ANSWER,),
            hint="resume",
        )
    interrupt = choose_interrupt(run_id, state, target)
    return AnswerVerdict(
        interrupt_id=interrupt.interrupt_id,
        interrupt=interrupt,
        refused=refusal(interrupt.expected, answer.value),
    )


def _asked_last(history: Sequence[Event]) -> str | None:
    for event in reversed(history):
        if isinstance(event.payload, RunInterrupted):
            return event.payload.interrupt_id
    return None


def _answer_after_question(history: Sequence[Event], interrupt_id: str) -> Event | None:
    """The answer recorded for ``interrupt_id`` since it was last asked (an engine that asks
    a question again after a replay asks it anew: an older answer does not close it)."""
    answered: Event | None = None
    for event in history:
        payload = event.payload
        if isinstance(payload, RunInterrupted) and payload.interrupt_id == interrupt_id:
            answered = None
        elif isinstance(payload, AnswerRecorded) and payload.interrupt_id == interrupt_id:
            answered = answered or event  # the first answer after the question is the winner
    return answered


def _cancel_reason(history: Sequence[Event]) -> str | None:
    for event in reversed(history):
        if isinstance(event.payload, RunCancelled):
            return event.payload.reason
    return None


def choose_interrupt(run_id: str, state: RunState, interrupt_id: str | None) -> OpenInterrupt:
    """The open question ``interrupt_id`` names -- needed only when several are open."""
    open_ids = [i.interrupt_id for i in state.interrupts]
    if interrupt_id is None:
        if len(state.interrupts) == 1:
            return state.interrupts[0]
        raise InvalidInputError(
            f"run '{run_id}' has {len(open_ids)} open questions "
            f"({', '.join(open_ids)}); say which with answer(value, interrupt_id=...)",
            name=run_id,
            field="interrupt_id",
        )
    for interrupt in state.interrupts:
        if interrupt.interrupt_id == interrupt_id:
            return interrupt
    raise InvalidInputError(
        f"run '{run_id}' has no open question '{interrupt_id}'; open: "
        + (", ".join(open_ids) or "none"),
        name=run_id,
        field="interrupt_id",
    )


def refusal(expected: Any, value: Any) -> str | None:
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
