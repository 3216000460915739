"""The engine contract kit: play an engine the way the runtime does, and check it keeps its word.

For engine plugin authors and for the core's own tests. Three parts:

* :func:`drive` plays one run, or one continuation of a run, through an engine with the same
  semantics the runtime has, and records the log the runtime would have written. It checks each
  payload as it arrives and reports every breach of the engine contract as a :class:`Violation`
  instead of raising, so a test can assert on what went wrong.
* :class:`EngineContract` is the base test class: subclass it, supply the engine through the
  ``engine_factory`` (or ``engine``) fixture and definitions through ``scenarios``, and every
  check below runs against your engine. Tests the engine's declared capabilities do not cover
  are skipped with the reason; a capability declared without the scenario that exercises it
  fails, so nothing is skipped silently.
* :class:`ScriptedEngine` is a deterministic, model-free engine whose definitions are
  :class:`Script` objects. It is the kit's self-test subject and the engine runtime tests use.

How :func:`drive` mirrors the runtime (the runtime implements the same semantics):

1. **Fresh run.** The driver records ``run.started`` at seq 0 itself; the engine never yields it.
   The engine gets ``entry=FRESH`` and an empty ``history``.
2. **Continuation.** Given the run's log so far (``history``, which must end suspended), the
   driver appends what the runtime writes when it claims a suspended run: one
   ``answer.recorded`` per answer then ``run.resumed`` (for an answered interrupt), or
   ``run.resumed`` alone (after a pause). The engine gets ``entry=ANSWERED``/``AFTER_PAUSE``, the
   answers, and the whole log *including* those events as ``history``. Input and envelope
   identity come from the log's ``run.started``, as they would in a process that only has the
   store.
3. **Each payload** the engine yields is checked, wrapped with :meth:`Event.record` (seq dense,
   ``ts`` from the invocation's clock), round-tripped through JSON as a store would, and folded
   with :func:`agentdeck.model.status.apply`. A payload that breaks the contract is not recorded:
   the driver closes the engine's iterator and, if the run is still live, records
   ``run.failed(engine_error)`` naming the breached rule.
4. **After a terminal or suspending payload** the driver asks the engine for one more item: the
   engine must end there (it may run cleanup code, but yield nothing and raise nothing). The one
   exception: a run parking on several questions at once yields them as consecutive
   ``run.interrupted`` payloads, each checked and recorded like any other, and ends after the
   last.
5. **An engine that raises** gets ``run.failed(engine_error)`` recorded for it, whose message is
   ``"engine '<name>' raised <ExceptionType>"``: the exception's text never enters the log. An
   engine that stops without a final payload gets ``run.failed(engine_error)`` too (and that is
   a violation; raising is not).
6. **Control.** ``invocation.checkpoint`` counts the safe points the engine reaches, from 1.
   ``directives={n: verb}`` answers the n-th with a :class:`~agentdeck.ports.ControlDirective`
   whose payloads are ``control.requested(verb)``, ``control.observed(verb, safe_point=<the
   point the engine passed>)`` and ``run.cancelled``/``run.paused``. The engine must yield
   exactly those, in order, and stop; anything else is a violation. Reaching a safe point not
   among the declared ``capabilities.safe_points`` is a violation, and so is calling the
   checkpoint again after receiving a directive.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar

import pytest
import pytest_asyncio

from agentdeck.errors import ConfigError, ReplayError
from agentdeck.model.content import ContentBlock, DataBlock, content_blocks
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    PAYLOAD_TYPES,
    AnswerRecorded,
    AnswerShape,
    ControlObserved,
    ControlRequested,
    Payload,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunPaused,
    RunResumed,
    RunStarted,
    TextDelta,
    Usage,
)
from agentdeck.model.status import RunState, apply, fold, is_transition_allowed
from agentdeck.ports import (
    ControlDirective,
    Engine,
    EngineCapabilities,
    EngineStateArea,
    Entry,
    Invocable,
    Invocation,
)
from agentdeck.testing import event_examples
from agentdeck.testing.guard import ContractKit, check_contract
from agentdeck.vocabulary import (
    LIFECYCLE_KINDS,
    SUSPENDING_KINDS,
    TERMINAL_KINDS,
    ControlVerb,
    ErrorCode,
    InterruptReason,
    RunStatus,
    SafePoint,
)

__all__ = [
    "RESERVED_KINDS",
    "Ask",
    "Checkpoint",
    "Complete",
    "ContractRule",
    "DriveResult",
    "EngineContract",
    "EngineScenarios",
    "MemoryStateArea",
    "Raise",
    "Script",
    "ScriptedEngine",
    "Step",
    "Violation",
    "Yield",
    "check_capabilities",
    "check_compiles",
    "check_completed",
    "check_control",
    "check_failed",
    "check_folded_like_content",
    "check_interrupted",
    "check_log",
    "check_payloads",
    "check_safe_points",
    "check_walk_away",
    "drive",
    "make_invocation",
    "reserved_kinds_script",
]

FINAL_KINDS = TERMINAL_KINDS | SUSPENDING_KINDS
"""Kinds that end a play: after one of these the engine yields nothing more."""

_RUNTIME_KINDS = frozenset({"run.started", "run.resumed"})
"""Lifecycle kinds only the runtime writes."""

RESERVED_KINDS = frozenset(payload.KIND for payload in PAYLOAD_TYPES if payload.RESERVED)
"""Kinds defined and read but produced by nothing in this release (``input.appended``): an engine
that yields one anyway is recorded and folded like any content event (see
:func:`reserved_kinds_script` and :func:`check_folded_like_content`)."""

_DRAIN_TIMEOUT = 5.0
"""Seconds an engine has to finish after its final payload before the driver gives up on it."""


# =========================================================================== engine-state area


class MemoryStateArea(EngineStateArea):
    """One run's engine-state area, held in memory.

    Pass the same instance to several :func:`drive` calls to simulate durable state; pass
    :meth:`copy` to simulate another process reading the same store.
    """

    def __init__(self, values: Mapping[str, bytes] | None = None) -> None:
        self._values: dict[str, bytes] = dict(values or {})

    async def get(self, name: str) -> bytes | None:
        return self._values.get(name)

    async def put(self, name: str, value: bytes) -> None:
        if not isinstance(value, bytes):
            raise TypeError(
                f"engine state {name!r} must be bytes (stores keep blobs), "
                f"not {type(value).__name__}"
            )
        self._values[name] = value

    async def delete(self, name: str) -> None:
        self._values.pop(name, None)

    def snapshot(self) -> dict[str, bytes]:
        """What is stored now, by name."""
        return dict(self._values)

    def copy(self) -> MemoryStateArea:
        """An independent area holding the same values (a second process, the same store)."""
        return MemoryStateArea(self._values)


# =========================================================================== violations


class ContractRule(StrEnum):
    """The engine-contract rules :func:`drive` checks while it plays."""

    NOT_A_PAYLOAD = "not_a_payload"
    """Yielded something that is not a payload model of a known kind."""
    NOT_SERIALIZABLE = "not_serializable"
    """Yielded a payload that does not survive the JSON round trip a store makes."""
    RUNTIME_LIFECYCLE = "runtime_lifecycle"
    """Yielded ``run.started`` or ``run.resumed``, which only the runtime writes."""
    ILLEGAL_TRANSITION = "illegal_transition"
    """Yielded a lifecycle event the run's status does not allow."""
    AFTER_FINAL = "after_final"
    """Yielded, raised or kept running after its terminal or suspending payload."""
    NO_FINAL = "no_final"
    """Stopped without a terminal or suspending payload (and without raising)."""
    IGNORED_DIRECTIVE = "ignored_directive"
    """Did not yield exactly a control directive's payloads after receiving it."""
    CHECKPOINT_AFTER_DIRECTIVE = "checkpoint_after_directive"
    """Reached another safe point after it was told to stop at one."""
    UNDECLARED_SAFE_POINT = "undeclared_safe_point"
    """Reached a safe point its capabilities do not declare."""
    CLOSE_FAILED = "close_failed"
    """Raised when its iterator was closed."""


