"""The engine contract kit, tested on itself.

``TestScriptedEngineContract`` runs the whole contract against :class:`ScriptedEngine` (every
capability declared, so nothing may skip). The rest proves the kit is worth running: the driver
records what the runtime would, and each broken engine below makes the check for its breach fail.
"""

from __future__ import annotations

import textwrap
from collections.abc import AsyncIterator, Callable
from typing import ClassVar

import pytest

from agentdeck.errors import ConfigError
from agentdeck.model.content import ContentBlock, DataBlock, TextBlock
from agentdeck.model.payloads import (
    AnswerRecorded,
    ControlRequested,
    Payload,
    RunCompleted,
    RunFailed,
    RunResumed,
    RunStarted,
    TextDelta,
)
from agentdeck.ports import Engine, EngineCapabilities, Entry, Invocable, Invocation
from agentdeck.testing import engine_kit
from agentdeck.testing.engine import driver
from agentdeck.testing.engine.rules import yield_violation
from agentdeck.testing.engine_kit import (
    Ask,
    Checkpoint,
    Complete,
    ContractRule,
    DriveResult,
    EngineContract,
    EngineScenarios,
    MemoryStateArea,
    Raise,
    Script,
    ScriptedEngine,
    Yield,
    check_capabilities,
    check_completed,
    check_control,
    check_failed,
    check_payloads,
    check_safe_points,
    check_walk_away,
    drive,
    make_invocation,
)
from agentdeck.testing.guard import kit_tests
from agentdeck.vocabulary import ControlVerb, ErrorCode, RunStatus, SafePoint

pytest_plugins = ["pytester"]

SECRET = "do-not-leak-7f3a"

COMPLETES = Script("completes", [Yield.text("hello"), Complete("done")])
FAILS = Script("fails", [Yield.text("working"), Raise(RuntimeError, SECRET)])
STREAMS = Script(
    "streams", [Yield.text("a"), Checkpoint(), Yield.text("b"), Checkpoint(), Complete("ab")]
)
ASKS = Script(
    "asks", [Yield.text("thinking"), Ask("approve", payload={"q": "go?"}), Complete("done")]
)


def _expected_output(name: str, output: list[ContentBlock]) -> bool:
    expected: dict[str, list[ContentBlock]] = {
        "completes": [TextBlock(text="done")],
        "streams": [TextBlock(text="ab")],
        "asks": [
            DataBlock(data={"interrupt_id": "approve", "answer": "yes"}),
            TextBlock(text="done"),
        ],
    }
    return output == expected[name]


class TestScriptedEngineContract(EngineContract):
    @pytest.fixture
    def engine_factory(self) -> Callable[[], Engine]:
        return ScriptedEngine

    @pytest.fixture
    def scenarios(self) -> EngineScenarios:
        return EngineScenarios(
            completes=COMPLETES,
            fails=FAILS,
            streams=STREAMS,
            asks=ASKS,
            answer_value="yes",
            failure_text=SECRET,
            check_output=_expected_output,
        )


async def _drive(script: Script, **kwargs: object) -> DriveResult:
    engine = ScriptedEngine()
    return await drive(engine, make_invocation(engine, script, "hi"), **kwargs)  # type: ignore[arg-type]


# =========================================================================== the driver


async def test_driver_records_run_started_itself_then_the_engine_payloads() -> None:
    engine = ScriptedEngine()
    invocation = make_invocation(engine, COMPLETES, "hi", run_id="r1", session_id="s1")
    result = await drive(engine, invocation)

    assert result.kinds == ["run.started", "text.delta", "run.completed"]
    assert [event.seq for event in result.events] == [0, 1, 2]
    started = result.events[0].payload
    assert isinstance(started, RunStarted)
    assert (started.name, started.invocable_kind) == ("completes", "workflow")
    assert started.input == [TextBlock(text="hi")]
    assert started.code_digest == COMPLETES.digest()
    assert all(e.run_id == "r1" and e.session_id == "s1" for e in result.events)
    assert all(e.origin == "completes" and e.ts.tzinfo is not None for e in result.events)
    assert result.invocation.entry is Entry.FRESH and result.invocation.history == ()
    assert result.status is RunStatus.COMPLETED and result.clean


