"""The journal: what a run's own log says its body already did, read back for a replay.

The log holds all a native workflow needs between plays. When a suspended run continues in a
process that does not hold its body, the engine re-executes the body from its first line, and
every operation the body reaches asks the journal whether the log already holds its outcome (a
body woken in the process that kept it reads a journal of the log since its parking the same
way):

* a step, an ``invoke`` or a ``sleep_until`` (one shared ordinal sequence) looks up the
  ``step.completed`` event with its ordinal as ``index``;
* an ask looks up its interrupt id: the question recorded by ``run.interrupted`` and the last
  ``answer.recorded`` value, unless an ``answer.refused`` came after that answer;
* a report or a custom event looks for an identical recorded one not yet claimed by this replay
  (a multiset, so repeated identical reports are matched one for one and the order in which
  concurrent branches reach them does not matter).

The log is the only input, so any engine instance in any process continues a run from the store
alone; the engine-state area is not used.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    AnswerRecorded,
    AnswerRefused,
    Custom,
    Report,
    RunInterrupted,
    RunPaused,
    RunResumed,
    StepCompleted,
)

__all__ = ["SLEEP_REASON", "SLEEP_STEP", "AskRecord", "Journal", "JournaledStep", "invoke_step"]

SLEEP_STEP = "sleep_until"
"""The ``step.completed`` name under which a ``sleep_until`` journals its wake time."""

SLEEP_REASON = "sleep"
"""``run.paused.reason`` of a run parked by ``sleep_until`` (with ``wake_at`` set)."""


def invoke_step(name: str) -> str:
    """The ``step.completed`` name under which ``ctx.invoke(name, ...)`` journals its result."""
    return f"invoke:{name}"


@dataclass(frozen=True, slots=True)
class JournaledStep:
    """A ``step.completed`` event: the ordinal, the label the body gave, the JSON result."""

    index: int
    name: str
    result: Any
    seq: int


@dataclass(frozen=True, slots=True)
class AskRecord:
    """What the log holds for one interrupt id.

    ``question`` is the payload of its first ``run.interrupted`` (``None`` with ``asked`` false
    when only an answer is known). ``answered`` is false when no answer was recorded, or when the
    last one was refused afterwards (the ask parks again).
    """

    interrupt_id: str
    asked: bool
    question: Any
    answered: bool
    value: Any


@dataclass(slots=True)
class Journal:
    """The replay view of one run's log; build it with :meth:`from_history`."""

    steps: dict[int, JournaledStep] = field(default_factory=dict)
    asks: dict[str, AskRecord] = field(default_factory=dict)
    sleeps_resumed: list[tuple[int, datetime]] = field(default_factory=list)
    """``(seq, wake_at)`` of every timer pause (``run.paused`` with ``wake_at``) that a
    ``run.resumed`` ended."""
    echoes: Counter[str] = field(default_factory=Counter)

    @classmethod
    def empty(cls) -> Journal:
        return cls()

    @classmethod
    def from_history(
        cls, history: Sequence[Event], answers: Mapping[str, Any] | None = None
    ) -> Journal:
        """Read a run's log (``run.started`` first). ``answers`` fills in answers the runtime
        handed over without a matching ``answer.recorded`` in ``history``."""
        journal = cls()
        questions: dict[str, Any] = {}
        last_answer: dict[str, Any] = {}
        refused: set[str] = set()
        open_sleep: tuple[int, datetime] | None = None
        for event in history:
            payload = event.payload
            if isinstance(payload, StepCompleted):
                journal.steps[payload.index] = JournaledStep(
                    index=payload.index, name=payload.name, result=payload.result, seq=event.seq
                )
            elif isinstance(payload, RunInterrupted):
                questions.setdefault(payload.interrupt_id, payload.payload)
            elif isinstance(payload, AnswerRecorded):
                last_answer[payload.interrupt_id] = payload.value
                refused.discard(payload.interrupt_id)
            elif isinstance(payload, AnswerRefused):
                if payload.interrupt_id in last_answer:
                    refused.add(payload.interrupt_id)
            elif isinstance(payload, RunPaused):
                # A timer pause carries wake_at (a control pause never does), whatever its
                # reason says: sleeps parked together with a suspended child name the child.
                open_sleep = (event.seq, payload.wake_at) if payload.wake_at is not None else None
            elif isinstance(payload, RunResumed):
                if open_sleep is not None:
                    journal.sleeps_resumed.append(open_sleep)
                open_sleep = None
            elif isinstance(payload, Report | Custom):
                journal.echoes[echo_key(payload)] += 1
        for interrupt_id, value in (answers or {}).items():
            last_answer.setdefault(interrupt_id, value)
        for interrupt_id in questions.keys() | last_answer.keys():
            answered = interrupt_id in last_answer and interrupt_id not in refused
            journal.asks[interrupt_id] = AskRecord(
                interrupt_id=interrupt_id,
                asked=interrupt_id in questions,
                question=questions.get(interrupt_id),
                answered=answered,
                value=last_answer.get(interrupt_id) if answered else None,
            )
        return journal

    def step(self, index: int) -> JournaledStep | None:
        """The journaled outcome of operation ``index``, if it completed before."""
        return self.steps.get(index)

    def ask(self, interrupt_id: str) -> AskRecord | None:
        return self.asks.get(interrupt_id)

    def sleep_is_over(self, entry_seq: int, wake_at: datetime, now: datetime) -> bool:
        """Whether a journaled sleep needs no more parking: its time has come, or the run was
        resumed (by the sweep or early, by an operator) from a pause waiting for that time."""
        if wake_at <= now:
            return True
        return any(seq > entry_seq and woke == wake_at for seq, woke in self.sleeps_resumed)

    def woke_from(self, wake_at: datetime) -> bool:
        """Whether a timer pause waiting for ``wake_at`` was resumed (the journal of a body
        continued in the process that held it starts at the pause that parked it)."""
        return any(woke == wake_at for _, woke in self.sleeps_resumed)

    def claim_echo(self, payload: Report | Custom) -> bool:
        """Claim an identical recorded report/custom event: true means it is already in the log
        and must not be written again."""
        if not self.echoes:
            return False  # nothing recorded to claim (every fresh play): skip the JSON key
        key = echo_key(payload)
        if self.echoes[key] <= 0:
            return False
        self.echoes[key] -= 1
        return True


def echo_key(payload: Report | Custom) -> str:
    """A payload's identity for echo matching: its JSON form (what a store hands back), with
    mapping keys sorted so two equal payloads always match."""
    return json.dumps(payload.model_dump(mode="json"), sort_keys=True)
