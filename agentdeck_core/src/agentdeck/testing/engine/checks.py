"""Assertions over a finished drive, one per promise the engine contract makes.

Each ``check_*`` raises ``AssertionError`` naming what is wrong (and returns what a test needs
next: the output, the interrupt id, the failure). :class:`~.contract.EngineContract` runs them
against every engine that subclasses it; a test of a deliberately broken engine calls them
directly, to prove the kit would catch it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

from agentdeck.errors import ConfigError
from agentdeck.model.content import ContentBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import PAYLOAD_TYPES, ControlObserved, RunFailed, RunInterrupted
from agentdeck.model.status import RunState, apply, is_transition_allowed
from agentdeck.ports import ClientEngine, Engine, EngineCapabilities, Invocable, Invocation
from agentdeck.testing.engine.driver import DriveResult, make_invocation
from agentdeck.testing.engine.rules import FINAL_KINDS, RESERVED_KINDS, ContractRule
from agentdeck.testing.engine.state_area import MemoryStateArea
from agentdeck.vocabulary import TERMINAL_KINDS, ControlVerb, ErrorCode, RunStatus, SafePoint

__all__ = [
    "check_capabilities",
    "check_client_face",
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
]


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


def check_client_face(
    face: ClientEngine,
    engine: Engine,
    definitions: Collection[object],
    given: Any,
) -> None:
    """The engine's client face records what the engine would: same name and capabilities,
    and for each definition the same identity (a worker refuses a run whose ``code_digest``
    is not its own) and the same blocks for the caller's input ``given`` (unless ``None``); it
    accepts nothing else and plays nothing."""
    assert isinstance(face, ClientEngine), f"{type(face).__name__} is not a ClientEngine"
    assert face.name == engine.name, f"the face is named {face.name!r}, not {engine.name!r}"
    assert face.capabilities == engine.capabilities, (
        f"the face declares {face.capabilities}, the engine {engine.capabilities}"
    )
    for definition in definitions:
        assert face.accepts(definition), f"the face does not accept {definition!r}"
        described, compiled = face.compile(definition), engine.compile(definition)
        for attribute in ("name", "kind", "engine", "code_digest", "description", "context_type"):
            seen, expected = getattr(described, attribute), getattr(compiled, attribute)
            assert seen == expected, (
                f"{definition!r}: the face records {attribute}={seen!r}, the engine {expected!r}"
            )
        if given is not None:
            recorded = face.prepare_input(described, given)
            assert recorded == engine.prepare_input(compiled, given), (
                f"{definition!r}: the face and the engine record the input differently"
            )
    assert not face.accepts(object()), "a client face accepts only what its engine runs"
    try:
        face.play(make_invocation(engine, next(iter(definitions)), "hello"))
    except ConfigError:
        pass
    else:  # pragma: no cover - only a broken face gets here
        raise AssertionError("a client face must refuse to play (ConfigError)")


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
