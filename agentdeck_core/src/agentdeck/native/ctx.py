"""The :class:`~agentdeck.authoring.context.WorkflowCtx` the native engine hands a ``@workflow``
body.

Each operation is a point the engine records or replays (see :mod:`agentdeck.native` for the
rules a body follows). Operations that produce a payload wait until the runtime has persisted it
before returning, so whatever the body does next happens after its log says what came before.

A body that misuses its context -- a step result, question or report that is not JSON data, a
naive ``sleep_until`` time, an unusable answer schema, an ordinal operation called from inside a
step -- does not get an exception it could swallow: the run fails with ``run.failed``
(``engine_error``) whose message, written by the engine, names the mistake and what would have
been accepted. A replay that reaches a different operation than its journal recorded ends the
play with :class:`~agentdeck.errors.ReplayError` (``reason="nondeterministic"``).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NoReturn, TypeVar

from pydantic import ValidationError

from agentdeck.authoring.context import WorkflowCtx
from agentdeck.errors import ReplayError, RunSuspendedError
from agentdeck.model.clock import utc
from agentdeck.model.payloads import (
    AnswerRefused,
    Custom,
    Report,
    RunFailed,
    RunInterrupted,
    StepCompleted,
)
from agentdeck.native.answers import AnswerSpec, Refused
from agentdeck.native.channel import Channel, Park
from agentdeck.native.journal import SLEEP_STEP, Journal, invoke_step
from agentdeck.ports import Invocation
from agentdeck.vocabulary import ControlVerb, ErrorCode, SafePoint

__all__ = ["NativeWorkflowCtx", "PlayState", "ask_id"]

T = TypeVar("T")

_JSON_KINDS = "a dict (with string keys), list, str, int, float, bool or None"
_CONVERSIONS = (
    "convert first: a list for a tuple or set, .isoformat() for a time, "
    ".model_dump(mode='json') for a pydantic model"
)

_INSIDE_STEP: ContextVar[str | None] = ContextVar("agentdeck_native_inside_step", default=None)
"""The step whose function is running in this context, if any."""


def ask_id(ordinal: int) -> str:
    """The interrupt id of the body's ``ordinal``-th ask (from 0): stable across replays."""
    return f"ask-{ordinal}"


@dataclass(slots=True)
class PlayState:
    """What one play of one body shares between its context and the engine loop."""

    invocation: Invocation
    journal: Journal
    channel: Channel
    workflow: str
    operations: int = 0
    """Ordinals handed out so far to steps, invokes and sleeps (one shared sequence)."""
    asks: int = 0
    step_errors: dict[int, tuple[BaseException, str]] = field(default_factory=dict)
    """``id(exception)`` -> (the exception, the step whose function raised it), so a failure
    that escapes the body can name the step it came from."""

    def failed_step(self, error: BaseException) -> str | None:
        """The step whose function raised ``error`` (the same object), if one did."""
        found = self.step_errors.get(id(error))
        return found[1] if found is not None and found[0] is error else None

    def next_operation(self) -> int:
        index = self.operations
        self.operations += 1
        return index

    def next_ask(self) -> int:
        ordinal = self.asks
        self.asks += 1
        return ordinal