async def test_directive_number_counts_safe_points_from_one() -> None:
    result = await _drive(STREAMS, directives={2: ControlVerb.CANCEL})
    check_control(result, ControlVerb.CANCEL)
    assert result.directive_at == 2
    assert result.kinds[1:3] == ["text.delta", "text.delta"]


async def test_answered_continuation_records_the_answer_then_resumed_before_playing() -> None:
    parked = await _drive(ASKS)
    engine = ScriptedEngine()
    answered = await drive(
        engine,
        make_invocation(engine, ASKS),
        history=parked.events,
        answers={"approve": "yes"},
        state=parked.state_area,
    )
    resumed = answered.new_events[:2]
    assert [e.kind for e in resumed] == ["answer.recorded", "run.resumed"]
    assert isinstance(resumed[0].payload, AnswerRecorded) and resumed[0].payload.value == "yes"
    assert isinstance(resumed[1].payload, RunResumed)
    assert resumed[1].payload.interrupt_id == "approve"
    assert answered.invocation.entry is Entry.ANSWERED
    assert answered.invocation.history == answered.events[: len(parked.events) + 2]
    assert answered.invocation.run_id == parked.events[0].run_id
    assert answered.invocation.input == [TextBlock(text="hi")]
    check_completed(answered)


async def test_continuation_after_pause_records_only_resumed() -> None:
    paused = await _drive(STREAMS, directives={1: ControlVerb.PAUSE})
    engine = ScriptedEngine()
    resumed = await drive(
        engine, make_invocation(engine, STREAMS), history=paused.events, state=paused.state_area
    )
    assert resumed.new_events[0].kind == "run.resumed"
    assert resumed.invocation.entry is Entry.AFTER_PAUSE
    assert check_completed(resumed) == [TextBlock(text="ab")]
    assert resumed.kinds.count("text.delta") == 2, "the pause neither lost nor repeated a step"


@pytest.mark.parametrize(
    ("script", "kwargs", "message"),
    [
        (COMPLETES, {"history": "completed"}, "only a suspended run continues"),
        (ASKS, {"history": "parked", "entry": Entry.AFTER_PAUSE}, "is entered answered"),
        (ASKS, {"history": "parked", "answers": {"other": 1}}, "not open"),
        (ASKS, {"history": "parked"}, "needs answers"),
        (COMPLETES, {"answers": {"x": 1}}, "nothing to answer"),
        (COMPLETES, {"directives": {0: ControlVerb.CANCEL}}, "from 1"),
        (COMPLETES, {"directives": {1: ControlVerb.RESUME}}, "only cancel and pause"),
    ],
)
async def test_driver_misuse_is_a_value_error(
    script: Script, kwargs: dict[str, object], message: str
) -> None:
    if kwargs.get("history") == "completed":
        kwargs["history"] = (await _drive(COMPLETES)).events
    elif kwargs.get("history") == "parked":
        kwargs["history"] = (await _drive(ASKS)).events
    with pytest.raises(ValueError, match=message):
        await _drive(script, **kwargs)


async def test_an_engine_that_raises_is_recorded_failed_with_its_type_only() -> None:
    result = await _drive(FAILS)
    failed = check_failed(result, failure_text=SECRET)
    assert failed.error_code == ErrorCode.ENGINE_ERROR
    assert failed.message == "engine 'scripted' raised RuntimeError"
    assert isinstance(result.raised, RuntimeError) and str(result.raised) == SECRET


async def test_a_play_that_raises_before_iterating_is_recorded_failed() -> None:
    class RaisesAtOnce(ScriptedEngine):
        def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
            raise LookupError(SECRET)

    engine = RaisesAtOnce()
    result = await drive(engine, make_invocation(engine, COMPLETES))
    assert (
        check_failed(result, failure_text=SECRET).message == "engine 'scripted' raised LookupError"
    )


async def test_memory_state_area_keeps_bytes_and_copies_independently() -> None:
    area = MemoryStateArea()
    await area.put("a", b"1")
    twin = area.copy()
    await twin.put("a", b"2")
    assert await area.get("a") == b"1" and await twin.get("a") == b"2"
    await area.delete("a")
    await area.delete("a")
    assert await area.get("a") is None and area.snapshot() == {}
    with pytest.raises(TypeError, match="must be bytes"):
        await area.put("a", "text")  # type: ignore[arg-type]