@dataclass(frozen=True, slots=True)
class Violation:
    """One breach of the engine contract, as :func:`drive` saw it happen."""

    rule: ContractRule
    detail: str

    def __str__(self) -> str:
        return f"{self.rule.value}: {self.detail}"


# =========================================================================== drive


@dataclass(frozen=True, slots=True)
class DriveResult:
    """What one :func:`drive` recorded and observed.

    ``events`` is the whole log after the play (``history`` plus what this drive recorded);
    ``yielded`` is everything the engine yielded, in order, recorded or not.
    """

    engine: str
    invocation: Invocation
    """The invocation the engine played (with the driver's checkpoint, state and history)."""
    history: tuple[Event, ...]
    events: tuple[Event, ...]
    yielded: tuple[object, ...]
    safe_points: tuple[SafePoint | str, ...]
    """Every safe point the engine reached, in order (the checkpoint calls it made)."""
    directive: ControlDirective | None
    directive_at: int | None
    """Which safe point (counted from 1) the directive answered."""
    violations: tuple[Violation, ...]
    raised: Exception | None
    """The exception the engine raised, if it did (the log records only its type)."""
    state_area: EngineStateArea
    run_state: RunState

    @property
    def new_events(self) -> tuple[Event, ...]:
        """What this drive recorded (``run.started``/resumption included)."""
        return self.events[len(self.history) :]

    @property
    def kinds(self) -> list[str]:
        return [event.kind for event in self.events]

    @property
    def status(self) -> RunStatus | None:
        return self.run_state.status

    @property
    def last(self) -> Event:
        return self.events[-1]

    @property
    def output(self) -> list[ContentBlock] | None:
        """The output of ``run.completed``, when the run completed."""
        payload = self.last.payload
        return list(payload.output) if isinstance(payload, RunCompleted) else None

    @property
    def open_interrupts(self) -> list[str]:
        """Ids of the interrupts the run is waiting on."""
        return [interrupt.interrupt_id for interrupt in self.run_state.interrupts]

    @property
    def clean(self) -> bool:
        return not self.violations

    def assert_clean(self) -> None:
        """Raise ``AssertionError`` listing every contract violation the drive saw."""
        if self.violations:
            listed = "\n  ".join(str(violation) for violation in self.violations)
            raise AssertionError(
                f"engine {self.engine!r} broke the engine contract:\n  {listed}\n"
                f"log: {', '.join(self.kinds)}"
            )


def make_invocation(
    engine: Engine,
    definition: object,
    input: str | Sequence[ContentBlock] = (),
    *,
    run_id: str | None = None,
    context: Any = None,
    session_id: str | None = None,
    namespace: str | None = None,
) -> Invocation:
    """Compile ``definition`` with ``engine`` and build a fresh :class:`Invocation` for it."""
    return Invocation(
        run_id=run_id or f"run-{uuid.uuid4().hex[:12]}",
        invocable=engine.compile(definition),
        input=content_blocks(input if isinstance(input, str) else list(input)),
        context=context,
        session_id=session_id,
        namespace=namespace,
    )


async def drive(
    engine: Engine,
    invocation: Invocation,
    *,
    directives: Mapping[int, ControlVerb] | None = None,
    history: Sequence[Event] = (),
    entry: Entry | None = None,
    answers: Mapping[str, Any] | None = None,
    state: EngineStateArea | None = None,
    control_reason: str | None = None,
) -> DriveResult:
    """Play one run (or continue one) through ``engine`` as the runtime does; see the module doc.

    The driver owns these fields of the invocation the engine receives: ``run_id``, ``entry``,
    ``answers``, ``history``, ``checkpoint`` and ``state``. Everything else (invocable, context,
    clock, ...) comes from ``invocation``; so does ``input`` for a fresh run.

    :param directives: safe point number (from 1) -> the verb to answer it with (pause, cancel).
    :param history: the run's log so far; empty for a fresh run. A continuation needs a log that
        ends suspended (``previous.events``).
    :param entry: how the run is re-entered; inferred from ``history`` when omitted.
    :param answers: interrupt id -> answer value, for :attr:`Entry.ANSWERED`.
    :param state: the engine-state area; defaults to ``invocation.state``, else a new
        :class:`MemoryStateArea`. Reuse ``previous.state_area`` to continue with durable state.
    :param control_reason: the reason recorded on the control payloads of a directive.
    :raises ValueError: for a misuse of the driver itself (a bad history, entry or directive),
        never for what the engine does.
    """
    verbs = _checked_directives(directives or {})
    log = _checked_history(history)
    area = state if state is not None else invocation.state
    if area is None:
        area = MemoryStateArea()

    if not log:
        if entry not in (None, Entry.FRESH):
            raise ValueError(f"a fresh run (empty history) is entered FRESH, not {entry}")
        if answers:
            raise ValueError("a fresh run has nothing to answer; pass answers with a history")
        recorder = _Recorder(
            run_id=invocation.run_id,
            session_id=invocation.session_id,
            namespace=invocation.namespace,
            parent_run_id=invocation.parent_run_id,
            origin=invocation.invocable.name,
            clock_now=invocation.clock.now,
            events=[],
        )
        recorder.record(
            RunStarted(
                name=invocation.invocable.name,
                invocable_kind=invocation.invocable.kind,
                input=list(invocation.input),
                code_digest=invocation.invocable.code_digest,
            )
        )
        played = replace(
            invocation,
            entry=Entry.FRESH,
            answers={},
            history=(),
            state=area,
        )
    else:
        first = log[0]
        recorder = _Recorder(
            run_id=first.run_id,
            session_id=first.session_id,
            namespace=first.namespace,
            parent_run_id=first.parent_run_id,
            origin=first.origin,
            clock_now=invocation.clock.now,
            events=list(log),
        )
        given = dict(answers or {})
        entry = _resume(recorder, entry, given)
        started = first.payload
        played = replace(
            invocation,
            run_id=first.run_id,
            input=list(started.input) if isinstance(started, RunStarted) else invocation.input,
            entry=entry,
            answers=given if entry is Entry.ANSWERED else {},
            history=tuple(recorder.events),
            state=area,
        )

    play = _Play(engine, recorder, verbs, control_reason)
    played.checkpoint = play.checkpoint
    await play.run(played)
    return DriveResult(
        engine=engine.name,
        invocation=played,
        history=tuple(log),
        events=tuple(recorder.events),
        yielded=tuple(play.yielded),
        safe_points=tuple(play.safe_points),
        directive=play.directive,
        directive_at=play.directive_at,
        violations=tuple(play.violations),
        raised=play.raised,
        state_area=area,
        run_state=recorder.state,
    )


