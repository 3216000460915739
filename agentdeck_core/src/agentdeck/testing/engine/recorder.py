"""The driver's stand-in for a store, and what it writes when it continues a suspended run.

:class:`Recorder` gives each payload the envelope a store would (dense ``seq``, ``ts`` from the
invocation's clock, the run's identity), round-trips it through JSON as persisting it would, and
keeps the run's folded state. :func:`resume` appends what the runtime writes when it claims a
suspended run; :func:`checked_history` refuses a log a continuation cannot start from. Each raises
``ValueError`` for a misuse of the driver, never for what an engine does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agentdeck.model.events import Event
from agentdeck.model.payloads import AnswerRecorded, RunResumed
from agentdeck.model.status import RunState, apply, fold
from agentdeck.ports import Entry
from agentdeck.vocabulary import RunStatus

__all__ = ["Recorder", "checked_history", "resume"]


@dataclass
class Recorder:
    """The driver's stand-in for a store: dense seq, timestamps, the folded state."""

    run_id: str
    session_id: str | None
    namespace: str | None
    parent_run_id: str | None
    origin: str | None
    clock_now: Callable[[], datetime]
    events: list[Event]
    state: RunState = field(init=False)

    def __post_init__(self) -> None:
        self.state = fold(self.events)

    def envelope(self, payload: Any) -> Event:
        """Wrap and round-trip ``payload`` through JSON, as a store persisting it would."""
        event = Event.record(
            payload,
            seq=len(self.events),
            run_id=self.run_id,
            ts=self.clock_now(),
            session_id=self.session_id,
            namespace=self.namespace,
            parent_run_id=self.parent_run_id,
            origin=self.origin,
        )
        stored = Event.from_json(event.to_json())
        if stored.to_json() != event.to_json():
            raise ValueError("the payload changed in the JSON round trip")
        return stored

    def append(self, event: Event) -> None:
        self.events.append(event)
        self.state = apply(self.state, event)

    def record(self, payload: Any) -> Event:
        event = self.envelope(payload)
        self.append(event)
        return event

    @property
    def live(self) -> bool:
        return self.state.status is RunStatus.RUNNING

    def open_interrupt_ids(self) -> list[str]:
        return [interrupt.interrupt_id for interrupt in self.state.interrupts]


def checked_history(history: Sequence[Event]) -> list[Event]:
    log = list(history)
    for index, event in enumerate(log):
        if event.seq != index:
            raise ValueError(
                f"history must be a whole log from seq 0; event {index} has seq {event.seq}"
            )
        if event.run_id != log[0].run_id:
            raise ValueError(f"history mixes runs: {log[0].run_id!r} and {event.run_id!r}")
    if log and log[0].kind != "run.started":
        raise ValueError(f"history must start with run.started, not {log[0].kind}")
    return log


def resume(recorder: Recorder, entry: Entry | None, answers: dict[str, Any]) -> Entry:
    """Append what the runtime writes when it claims a suspended run; return the entry."""
    status = recorder.state.status
    expected = {RunStatus.PAUSED: Entry.AFTER_PAUSE, RunStatus.WAITING_ANSWER: Entry.ANSWERED}
    if status not in expected:
        raise ValueError(
            f"only a suspended run continues; the history ends {status} "
            f"({recorder.events[-1].kind})"
        )
    inferred = expected[status]
    if entry is not None and entry is not inferred:
        raise ValueError(f"a {status} run is entered {inferred}, not {entry}")
    if inferred is Entry.AFTER_PAUSE:
        if answers:
            raise ValueError("a paused run has no open question; continue it without answers")
        recorder.record(RunResumed())
        return inferred
    open_ids = recorder.open_interrupt_ids()
    if not answers:
        raise ValueError(f"an answered continuation needs answers for one of {open_ids}")
    for interrupt_id, value in answers.items():
        if interrupt_id not in open_ids:
            raise ValueError(f"interrupt {interrupt_id!r} is not open; open: {open_ids}")
        recorder.record(AnswerRecorded(interrupt_id=interrupt_id, value=value))
    only = next(iter(answers)) if len(answers) == 1 else None
    recorder.record(RunResumed(interrupt_id=only))
    return inferred