class NativeWorkflowCtx(WorkflowCtx[T]):
    """The native engine's context: ``.data`` is the run's live context object, never logged."""

    __slots__ = ("_play",)

    def __init__(self, play: PlayState, data: T) -> None:
        invocation = play.invocation
        super().__init__(
            data,
            run_id=invocation.run_id,
            session_id=invocation.session_id,
            namespace=invocation.namespace,
        )
        self._play = play

    # -- journaled operations ------------------------------------------------------------------

    async def step(self, name: str, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        play = self._play
        await self._refuse_inside_step("step")
        if not isinstance(name, str) or not name.strip():
            given = repr(name) if isinstance(name, str) else _type_of(name)
            await self._fail(
                f"ctx.step() needs a non-empty string name, not {given}", where=play.workflow
            )
        index = play.next_operation()
        where = f"{play.workflow}/{name}"
        recorded = play.journal.step(index)
        if recorded is not None:
            await self._expect(index, recorded.name, name)
            return recorded.result
        channel = play.channel
        channel.in_flight += 1
        token = _INSIDE_STEP.set(name)
        try:
            result = fn(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
        except Exception as error:
            play.step_errors[id(error)] = (error, name)
            raise
        finally:
            _INSIDE_STEP.reset(token)
            channel.in_flight -= 1
        completed = _journal_entry(index, name, result)
        if completed is None:
            await self._fail(
                f"step '{name}' (#{index}) returned {_type_of(result)}, which is not JSON data; "
                "a step's result is journaled in the run's log and a replay hands back exactly "
                f"that, so return {_JSON_KINDS}, nested ({_CONVERSIONS})",
                where=where,
            )
        await play.channel.emit(completed)
        return completed.result

    async def invoke(self, name: str, input: Any) -> Any:
        play = self._play
        await self._refuse_inside_step("invoke")
        index = play.next_operation()
        label = invoke_step(name)
        where = f"{play.workflow}/{label}"
        recorded = play.journal.step(index)
        if recorded is not None:
            await self._expect(index, recorded.name, label)
            return recorded.result
        while True:
            invoke_child = play.invocation.invoke_child
            if invoke_child is None:
                await self._fail(
                    f"ctx.invoke('{name}') cannot start a child run here: the runtime playing "
                    "this run offers no child runs (Invocation.invoke_child is not set)",
                    where=where,
                )
            channel = play.channel
            channel.in_flight += 1
            suspended_child: str | None = None
            try:
                result = await invoke_child(name, input, key=f"{play.invocation.run_id}:op-{index}")
            except RunSuspendedError as suspended:
                suspended_child = suspended.run_id
            finally:
                channel.in_flight -= 1
            if suspended_child is None:
                break
            # The child waits on someone; so does this run. A later play (a replay, or this
            # body woken in this process) asks for it again with the same key, which finds the
            # same child -- finished by then, or still waiting.
            await play.channel.park(Park(order=index, child_run_id=suspended_child))
        completed = _journal_entry(index, label, result)
        if completed is None:
            await self._fail(
                f"the child run of '{name}' (#{index}) returned {_type_of(result)}, which is not "
                f"JSON data; a child's result is journaled in the run's log, so it must be "
                f"{_JSON_KINDS}",
                where=where,
            )
        await play.channel.emit(completed)
        return completed.result

    async def sleep_until(self, when: datetime) -> None:
        play = self._play
        await self._refuse_inside_step("sleep_until")
        if not isinstance(when, datetime) or when.utcoffset() is None:
            await self._fail(
                f"ctx.sleep_until() needs a timezone-aware datetime, not {_describe_time(when)}; "
                "give it a tzinfo, e.g. datetime(2026, 5, 1, 9, 0, tzinfo=UTC)",
                where=play.workflow,
            )
        index = play.next_operation()
        now = play.invocation.clock.now()
        recorded = play.journal.step(index)
        if recorded is not None:
            await self._expect(index, recorded.name, SLEEP_STEP)
            wake_at = _journaled_wake(recorded.result)
            if wake_at is None:
                await self._diverge(
                    f"operation #{index} was journaled as a sleep without a readable wake time"
                )
            if play.journal.sleep_is_over(recorded.seq, wake_at, now):
                return
        else:
            wake_at = utc(when)
            # The wake time is journaled even when it has passed: a replay must sleep until the
            # time this run computed, not one the body computes again from a later clock.
            await play.channel.emit(
                StepCompleted(index=index, name=SLEEP_STEP, result={"wake_at": wake_at})
            )
            if wake_at <= now:
                return
        while True:
            await play.channel.park(Park(order=index, wake_at=wake_at))
            # Woken by a later play in this process: over when its time has come, or when the
            # run was resumed from the pause that waited for it (an operator may wake it early).
            if wake_at <= play.invocation.clock.now() or play.journal.woke_from(wake_at):
                return

    async def ask(
        self,
        question: Any,
        *,
        schema: type[Any] | Mapping[str, Any] | None = None,
        options: Sequence[str] | None = None,
    ) -> Any:
        play = self._play
        await self._refuse_inside_step("ask")
        ordinal = play.next_ask()
        interrupt_id = ask_id(ordinal)
        where = f"{play.workflow}/{interrupt_id}"
        try:
            spec = AnswerSpec.build(schema, options)
        except ValueError as unusable:
            await self._fail(str(unusable), where=where)
        try:
            interrupt = RunInterrupted(
                interrupt_id=interrupt_id, payload=question, expected=spec.shape
            )
        except ValidationError:
            await self._fail(
                f"ctx.ask() question {interrupt_id} is {_type_of(question)}, which is not JSON "
                f"data; a question is recorded in the run's log, so pass {_JSON_KINDS}",
                where=where,
            )
        while True:
            # Replayed, or woken by a later play in this process: what its journal holds.
            recorded = play.journal.ask(interrupt_id)
            if recorded is not None:
                if recorded.asked and recorded.question != interrupt.payload:
                    await self._diverge(
                        f"{interrupt_id} asks a different question than the run recorded; the "
                        "answer it holds belongs to that question"
                    )
                if recorded.answered:
                    verdict = spec.check(recorded.value)
                    if not isinstance(verdict, Refused):
                        return verdict.value
                    await play.channel.emit(
                        AnswerRefused(interrupt_id=interrupt_id, reason=verdict.reason)
                    )
            await play.channel.park(Park(order=ordinal, interrupt=interrupt))

    # -- control ------------------------------------------------------------------------------

    async def safepoint(self) -> None:
        channel = self._play.channel
        await channel.refuse_if_stopping()
        async with channel.checkpoint_lock:
            await channel.refuse_if_stopping()
            directive = await self._play.invocation.safepoint(SafePoint.WORKFLOW_SAFEPOINT)
            if directive is None:
                return
            channel.stop(directive)
        if directive.verb is ControlVerb.PAUSE:
            await channel.suspend()  # a resume in this process goes on from here
            return
        await channel.hold()

    # -- records ------------------------------------------------------------------------------

    async def report(self, message: str, *, level: str = "info", **fields: Any) -> None:
        play = self._play
        try:
            payload = Report(level=level, message=message, fields=fields)
        except ValidationError:
            await self._fail(
                "ctx.report() takes a string message, a string level and JSON field values "
                f"({_JSON_KINDS}); got {_described_fields(message, fields)}",
                where=play.workflow,
            )
        if play.journal.claim_echo(payload):
            return
        await play.channel.emit(payload)

    async def emit(self, name: str, data: Any = None) -> None:
        play = self._play
        try:
            payload = Custom(name=name, data=data)
        except ValidationError:
            await self._fail(
                f"ctx.emit() takes a namespaced name like 'app.thing' and JSON data "
                f"({_JSON_KINDS}); got name {name!r} with {_type_of(data)}",
                where=play.workflow,
            )
        if play.journal.claim_echo(payload):
            return
        await play.channel.emit(payload)

    # -- helpers ------------------------------------------------------------------------------

    async def _fail(self, message: str, *, where: str) -> NoReturn:
        await self._play.channel.fail(
            RunFailed(error_code=ErrorCode.ENGINE_ERROR, message=message, where=where)
        )

    async def _diverge(self, detail: str) -> NoReturn:
        play = self._play
        await play.channel.diverge(
            ReplayError(
                f"run '{play.invocation.run_id}' of workflow '{play.workflow}' did not replay "
                f"as recorded: {detail}. A body must reach the same operations in the same "
                "order on every replay; move wall-clock time, randomness and I/O into "
                "ctx.step(...)",
                run_id=play.invocation.run_id,
                reason="nondeterministic",
            )
        )

    async def _expect(self, index: int, recorded: str, reached: str) -> None:
        if recorded != reached:
            await self._diverge(
                f"operation #{index} is '{reached}' now but was journaled as '{recorded}'"
            )

    async def _refuse_inside_step(self, operation: str) -> None:
        inside = _INSIDE_STEP.get()
        if inside is not None:
            await self._fail(
                f"ctx.{operation}() was called inside step '{inside}'; a step's function runs "
                "once and is then replayed from its result, so it cannot contain journaled "
                "operations: call them from the body, between steps",
                where=f"{self._play.workflow}/{inside}",
            )


def _journal_entry(index: int, name: str, result: Any) -> StepCompleted | None:
    """The ``step.completed`` for ``result``, or ``None`` when ``result`` is not JSON data as it
    stands. A value JSON would change (a tuple, a time, a model) is refused rather than
    converted: the body would otherwise hold a different type on its first run than the one its
    annotations promise, and than its replays get."""
    try:
        completed = StepCompleted(index=index, name=name, result=result)
    except ValidationError:
        return None
    return completed if _is_json_as_is(result) else None


def _is_json_as_is(value: Any) -> bool:
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json_as_is(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json_as_is(v) for k, v in value.items())
    return False


def _journaled_wake(result: Any) -> datetime | None:
    if not isinstance(result, dict) or not isinstance(result.get("wake_at"), str):
        return None
    try:
        moment = datetime.fromisoformat(result["wake_at"])
    except ValueError:
        return None
    return utc(moment) if moment.utcoffset() is not None else None


def _type_of(value: Any) -> str:
    """A value's type for a message: never the value, which may hold anything."""
    return f"a {type(value).__name__}"


def _describe_time(value: Any) -> str:
    if isinstance(value, datetime):
        return "a naive datetime"
    return _type_of(value)


def _described_fields(message: Any, fields: Mapping[str, Any]) -> str:
    kinds = ", ".join(f"{key}={type(value).__name__}" for key, value in fields.items())
    return f"message {_type_of(message)}" + (f" and fields {kinds}" if kinds else "")