def _checked_directives(directives: Mapping[int, ControlVerb]) -> dict[int, ControlVerb]:
    checked: dict[int, ControlVerb] = {}
    for number, verb in directives.items():
        given: object = number  # checked at run time: callers may not be type-checked
        if not isinstance(given, int) or number < 1:
            raise ValueError(f"directives count safe points from 1; got {number!r}")
        if verb not in (ControlVerb.CANCEL, ControlVerb.PAUSE):
            raise ValueError(
                f"only cancel and pause are acted on at a safe point; got {verb!r} for #{number}"
            )
        checked[number] = ControlVerb(verb)
    return checked


def _checked_history(history: Sequence[Event]) -> list[Event]:
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


def _resume(recorder: _Recorder, entry: Entry | None, answers: dict[str, Any]) -> Entry:
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


@dataclass
class _Recorder:
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


class _Stop(Exception):
    """Internal: the engine broke the contract and the driver stops playing it."""


class _Play:
    """One play of an engine: the checkpoint it calls and the loop that consumes it."""

    def __init__(
        self,
        engine: Engine,
        recorder: _Recorder,
        verbs: Mapping[int, ControlVerb],
        reason: str | None,
    ) -> None:
        self.engine = engine
        self.recorder = recorder
        self.verbs = verbs
        self.reason = reason
        self.declared = engine.capabilities.safe_points
        self.yielded: list[object] = []
        self.safe_points: list[SafePoint | str] = []
        self.violations: list[Violation] = []
        self.directive: ControlDirective | None = None
        self.directive_at: int | None = None
        self.due: list[Payload] = []
        self.raised: Exception | None = None

    # -- what the engine calls -------------------------------------------------------------------

    async def checkpoint(self, point: SafePoint) -> ControlDirective | None:
        self.safe_points.append(point)
        number = len(self.safe_points)
        if point not in self.declared:
            self.violate(
                ContractRule.UNDECLARED_SAFE_POINT,
                f"reached safe point {point!s} (#{number}); declared: "
                f"{sorted(str(p) for p in self.declared) or 'none'}",
            )
        if self.directive is not None:
            self.violate(
                ContractRule.CHECKPOINT_AFTER_DIRECTIVE,
                f"reached safe point #{number} after being told to {self.directive.verb} at "
                f"#{self.directive_at}",
            )
            return None
        verb = self.verbs.get(number)
        if verb is None:
            return None
        ending: Payload = (
            RunCancelled(reason=self.reason)
            if verb is ControlVerb.CANCEL
            else RunPaused(reason=self.reason)
        )
        self.directive = ControlDirective(
            verb=verb,
            payloads=(
                ControlRequested(verb=verb, reason=self.reason),
                ControlObserved(verb=verb, safe_point=point),
                ending,
            ),
        )
        self.directive_at = number
        self.due = list(self.directive.payloads)
        return self.directive

    # -- the loop --------------------------------------------------------------------------------

    def violate(self, rule: ContractRule, detail: str) -> None:
        self.violations.append(Violation(rule, detail))

    def fail_run(self, message: str) -> None:
        """Record ``run.failed(engine_error)`` in the engine's place, if the run is still live."""
        if self.recorder.live:
            self.recorder.record(RunFailed(error_code=ErrorCode.ENGINE_ERROR, message=message))

    def engine_raised(self, exc: Exception) -> None:
        """The engine raised: the log records the exception's type, never its text."""
        self.raised = exc
        if self.due:
            self.violate(
                ContractRule.IGNORED_DIRECTIVE,
                f"raised {type(exc).__name__} instead of yielding its directive's payloads",
            )
        self.fail_run(f"engine '{self.engine.name}' raised {type(exc).__name__}")

    async def run(self, invocation: Invocation) -> None:
        try:
            iterator = self.engine.play(invocation)
        except Exception as exc:  # a play() that is a plain function may raise before iterating
            self.engine_raised(exc)
            return
        try:
            await self.consume(iterator)
        finally:
            await self.close(iterator)

    async def consume(self, iterator: AsyncIterator[Payload]) -> None:
        name = self.engine.name
        while True:
            try:
                item: object = await anext(iterator)
            except StopAsyncIteration:
                if self.due:
                    self.violate(
                        ContractRule.IGNORED_DIRECTIVE,
                        f"stopped before yielding {self.due[0].kind} of its "
                        f"{self.directive.verb if self.directive else ''} directive",
                    )
                else:
                    self.violate(
                        ContractRule.NO_FINAL, "stopped without a terminal or suspending payload"
                    )
                self.fail_run(f"engine '{name}' stopped without a final payload")
                return
            except Exception as exc:
                self.engine_raised(exc)
                return
            self.yielded.append(item)
            try:
                event = self.accept(item)
            except _Stop:
                self.fail_run(
                    f"engine '{name}' broke the engine contract ({self.violations[-1].rule})"
                )
                return
            if event.kind in FINAL_KINDS:
                await self.drain(iterator, event.kind)
                return

    def accept(self, item: object) -> Event:
        """Check one yielded item and record it, or raise :class:`_Stop` after a violation."""
        if not isinstance(item, PAYLOAD_TYPES):
            self.violate(
                ContractRule.NOT_A_PAYLOAD,
                f"yielded a {type(item).__name__}; engines yield payload models of known kinds "
                "(agentdeck.model.payloads; Custom for application data)",
            )
            raise _Stop
        kind = item.kind
        if kind in _RUNTIME_KINDS:
            self.violate(
                ContractRule.RUNTIME_LIFECYCLE, f"yielded {kind}, which the runtime writes"
            )
            raise _Stop
        if self.due:
            due = self.due[0]
            if item != due:
                assert self.directive is not None
                self.violate(
                    ContractRule.IGNORED_DIRECTIVE,
                    f"told to {self.directive.verb} at safe point #{self.directive_at}, yielded "
                    f"{kind} where {due.kind} was due",
                )
                raise _Stop
            self.due.pop(0)
        if not is_transition_allowed(self.recorder.state.status, kind):
            self.violate(
                ContractRule.ILLEGAL_TRANSITION,
                f"yielded {kind} while the run is {self.recorder.state.status}",
            )
            raise _Stop
        try:
            event = self.recorder.envelope(item)
        except Exception as exc:
            self.violate(
                ContractRule.NOT_SERIALIZABLE,
                f"yielded a {kind} that does not survive JSON ({type(exc).__name__})",
            )
            raise _Stop from None
        self.recorder.append(event)
        return event

    async def drain(self, iterator: AsyncIterator[Payload], final: str) -> None:
        """After a final payload the engine must end: ask once more and expect the end.

        After ``run.interrupted``, further ``run.interrupted`` payloads are the other questions
        the run parks on: each is accepted (checked and recorded) before asking again.
        """
        while True:
            deadline = asyncio.timeout(_DRAIN_TIMEOUT)
            try:
                async with deadline:
                    extra: object = await anext(iterator)
            except StopAsyncIteration:
                return
            except TimeoutError:
                if not deadline.expired():
                    raise
                self.violate(
                    ContractRule.AFTER_FINAL,
                    f"kept running for {_DRAIN_TIMEOUT}s after its {final} instead of ending",
                )
                return
            except Exception as exc:
                self.violate(
                    ContractRule.AFTER_FINAL, f"raised {type(exc).__name__} after its {final}"
                )
                return
            self.yielded.append(extra)
            if final == RunInterrupted.KIND and isinstance(extra, RunInterrupted):
                try:
                    self.accept(extra)
                except _Stop:
                    return
                continue
            extra_kind = getattr(extra, "kind", type(extra).__name__)
            self.violate(ContractRule.AFTER_FINAL, f"yielded {extra_kind} after its {final}")
            return

    async def close(self, iterator: AsyncIterator[Payload]) -> None:
        aclose = getattr(iterator, "aclose", None)
        if aclose is None:
            return
        try:
            await aclose()
        except Exception as exc:
            self.violate(
                ContractRule.CLOSE_FAILED, f"raised {type(exc).__name__} when its iterator closed"
            )


