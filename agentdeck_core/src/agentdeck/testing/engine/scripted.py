"""A deterministic, model-free engine whose definitions are scripts: :class:`ScriptedEngine`.

A :class:`Script` is a name and the steps a run of it takes — yield a payload, pass a safe point,
ask a question, raise, complete. It is the engine kit's self-test subject, the engine the core's
runtime and CLI tests play, and a complete engine for a plugin author to read alongside their
own. It knows nothing of the kit's driver: it plays under the runtime like any engine.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from agentdeck.errors import ConfigError, ReplayError
from agentdeck.model.content import ContentBlock, DataBlock, content_blocks
from agentdeck.model.payloads import (
    PAYLOAD_TYPES,
    AnswerRecorded,
    AnswerShape,
    Payload,
    RunCompleted,
    RunInterrupted,
    RunStarted,
    TextDelta,
    Usage,
)
from agentdeck.ports import Engine, EngineCapabilities, Entry, Invocable, Invocation
from agentdeck.testing import event_examples
from agentdeck.vocabulary import LIFECYCLE_KINDS, InterruptReason, SafePoint

__all__ = [
    "Ask",
    "Checkpoint",
    "Complete",
    "Raise",
    "Script",
    "ScriptedEngine",
    "Step",
    "Yield",
    "reserved_kinds_script",
]


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
    (:data:`~agentdeck.testing.engine.rules.RESERVED_KINDS`, filled as
    :mod:`agentdeck.testing.event_examples` fills them) between two text deltas, then completes.
    Played by :func:`~agentdeck.testing.engine.driver.drive` or by a deck, its log must hold those
    payloads where they were yielded, folded like content
    (:func:`~agentdeck.testing.engine.checks.check_folded_like_content`): a newer engine yielding
    a reserved kind breaks nothing.
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
