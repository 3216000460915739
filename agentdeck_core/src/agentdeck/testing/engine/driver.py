"""Play an engine the way the runtime does, and record what it yields: :func:`drive`.

:func:`drive` plays one run, or one continuation of a run, through an engine with the same
semantics the runtime has, and records the log the runtime would have written. It judges each
payload as it arrives (:mod:`.rules`) and reports every breach of the engine contract as a
:class:`~.rules.Violation` instead of raising, so a test can assert on what went wrong; the
assertions the contract makes over a finished drive are in :mod:`.checks`.

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
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from agentdeck.model.content import ContentBlock, content_blocks
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    PAYLOAD_TYPES,
    ControlObserved,
    ControlRequested,
    Payload,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunPaused,
    RunStarted,
)
from agentdeck.model.status import RunState
from agentdeck.ports import ControlDirective, Engine, EngineStateArea, Entry, Invocation
from agentdeck.testing.engine.recorder import Recorder, checked_history, resume
from agentdeck.testing.engine.rules import FINAL_KINDS, ContractRule, Violation, yield_violation
from agentdeck.testing.engine.state_area import MemoryStateArea
from agentdeck.vocabulary import ControlVerb, ErrorCode, RunStatus, SafePoint

__all__ = ["DriveResult", "drive", "make_invocation"]

_DRAIN_TIMEOUT = 5.0
"""Seconds an engine has to finish after its final payload before the driver gives up on it."""


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
    log = checked_history(history)
    area = state if state is not None else invocation.state
    if area is None:
        area = MemoryStateArea()

    if not log:
        if entry not in (None, Entry.FRESH):
            raise ValueError(f"a fresh run (empty history) is entered FRESH, not {entry}")
        if answers:
            raise ValueError("a fresh run has nothing to answer; pass answers with a history")
        recorder = Recorder(
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
        recorder = Recorder(
            run_id=first.run_id,
            session_id=first.session_id,
            namespace=first.namespace,
            parent_run_id=first.parent_run_id,
            origin=first.origin,
            clock_now=invocation.clock.now,
            events=list(log),
        )
        given = dict(answers or {})
        entry = resume(recorder, entry, given)
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


class _Stop(Exception):
    """Internal: the engine broke the contract and the driver stops playing it."""


class _Play:
    """One play of an engine: the checkpoint it calls and the loop that consumes it."""

    def __init__(
        self,
        engine: Engine,
        recorder: Recorder,
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
        violation = yield_violation(
            item,
            status=self.recorder.state.status,
            due=self.due[0] if self.due else None,
            directive=self.directive,
            directive_at=self.directive_at,
        )
        if violation is not None:
            self.violations.append(violation)
            raise _Stop
        assert isinstance(item, PAYLOAD_TYPES)  # all yield_violation lets through
        kind = item.kind
        if self.due:
            self.due.pop(0)
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