# =========================================================================== contract checks
# Each raises AssertionError naming what is wrong. EngineContract runs them; tests of a broken
# engine call them directly.


def _log_of(result: DriveResult) -> str:
    return ", ".join(result.kinds)


def check_log(events: Sequence[Event]) -> None:
    """A whole log is well formed: dense seq from 0, one ``run.started`` first, every lifecycle
    edge designed, and at most one terminal event, last."""
    assert events, "the log is empty"
    assert events[0].kind == "run.started", f"the log starts with {events[0].kind}"
    state = RunState()
    for index, event in enumerate(events):
        assert event.seq == index, f"seq is not dense: event {index} has seq {event.seq}"
        assert is_transition_allowed(state.status, event.kind), (
            f"{event.kind} at seq {event.seq} is not allowed while the run is {state.status}"
        )
        state = apply(state, event)
    terminals = [event.seq for event in events if event.kind in TERMINAL_KINDS]
    assert len(terminals) <= 1, f"more than one terminal event, at seqs {terminals}"
    assert not terminals or terminals[0] == events[-1].seq, "the terminal event is not last"


def check_payloads(result: DriveResult) -> None:
    """Everything the engine yielded is a payload model of a known kind that survives JSON."""
    bad = [
        violation
        for violation in result.violations
        if violation.rule in (ContractRule.NOT_A_PAYLOAD, ContractRule.NOT_SERIALIZABLE)
    ]
    assert not bad, f"engine {result.engine!r} yielded invalid payloads: {[str(v) for v in bad]}"
    for item in result.yielded:
        assert isinstance(item, PAYLOAD_TYPES), f"yielded a {type(item).__name__}"
        assert item.kind == type(item).KIND, f"a {type(item).__name__} with kind {item.kind}"


def check_folded_like_content(
    result: DriveResult, kinds: Collection[str] = RESERVED_KINDS
) -> list[Event]:
    """Every event of ``kinds`` the engine yielded was recorded, in order, and moved nothing: the
    run's status after it is the status before it (a reserved kind is folded like content).
    Returns those events; at least one must be there."""
    result.assert_clean()
    check_log(result.events)
    found: list[Event] = []
    state = RunState()
    for event in result.events:
        after = apply(state, event)
        if event.kind in kinds:
            assert after.status is state.status, (
                f"{event.kind} at seq {event.seq} moved the run from {state.status} to "
                f"{after.status}; a non-lifecycle event never moves it"
            )
            found.append(event)
        state = after
    assert found, f"no event of {sorted(kinds)} was recorded ({_log_of(result)})"
    return found


def check_completed(result: DriveResult) -> list[ContentBlock]:
    """The play ended ``run.completed``: its one final payload, last, with no violations."""
    result.assert_clean()
    check_log(result.events)
    assert result.status is RunStatus.COMPLETED, (
        f"expected the run to complete; it is {result.status} ({_log_of(result)})"
    )
    finals = [event for event in result.new_events if event.kind in FINAL_KINDS]
    assert len(finals) == 1, f"expected one final payload, got {[e.kind for e in finals]}"
    assert finals[0] == result.last, "the final payload is not the last event"
    output = result.output
    assert output is not None
    return output