# =========================================================================== the scripted engine


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([], "must end with Complete or Raise"),
        ([Yield.text("a")], "must end with Complete or Raise"),
        ([Complete(), Complete()], "must be last"),
        ([Yield(RunCompleted()), Complete()], "which the runtime writes"),
        ([Yield(ControlRequested(verb="cancel")), Complete()], "which the runtime writes"),
        ([Ask("a"), Ask("a"), Complete()], "unique interrupt id"),
    ],
)
def test_a_malformed_script_is_refused_when_written(steps: list[object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Script("bad", steps)  # type: ignore[arg-type]


def test_scripted_engine_refuses_foreign_definitions_and_undeclared_safe_points() -> None:
    engine = ScriptedEngine()
    with pytest.raises(ConfigError, match="runs Script definitions, not str"):
        engine.compile("not a script")
    tool = Script("tool", [Checkpoint(SafePoint.TOOL_DISPATCH), Complete()])
    with pytest.raises(ConfigError, match="tool_dispatch"):
        engine.compile(tool)


async def test_every_answer_reaches_the_output_across_continuations() -> None:
    script = Script("two", [Ask("first"), Ask("second"), Complete("end", echo_input=True)])
    first = await _drive(script)
    engine = ScriptedEngine()
    second = await drive(
        engine,
        make_invocation(engine, script),
        history=first.events,
        answers={"first": 1},
        state=first.state_area,
    )
    assert second.open_interrupts == ["second"]
    third = await drive(
        engine,
        make_invocation(engine, script),
        history=second.events,
        answers={"second": {"ok": True}},
        state=second.state_area,
    )
    assert check_completed(third) == [
        DataBlock(data={"interrupt_id": "first", "answer": 1}),
        DataBlock(data={"interrupt_id": "second", "answer": {"ok": True}}),
        TextBlock(text="hi"),
        TextBlock(text="end"),
    ]
    assert third.state_area.snapshot() == {}  # type: ignore[attr-defined]


async def test_scripted_engine_cannot_continue_without_its_state_area() -> None:
    paused = await _drive(STREAMS, directives={1: ControlVerb.PAUSE})
    engine = ScriptedEngine()
    lost = await drive(engine, make_invocation(engine, STREAMS), history=paused.events)
    failed = check_failed(lost)
    assert failed.message == "engine 'scripted' raised ReplayError"


async def test_scripted_engine_refuses_to_continue_a_changed_script() -> None:
    paused = await _drive(STREAMS, directives={1: ControlVerb.PAUSE})
    changed = Script("streams", [*STREAMS.steps[:-1], Complete("changed")])
    engine = ScriptedEngine()
    result = await drive(
        engine, make_invocation(engine, changed), history=paused.events, state=paused.state_area
    )
    assert check_failed(result).message == "engine 'scripted' raised ReplayError"


# =========================================================================== broken engines


class FakeEngine(Engine):
    """An engine whose play each broken variant below gets wrong in one way."""

    name: ClassVar[str] = "fake"
    capabilities: ClassVar[EngineCapabilities] = EngineCapabilities(
        safe_points=frozenset({SafePoint.STREAM_ITEM})
    )

    def accepts(self, definition: object) -> bool:
        return definition == "fake"

    def compile(self, definition: object) -> Invocable:
        return Invocable(name="fake", kind="agent", engine=self.name, definition=definition)

    async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
        yield TextDelta(message_id="m", text="a")
        yield RunCompleted()


async def _drive_fake(engine: Engine, **kwargs: object) -> DriveResult:
    return await drive(engine, make_invocation(engine, "fake"), **kwargs)  # type: ignore[arg-type]


def _rules(result: DriveResult) -> list[ContractRule]:
    return [violation.rule for violation in result.violations]


async def test_a_well_behaved_fake_passes_the_checks() -> None:
    check_completed(await _drive_fake(FakeEngine()))


async def test_an_engine_yielding_a_reserved_kind_is_recorded_and_folded_like_content() -> None:
    assert {"input.appended"} == engine_kit.RESERVED_KINDS
    result = await _drive(engine_kit.reserved_kinds_script())

    appended = engine_kit.check_folded_like_content(result)
    assert [event.kind for event in appended] == ["input.appended"]
    assert result.kinds == [
        "run.started",
        "text.delta",
        "input.appended",
        "text.delta",
        "run.completed",
    ]
    assert check_completed(result) == [TextBlock(text="done")]


async def test_the_fold_check_fails_when_no_such_event_was_recorded() -> None:
    with pytest.raises(AssertionError, match="no event of"):
        engine_kit.check_folded_like_content(await _drive(COMPLETES))


async def test_yielding_run_started_breaks_the_contract() -> None:
    class YieldsStarted(FakeEngine):
        async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
            yield RunStarted(name="fake", invocable_kind="agent")
            yield RunCompleted()

    result = await _drive_fake(YieldsStarted())
    assert _rules(result) == [ContractRule.RUNTIME_LIFECYCLE]
    assert result.kinds == ["run.started", "run.failed"], "the engine's run.started is refused"
    with pytest.raises(AssertionError, match="runtime_lifecycle"):
        check_completed(result)


async def test_yielding_after_the_terminal_payload_breaks_the_contract() -> None:
    class YieldsAfterTerminal(FakeEngine):
        async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
            yield RunCompleted()
            yield TextDelta(message_id="m", text="late")

    result = await _drive_fake(YieldsAfterTerminal())
    assert _rules(result) == [ContractRule.AFTER_FINAL]
    assert result.kinds == ["run.started", "run.completed"], "nothing is recorded after it"
    with pytest.raises(AssertionError, match="after_final"):
        check_completed(result)


async def test_never_yielding_a_terminal_payload_breaks_the_contract() -> None:
    class NeverFinishes(FakeEngine):
        async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
            yield TextDelta(message_id="m", text="a")

    result = await _drive_fake(NeverFinishes())
    assert _rules(result) == [ContractRule.NO_FINAL]
    failed = result.last.payload
    assert isinstance(failed, RunFailed) and failed.error_code == ErrorCode.ENGINE_ERROR
    with pytest.raises(AssertionError, match="no_final"):
        check_completed(result)


async def test_ignoring_a_cancel_directive_breaks_the_contract() -> None:
    class IgnoresCancel(FakeEngine):
        async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
            yield TextDelta(message_id="m", text="a")
            await invocation.safepoint(SafePoint.STREAM_ITEM)
            yield TextDelta(message_id="m", text="b")
            yield RunCompleted()

    result = await _drive_fake(IgnoresCancel(), directives={1: ControlVerb.CANCEL})
    assert _rules(result) == [ContractRule.IGNORED_DIRECTIVE]
    assert result.status is RunStatus.FAILED
    with pytest.raises(AssertionError, match="ignored_directive"):
        check_control(result, ControlVerb.CANCEL)


async def test_acting_on_only_part_of_a_directive_breaks_the_contract() -> None:
    class HalfCancels(FakeEngine):
        async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
            directive = await invocation.safepoint(SafePoint.STREAM_ITEM)
            assert directive is not None
            yield directive.payloads[0]
            yield directive.payloads[2]

    result = await _drive_fake(HalfCancels(), directives={1: ControlVerb.CANCEL})
    assert _rules(result) == [ContractRule.IGNORED_DIRECTIVE]
    with pytest.raises(AssertionError):
        check_control(result, ControlVerb.CANCEL)


async def test_reaching_another_safe_point_after_a_directive_breaks_the_contract() -> None:
    class ChecksAgain(FakeEngine):
        async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
            directive = await invocation.safepoint(SafePoint.STREAM_ITEM)
            assert directive is not None
            await invocation.safepoint(SafePoint.STREAM_ITEM)
            for payload in directive.payloads:
                yield payload

    result = await _drive_fake(ChecksAgain(), directives={1: ControlVerb.PAUSE})
    assert _rules(result) == [ContractRule.CHECKPOINT_AFTER_DIRECTIVE]
    with pytest.raises(AssertionError, match="checkpoint_after_directive"):
        check_control(result, ControlVerb.PAUSE)


async def test_an_undeclared_safe_point_breaks_the_contract() -> None:
    class Undeclared(FakeEngine):
        async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
            await invocation.safepoint(SafePoint.TOOL_DISPATCH)
            yield RunCompleted()

    engine = Undeclared()
    result = await _drive_fake(engine)
    assert _rules(result) == [ContractRule.UNDECLARED_SAFE_POINT]
    with pytest.raises(AssertionError, match="undeclared safe points"):
        check_safe_points(result, engine.capabilities)


async def test_yielding_what_is_not_a_payload_breaks_the_contract() -> None:
    class YieldsDict(FakeEngine):
        async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
            yield {"kind": "text.delta", "text": "a"}  # type: ignore[misc]
            yield RunCompleted()

    result = await _drive_fake(YieldsDict())
    assert _rules(result) == [ContractRule.NOT_A_PAYLOAD]
    with pytest.raises(AssertionError, match="invalid payloads"):
        check_payloads(result)


async def test_yielding_run_failed_with_the_exception_text_is_caught() -> None:
    class LeaksText(FakeEngine):
        async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
            try:
                raise ValueError(SECRET)
            except ValueError as exc:
                yield RunFailed(error_code="tool_error", message=f"tool broke: {exc}")

    result = await _drive_fake(LeaksText())
    assert result.clean
    with pytest.raises(AssertionError, match="carries the exception text"):
        check_failed(result, failure_text=SECRET)


async def test_running_on_after_the_final_payload_breaks_the_contract(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Lingers(FakeEngine):
        async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
            yield RunCompleted()
            await invocation.clock.sleep(3600)

    monkeypatch.setattr(driver, "_DRAIN_TIMEOUT", 0.01)
    result = await _drive_fake(Lingers())
    assert _rules(result) == [ContractRule.AFTER_FINAL]
    assert "kept running" in result.violations[0].detail


async def test_an_engine_that_will_not_close_fails_the_walk_away_check() -> None:
    class WontClose(FakeEngine):
        async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
            try:
                yield TextDelta(message_id="m", text="a")
                yield RunCompleted()
            finally:
                yield TextDelta(message_id="m", text="cleanup")

    engine = WontClose()
    with pytest.raises(AssertionError, match="closing engine 'fake'"):
        await check_walk_away(engine, make_invocation(engine, "fake"))


def test_declaring_the_suspended_safe_point_fails_the_capability_check() -> None:
    class ClaimsSuspended(FakeEngine):
        capabilities: ClassVar[EngineCapabilities] = EngineCapabilities(
            safe_points=frozenset({SafePoint.SUSPENDED})
        )

    with pytest.raises(AssertionError, match="not an engine's safe point"):
        check_capabilities(ClaimsSuspended())


def test_a_payload_is_judged_against_the_directive_it_owes_before_the_run_status() -> None:
    owed = RunCompleted()
    assert yield_violation(TextDelta(message_id="m", text="a"), status=RunStatus.RUNNING) is None
    late = yield_violation(
        TextDelta(message_id="m", text="a"), status=RunStatus.RUNNING, due=owed, directive_at=2
    )
    assert late is not None and late.rule is ContractRule.IGNORED_DIRECTIVE
    assert "#2" in late.detail and "run.completed was due" in late.detail
    after_end = yield_violation(owed, status=RunStatus.COMPLETED)
    assert after_end is not None and after_end.rule is ContractRule.ILLEGAL_TRANSITION


# =========================================================================== the import path

# What engine authors, the examples and the docs import from agentdeck.testing.engine_kit.
_KIT_NAMES = {
    "Ask", "Checkpoint", "Complete", "ContractRule", "DriveResult", "EngineContract",
    "EngineScenarios", "MemoryStateArea", "Raise", "Script", "ScriptedEngine", "Step",
    "Violation", "Yield", "check_capabilities", "check_compiles", "check_completed",
    "check_control", "check_failed", "check_interrupted", "check_log", "check_payloads",
    "check_safe_points", "check_walk_away", "drive", "make_invocation",
    "RESERVED_KINDS", "check_folded_like_content", "reserved_kinds_script",
}  # fmt: skip


def test_engine_kit_keeps_exporting_the_kit_from_its_modules() -> None:
    assert set(engine_kit.__all__) == _KIT_NAMES
    # Step is a union of classes and RESERVED_KINDS a set: neither has a module of its own.
    for name in _KIT_NAMES - {"Step", "RESERVED_KINDS"}:
        home = getattr(engine_kit, name).__module__
        assert home.startswith("agentdeck.testing.engine."), f"{name} lives in {home}"


# =========================================================================== the contract as a kit
# These run pytest on a generated test module, the way a plugin author's suite runs the kit.

_FAKE_MODULE = """
from collections.abc import AsyncIterator
from typing import ClassVar

import pytest

from agentdeck.model.payloads import RunCompleted, TextDelta
from agentdeck.ports import Engine, EngineCapabilities, Invocable
from agentdeck.testing.engine_kit import EngineContract, EngineScenarios
from agentdeck.vocabulary import SafePoint


class Minimal(Engine):
    name = "minimal"
    capabilities: ClassVar[EngineCapabilities] = EngineCapabilities()

    def accepts(self, definition):
        return definition in ("ok", "boom")

    def compile(self, definition):
        return Invocable(name=definition, kind="agent", engine=self.name, definition=definition)

    async def play(self, invocation):
        if invocation.invocable.definition == "boom":
            raise RuntimeError("secret")
        yield TextDelta(message_id="m", text="a")
        yield RunCompleted()


class Base(EngineContract):
    @pytest.fixture
    def engine_factory(self):
        return Minimal

    @pytest.fixture
    def scenarios(self):
        return EngineScenarios(completes="ok", fails="boom", failure_text="secret")
"""


def _run_kit(pytester: pytest.Pytester, body: str) -> pytest.RunResult:
    pytester.makepyfile(test_kit=_FAKE_MODULE + textwrap.dedent(body))
    return pytester.runpytest_inprocess(
        "-rs", "-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function"
    )


def test_an_engine_declaring_nothing_skips_capability_tests_with_reasons(
    pytester: pytest.Pytester,
) -> None:
    result = _run_kit(pytester, "class TestMinimal(Base):\n    pass\n")
    result.assert_outcomes(passed=9, skipped=9)
    report = result.stdout.str()
    for reason in (
        "engine declares no safe points",
        "engine declares no interrupts",
        "engine declares no durable_suspend",
        "EngineScenarios.streams not provided",
        "the engine offers no client face",
    ):
        assert reason in report


def test_a_declared_capability_without_its_scenario_fails_rather_than_skips(
    pytester: pytest.Pytester,
) -> None:
    body = """
    class Streaming(Minimal):
        capabilities = EngineCapabilities(safe_points=frozenset({SafePoint.STREAM_ITEM}))

    class TestStreaming(Base):
        @pytest.fixture
        def engine_factory(self):
            return Streaming
    """
    result = _run_kit(pytester, body)
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed") == 4, result.stdout.str()
    result.stdout.fnmatch_lines(["*EngineScenarios.streams is required*"])


def test_a_broken_engine_fails_its_contract_tests(pytester: pytest.Pytester) -> None:
    body = """
    class Late(Minimal):
        async def play(self, invocation):
            yield RunCompleted()
            yield TextDelta(message_id="m", text="late")

    class TestLate(Base):
        @pytest.fixture
        def engine_factory(self):
            return Late
    """
    result = _run_kit(pytester, body)
    assert result.parseoutcomes().get("failed", 0) >= 2, result.stdout.str()
    result.stdout.fnmatch_lines(["*after_final: yielded text.delta after its run.completed*"])


def test_replacing_a_contract_test_without_a_reason_is_refused(
    pytester: pytest.Pytester,
) -> None:
    body = """
    class TestTrimmed(Base):
        def test_completes_with_one_final_payload_last(self):
            pass
    """
    result = _run_kit(pytester, body)
    assert result.ret != 0
    result.stdout.fnmatch_lines(
        ["*TestTrimmed does not run its contract kit whole*", "*replaces kit test*"]
    )


def test_replacing_a_contract_test_with_a_stated_reason_is_allowed(
    pytester: pytest.Pytester,
) -> None:
    body = """
    class TestOverridden(Base):
        overridden = {"test_refuses_what_it_cannot_run": "checked elsewhere"}

        def test_refuses_what_it_cannot_run(self):
            pass
    """
    result = _run_kit(pytester, body)
    result.assert_outcomes(passed=9, skipped=9)


def test_the_guard_sees_every_contract_test() -> None:
    assert len(kit_tests(EngineContract)) == 18