def check_failed(result: DriveResult, *, failure_text: str | None = None) -> RunFailed:
    """The play ended ``run.failed``, and no exception text reached the log.

    When the engine raised, the driver's record names the exception type only. ``failure_text``
    is text the failing code's exception carries; it must appear in no ``run.failed`` message,
    whoever recorded it.
    """
    result.assert_clean()
    check_log(result.events)
    failed = result.last.payload
    assert isinstance(failed, RunFailed), (
        f"expected the run to end run.failed; it is {result.status} ({_log_of(result)})"
    )
    if result.raised is not None:
        assert failed.error_code == ErrorCode.ENGINE_ERROR
        assert failed.message == f"engine '{result.engine}' raised {type(result.raised).__name__}"
        text = str(result.raised)
        assert not text or text not in failed.message, "the exception text leaked into the log"
    if failure_text:
        assert failure_text not in failed.message, (
            f"run.failed message {failed.message!r} carries the exception text"
        )
    return failed


def check_control(result: DriveResult, verb: ControlVerb) -> None:
    """The engine acted on a ``verb`` directive: the directive's payloads end the log, in order,
    ``control.observed`` names the safe point the engine passed, and nothing followed."""
    result.assert_clean()
    check_log(result.events)
    assert result.directive is not None and result.directive_at is not None, (
        f"the engine reached {len(result.safe_points)} safe point(s), too few for the directive "
        f"({_log_of(result)})"
    )
    assert result.directive.verb is verb
    ending = "run.cancelled" if verb is ControlVerb.CANCEL else "run.paused"
    tail = result.events[-3:]
    assert [event.kind for event in tail] == ["control.requested", "control.observed", ending], (
        f"expected control.requested, control.observed, {ending} to end the log; "
        f"got {_log_of(result)}"
    )
    assert tuple(event.payload for event in tail) == result.directive.payloads
    observed = tail[1].payload
    assert isinstance(observed, ControlObserved)
    assert observed.safe_point == result.safe_points[result.directive_at - 1]
    expected = RunStatus.CANCELLED if verb is ControlVerb.CANCEL else RunStatus.PAUSED
    assert result.status is expected, f"expected {expected}; it is {result.status}"


def check_interrupted(result: DriveResult) -> str:
    """The play parked on ``run.interrupted`` with an interrupt id; returns the id."""
    result.assert_clean()
    check_log(result.events)
    asked = result.last.payload
    assert isinstance(asked, RunInterrupted), (
        f"expected the run to park on run.interrupted; it is {result.status} ({_log_of(result)})"
    )
    assert asked.interrupt_id, "run.interrupted has an empty interrupt_id"
    assert result.status is RunStatus.WAITING_ANSWER
    return asked.interrupt_id


def check_safe_points(result: DriveResult, capabilities: EngineCapabilities) -> None:
    """Every safe point the engine reached, and every one the log observed, is declared."""
    declared = capabilities.safe_points
    undeclared = [str(point) for point in result.safe_points if point not in declared]
    assert not undeclared, f"reached undeclared safe points {undeclared}; declared {declared}"
    for event in result.new_events:
        if isinstance(event.payload, ControlObserved):
            assert event.payload.safe_point in declared, (
                f"control.observed at {event.payload.safe_point}, not declared"
            )


def check_capabilities(engine: Engine) -> None:
    """The engine names itself and declares its capabilities as flags of known values."""
    name: object = engine.name  # declared by a third party: checked, not trusted
    assert isinstance(name, str) and name, "an engine has a non-empty name"
    capabilities = engine.capabilities
    assert isinstance(capabilities, EngineCapabilities)
    for point in capabilities.safe_points:
        assert isinstance(point, SafePoint), f"safe point {point!r} is not an events.SafePoint"
        assert point is not SafePoint.SUSPENDED, (
            "'suspended' is where the runtime acts on a parked run, not an engine's safe point"
        )
    assert isinstance(capabilities.interrupts, bool)
    assert isinstance(capabilities.durable_suspend, bool)


def check_compiles(engine: Engine, definition: object) -> Invocable:
    """The engine accepts ``definition`` and compiles it, idempotently, to its own Invocable."""
    assert engine.accepts(definition), f"engine {engine.name!r} does not accept {definition!r}"
    invocable = engine.compile(definition)
    assert isinstance(invocable, Invocable)
    assert invocable.engine == engine.name, (
        f"compiled invocable names engine {invocable.engine!r}, not {engine.name!r}"
    )
    assert invocable.name and invocable.kind, "an invocable has a name and a kind"
    again = engine.compile(definition)
    identity = ("name", "kind", "engine", "code_digest")
    assert all(getattr(again, a) == getattr(invocable, a) for a in identity), (
        "compiling the same definition twice gave a different invocable"
    )
    return invocable


async def check_walk_away(engine: Engine, invocation: Invocation, *, after: int = 1) -> None:
    """A consumer that stops after ``after`` payloads closes the engine's iterator cleanly."""
    played = replace(invocation, state=invocation.state or MemoryStateArea())
    iterator = engine.play(played)
    aclose = getattr(iterator, "aclose", None)
    assert aclose is not None, (
        "play() must return an async generator (or an iterator with aclose) so a consumer "
        "that walks away can close it"
    )
    for _ in range(after):
        await anext(iterator)
    try:
        await aclose()
    except Exception as exc:
        raise AssertionError(
            f"closing engine {engine.name!r}'s iterator raised {type(exc).__name__}"
        ) from exc
    try:
        extra = await anext(iterator)
    except StopAsyncIteration:
        return
    raise AssertionError(f"engine {engine.name!r} yielded {extra!r} after being closed")


# =========================================================================== the contract


@dataclass(frozen=True)
class EngineScenarios:
    """Definitions (of the engine's own kind) the contract plays, and what to feed them.

    A capability the engine declares makes the scenario that exercises it required: declaring
    safe points requires ``streams``, declaring interrupts requires ``asks``.
    """

    completes: object
    """Plays to ``run.completed``."""
    fails: object
    """Its execution raises inside the engine's user code (a tool, a node, a step): the run must
    end ``run.failed``, whether the engine yields that or raises."""
    streams: object | None = None
    """Yields at least two content payloads and passes at least two safe points, then
    completes."""
    asks: object | None = None
    """Parks on ``run.interrupted``; answered with ``answer_value``, it completes."""
    answer_value: Any = "yes"
    """The answer given to ``asks`` (any JSON value)."""
    failure_text: str | None = None
    """Text in the exception ``fails`` raises; it must never reach a ``run.failed`` message."""
    input: str | Sequence[ContentBlock] = "hello"
    context: Any = None
    check_output: Callable[[str, list[ContentBlock]], bool | None] | None = None
    """Called with the scenario name (``completes``, ``streams``, ``asks``) and the output of
    each completed run; raise ``AssertionError`` or return ``False`` to reject it."""

    def definitions(self) -> dict[str, object]:
        named = {
            "completes": self.completes,
            "fails": self.fails,
            "streams": self.streams,
            "asks": self.asks,
        }
        return {name: definition for name, definition in named.items() if definition is not None}

    def verify_output(self, name: str, output: list[ContentBlock]) -> None:
        if self.check_output is not None and self.check_output(name, output) is False:
            raise AssertionError(f"check_output rejected the {name!r} output: {output!r}")


@asynccontextmanager
async def _opened(engine: Engine) -> AsyncIterator[Engine]:
    await engine.open()
    try:
        yield engine
    finally:
        await engine.close()


class EngineContract(ContractKit):
    """The engine contract as a base test class.

    Subclass it in a ``Test...`` class and override the fixtures:

    * ``engine_factory``: returns a callable that makes a fresh, *unopened* engine of the
      configuration under test (the kit opens and closes it). Durable-suspend tests make a second
      instance with it, to prove a suspended run continues from the log and the state area
      alone. Alternatively override ``engine`` (yield an opened engine); then an engine that
      declares ``durable_suspend`` still needs ``engine_factory``.
    * ``scenarios``: an :class:`EngineScenarios` of your definitions.

    A subclass replaces a contract test only by naming it in ``overridden = {name: reason}``;
    anything else dropped or redefined fails when the class is defined
    (:mod:`agentdeck.testing.guard`). Async fixtures use ``pytest_asyncio.fixture`` and the guard
    marks the kit's coroutine tests, so the kit runs under pytest-asyncio's strict mode too.
    """

    __contract_kit__ = True

    # -- fixtures the implementer supplies -------------------------------------------------------

    @pytest.fixture
    def engine_factory(self) -> Callable[[], Engine]:
        # Fails only when called: a test that requests the factory and then skips must not error.
        def missing() -> Engine:
            pytest.fail(
                "override the engine_factory fixture to return a callable making a fresh, "
                "unopened engine (or override engine and, for durable_suspend, engine_factory)"
            )

        return missing

    @pytest_asyncio.fixture
    async def engine(self, engine_factory: Callable[[], Engine]) -> AsyncIterator[Engine]:
        async with _opened(engine_factory()) as engine:
            yield engine

    @pytest.fixture
    def scenarios(self) -> EngineScenarios:
        pytest.fail("override the scenarios fixture to return an EngineScenarios")

    # -- helpers ---------------------------------------------------------------------------------

    @staticmethod
    def invocation(engine: Engine, definition: object, scenarios: EngineScenarios) -> Invocation:
        return make_invocation(engine, definition, scenarios.input, context=scenarios.context)

    @staticmethod
    def require_safe_points(engine: Engine, scenarios: EngineScenarios) -> object:
        if not engine.capabilities.safe_points:
            pytest.skip("engine declares no safe points")
        if scenarios.streams is None:
            pytest.fail("the engine declares safe points, so EngineScenarios.streams is required")
        return scenarios.streams

    @staticmethod
    def require_interrupts(engine: Engine, scenarios: EngineScenarios) -> object:
        if not engine.capabilities.interrupts:
            pytest.skip("engine declares no interrupts")
        if scenarios.asks is None:
            pytest.fail("the engine declares interrupts, so EngineScenarios.asks is required")
        return scenarios.asks

    @staticmethod
    def require_durable(engine: Engine) -> None:
        if not engine.capabilities.durable_suspend:
            pytest.skip("engine declares no durable_suspend")

    # -- declaration and compilation -------------------------------------------------------------

    def test_no_kit_test_is_dropped_or_silently_overridden(self) -> None:
        check_contract(type(self))

    def test_capabilities_are_declared_flags(self, engine: Engine) -> None:
        check_capabilities(engine)

    def test_accepts_and_compiles_its_definitions(
        self, engine: Engine, scenarios: EngineScenarios
    ) -> None:
        for definition in scenarios.definitions().values():
            check_compiles(engine, definition)

    def test_refuses_what_it_cannot_run(self, engine: Engine) -> None:
        assert not engine.accepts(object()), "an engine accepts only definitions it can run"

    # -- plays -----------------------------------------------------------------------------------

    async def test_completes_with_one_final_payload_last(
        self, engine: Engine, scenarios: EngineScenarios
    ) -> None:
        result = await drive(engine, self.invocation(engine, scenarios.completes, scenarios))
        scenarios.verify_output("completes", check_completed(result))

    async def test_payloads_are_valid_models(
        self, engine: Engine, scenarios: EngineScenarios
    ) -> None:
        for definition in (scenarios.completes, scenarios.streams):
            if definition is not None:
                result = await drive(engine, self.invocation(engine, definition, scenarios))
                check_payloads(result)
                result.assert_clean()

    async def test_failing_code_ends_failed_without_leaking_its_text(
        self, engine: Engine, scenarios: EngineScenarios
    ) -> None:
        result = await drive(engine, self.invocation(engine, scenarios.fails, scenarios))
        check_failed(result, failure_text=scenarios.failure_text)

    async def test_consumer_walking_away_closes_the_engine(
        self, engine: Engine, scenarios: EngineScenarios
    ) -> None:
        definition = scenarios.streams if scenarios.streams is not None else scenarios.completes
        await check_walk_away(engine, self.invocation(engine, definition, scenarios))

    async def test_safe_points_reached_are_declared(
        self, engine: Engine, scenarios: EngineScenarios
    ) -> None:
        for definition in scenarios.definitions().values():
            result = await drive(engine, self.invocation(engine, definition, scenarios))
            check_safe_points(result, engine.capabilities)

    async def test_streams_content_through_safe_points(
        self, engine: Engine, scenarios: EngineScenarios
    ) -> None:
        if scenarios.streams is None:
            if engine.capabilities.safe_points:
                pytest.fail(
                    "the engine declares safe points, so EngineScenarios.streams is required"
                )
            pytest.skip("EngineScenarios.streams not provided (optional without safe points)")
        result = await drive(engine, self.invocation(engine, scenarios.streams, scenarios))
        output = check_completed(result)
        content = [
            event.kind
            for event in result.new_events
            if event.kind not in LIFECYCLE_KINDS and not event.kind.startswith("control.")
        ]
        assert len(content) >= 2, f"streams yielded {len(content)} content payload(s): {content}"
        if engine.capabilities.safe_points:
            assert len(result.safe_points) >= 2, (
                f"streams passed {len(result.safe_points)} safe point(s); it must pass two"
            )
        scenarios.verify_output("streams", output)

    # -- control ---------------------------------------------------------------------------------

    async def test_cancel_at_first_safe_point_ends_cancelled(
        self, engine: Engine, scenarios: EngineScenarios
    ) -> None:
        streams = self.require_safe_points(engine, scenarios)
        result = await drive(
            engine,
            self.invocation(engine, streams, scenarios),
            directives={1: ControlVerb.CANCEL},
        )
        check_control(result, ControlVerb.CANCEL)
        check_safe_points(result, engine.capabilities)

    async def test_pause_at_safe_point_then_continue_completes(
        self, engine: Engine, scenarios: EngineScenarios
    ) -> None:
        streams = self.require_safe_points(engine, scenarios)
        invocation = self.invocation(engine, streams, scenarios)
        paused = await drive(engine, invocation, directives={1: ControlVerb.PAUSE})
        check_control(paused, ControlVerb.PAUSE)
        resumed = await drive(
            engine,
            invocation,
            history=paused.events,
            entry=Entry.AFTER_PAUSE,
            state=paused.state_area,
        )
        scenarios.verify_output("streams", check_completed(resumed))

    async def test_paused_run_continues_on_a_fresh_engine(
        self,
        engine: Engine,
        engine_factory: Callable[[], Engine],
        scenarios: EngineScenarios,
    ) -> None:
        self.require_durable(engine)
        streams = self.require_safe_points(engine, scenarios)
        paused = await drive(
            engine,
            self.invocation(engine, streams, scenarios),
            directives={1: ControlVerb.PAUSE},
        )
        check_control(paused, ControlVerb.PAUSE)
        resumed = await self._continue_elsewhere(
            engine_factory, streams, scenarios, paused, Entry.AFTER_PAUSE, {}
        )
        scenarios.verify_output("streams", check_completed(resumed))

    # -- interrupts ------------------------------------------------------------------------------

    async def test_interrupt_then_answer_completes(
        self, engine: Engine, scenarios: EngineScenarios
    ) -> None:
        asks = self.require_interrupts(engine, scenarios)
        invocation = self.invocation(engine, asks, scenarios)
        parked = await drive(engine, invocation)
        interrupt_id = check_interrupted(parked)
        answered = await drive(
            engine,
            invocation,
            history=parked.events,
            entry=Entry.ANSWERED,
            answers={interrupt_id: scenarios.answer_value},
            state=parked.state_area,
        )
        scenarios.verify_output("asks", check_completed(answered))

    async def test_answered_run_continues_on_a_fresh_engine(
        self,
        engine: Engine,
        engine_factory: Callable[[], Engine],
        scenarios: EngineScenarios,
    ) -> None:
        self.require_durable(engine)
        asks = self.require_interrupts(engine, scenarios)
        parked = await drive(engine, self.invocation(engine, asks, scenarios))
        interrupt_id = check_interrupted(parked)
        answered = await self._continue_elsewhere(
            engine_factory,
            asks,
            scenarios,
            parked,
            Entry.ANSWERED,
            {interrupt_id: scenarios.answer_value},
        )
        scenarios.verify_output("asks", check_completed(answered))

    async def _continue_elsewhere(
        self,
        engine_factory: Callable[[], Engine],
        definition: object,
        scenarios: EngineScenarios,
        suspended: DriveResult,
        entry: Entry,
        answers: Mapping[str, Any],
    ) -> DriveResult:
        """Continue ``suspended`` as another process would: a new engine instance, the log read
        back from JSON, and a copy of the state area; nothing else carries over."""
        history = [Event.from_json(event.to_json()) for event in suspended.events]
        area = suspended.state_area
        state = area.copy() if isinstance(area, MemoryStateArea) else area
        async with _opened(engine_factory()) as fresh:
            return await drive(
                fresh,
                self.invocation(fresh, definition, scenarios),
                history=history,
                entry=entry,
                answers=answers,
                state=state,
            )


# =========================================================================== the scripted engine


@dataclass(frozen=True, slots=True)
class Yield:
    """Yield one payload (content, a report, a tool call...; never a lifecycle or control one)."""

    payload: Payload

    @classmethod
    def text(cls, text: str, message_id: str = "msg-1") -> Yield:
        return cls(TextDelta(message_id=message_id, text=text))


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Pass a safe point: ask the runtime for a directive, and act on one if it comes."""

    point: SafePoint = SafePoint.STREAM_ITEM


@dataclass(frozen=True, slots=True)
class Ask:
    """Park on ``run.interrupted`` until ``interrupt_id`` is answered; the answer goes into the
    output (a :class:`DataBlock` ``{"interrupt_id": ..., "answer": ...}``, before the final
    blocks)."""

    interrupt_id: str
    payload: Any = None
    reason: InterruptReason | str = InterruptReason.HUMAN
    expected: AnswerShape | None = None


@dataclass(frozen=True, slots=True)
class Raise:
    """Raise ``error(message)``, as user code inside an engine would; ends the script."""

    error: type[Exception] = RuntimeError
    message: str = "scripted failure"


@dataclass(frozen=True, slots=True)
class Complete:
    """Yield ``run.completed``; ends the script.

    The output is each answered :class:`Ask`'s block, then the input blocks if ``echo_input``,
    then ``output``.
    """

    output: str | Sequence[ContentBlock] = ()
    usage: Usage = field(default_factory=Usage)
    echo_input: bool = False


Step = Yield | Checkpoint | Ask | Raise | Complete
"""One step of a :class:`Script`."""

_NOT_YIELDABLE = LIFECYCLE_KINDS | {
    "control.requested",
    "control.observed",
    "answer.recorded",
    "answer.refused",
}


@dataclass(frozen=True, slots=True)
class Script:
    """A :class:`ScriptedEngine` definition: a name and the steps a run of it takes, in order.

    The last step is :class:`Complete` or :class:`Raise`, and only the last. Example::

        Script("greet", [Yield.text("hi"), Checkpoint(), Ask("ok"), Complete("done")])
    """

    name: str
    steps: Sequence[Step]
    kind: str = "workflow"
    description: str = ""

    __agentdeck_workflow__: ClassVar[bool] = True
    """Lets a ``Deck`` take scripts in ``workflows=`` (played on :class:`ScriptedEngine`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", tuple(self.steps))
        where = f"script {self.name!r}"
        if not self.name:
            raise ConfigError("a script needs a name")
        if not self.steps or not isinstance(self.steps[-1], Complete | Raise):
            raise ConfigError(f"{where} must end with Complete or Raise")
        asked: set[str] = set()
        for index, step in enumerate(self.steps):
            if isinstance(step, Complete | Raise) and index != len(self.steps) - 1:
                raise ConfigError(f"{where}: step {index} ({type(step).__name__}) must be last")
            if isinstance(step, Yield):
                if not isinstance(step.payload, PAYLOAD_TYPES):
                    raise ConfigError(f"{where}: step {index} yields a non-payload")
                if step.payload.kind in _NOT_YIELDABLE:
                    raise ConfigError(
                        f"{where}: step {index} yields {step.payload.kind}, which the runtime "
                        "writes; use Complete, Raise, Ask or Checkpoint"
                    )
            if isinstance(step, Ask):
                if not step.interrupt_id or step.interrupt_id in asked:
                    raise ConfigError(
                        f"{where}: step {index} needs a unique interrupt id, "
                        f"not {step.interrupt_id!r}"
                    )
                asked.add(step.interrupt_id)

    def digest(self) -> str:
        """A digest of the steps: a changed script is a changed ``code_digest``."""
        return hashlib.sha256(repr((self.kind, self.steps)).encode()).hexdigest()


def reserved_kinds_script(name: str = "reserved_kinds") -> Script:
    """The reserved-kinds scenario: a script that yields one payload of every reserved kind
    (:data:`RESERVED_KINDS`, filled as :mod:`agentdeck.testing.event_examples` fills them)
    between two text deltas, then completes. Played by :func:`drive` or by a deck, its log must
    hold those payloads where they were yielded, folded like content
    (:func:`check_folded_like_content`): a newer engine yielding a reserved kind breaks nothing.
    """
    reserved = [
        Yield(event_examples.PAYLOAD_EXAMPLES[payload])
        for payload in PAYLOAD_TYPES
        if payload.RESERVED
    ]
    return Script(name, [Yield.text("before"), *reserved, Yield.text("after"), Complete("done")])


class ScriptedEngine(Engine):
    """A deterministic engine that plays :class:`Script` definitions step by step.

    Durable by construction: its only memory of a suspended run is the index of the next step,
    kept in the run's engine-state area (written before it yields ``run.paused`` or
    ``run.interrupted``), and the answers, read from the ``answer.recorded`` events of the log.
    So any instance continues any run it is given the log and state area of (without a state area
    it still plays, but cannot continue what it suspended). A continuation whose script changed
    since the run started (another ``code_digest``) raises :class:`~agentdeck.errors.ReplayError`.
    """

    name: ClassVar[str] = "scripted"
    capabilities: ClassVar[EngineCapabilities] = EngineCapabilities(
        safe_points=frozenset({SafePoint.STREAM_ITEM}),
        interrupts=True,
        durable_suspend=True,
    )

    POSITION: ClassVar[str] = "scripted.position"
    """The state-area name holding the index of the step a continuation starts at."""

    def accepts(self, definition: object) -> bool:
        return isinstance(definition, Script)

    def compile(self, definition: object) -> Invocable:
        if not isinstance(definition, Script):
            raise ConfigError(
                f"the scripted engine runs Script definitions, not {type(definition).__name__}"
            )
        for index, step in enumerate(definition.steps):
            if isinstance(step, Checkpoint) and step.point not in self.capabilities.safe_points:
                raise ConfigError(
                    f"script {definition.name!r}: step {index} passes safe point "
                    f"{step.point}, which the scripted engine does not declare"
                )
        return Invocable(
            name=definition.name,
            kind=definition.kind,
            engine=self.name,
            definition=definition,
            compiled=definition.steps,
            description=definition.description,
            code_digest=definition.digest(),
        )

    async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
        script = invocation.invocable.definition
        if not isinstance(script, Script):
            raise TypeError(f"not a Script: {type(script).__name__}")
        position = await self._position(invocation)
        answers = self._answers(invocation)
        for index in range(position, len(script.steps)):
            step = script.steps[index]
            if isinstance(step, Yield):
                yield step.payload
            elif isinstance(step, Checkpoint):
                directive = await invocation.safepoint(step.point)
                if directive is not None:
                    # Past this safe point: a continuation after a pause starts at the next step.
                    await self._save(invocation, index + 1)
                    for payload in directive.payloads:
                        yield payload
                    return
            elif isinstance(step, Ask):
                if step.interrupt_id in answers:
                    continue
                await self._save(invocation, index)
                yield RunInterrupted(
                    interrupt_id=step.interrupt_id,
                    reason=step.reason,
                    payload=step.payload,
                    expected=step.expected,
                )
                return
            elif isinstance(step, Raise):
                raise step.error(step.message)
            else:
                if invocation.state is not None:
                    await invocation.state.delete(self.POSITION)
                yield RunCompleted(
                    output=self._output(script, step, answers, invocation), usage=step.usage
                )
                return

    async def _position(self, invocation: Invocation) -> int:
        if invocation.entry is Entry.FRESH:
            return 0
        started = invocation.history[0].payload if invocation.history else None
        digest = started.code_digest if isinstance(started, RunStarted) else None
        if digest is not None and digest != invocation.invocable.code_digest:
            raise ReplayError(
                f"run '{invocation.run_id}' started with another version of script "
                f"{invocation.invocable.name!r}",
                run_id=invocation.run_id,
                reason="code_changed",
            )
        saved = await invocation.state.get(self.POSITION) if invocation.state else None
        if saved is None:
            raise ReplayError(
                f"run '{invocation.run_id}' has no saved position in its engine-state area",
                run_id=invocation.run_id,
                reason="state_missing",
            )
        position: int = json.loads(saved)["position"]
        return position

    async def _save(self, invocation: Invocation, position: int) -> None:
        if invocation.state is not None:
            await invocation.state.put(self.POSITION, json.dumps({"position": position}).encode())

    @staticmethod
    def _answers(invocation: Invocation) -> dict[str, Any]:
        answers = {
            event.payload.interrupt_id: event.payload.value
            for event in invocation.history
            if isinstance(event.payload, AnswerRecorded)
        }
        answers.update(invocation.answers)
        return answers

    @staticmethod
    def _output(
        script: Script, step: Complete, answers: Mapping[str, Any], invocation: Invocation
    ) -> list[ContentBlock]:
        output: list[ContentBlock] = [
            DataBlock(data={"interrupt_id": ask.interrupt_id, "answer": answers[ask.interrupt_id]})
            for ask in script.steps
            if isinstance(ask, Ask) and ask.interrupt_id in answers
        ]
        if step.echo_input:
            output.extend(invocation.input)
        text = step.output
        output.extend(content_blocks(text if isinstance(text, str) else list(text)))
        return output
