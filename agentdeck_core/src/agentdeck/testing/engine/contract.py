"""The engine contract as a base test class: :class:`EngineContract`, and what it plays.

Engine plugin authors subclass :class:`EngineContract`, supply the engine through the
``engine_factory`` (or ``engine``) fixture and definitions of their own kind through
``scenarios`` (:class:`EngineScenarios`), and every check in :mod:`.checks` runs against their
engine, played by :func:`~.driver.drive`. Tests the engine's declared capabilities do not cover
are skipped with the reason; a capability declared without the scenario that exercises it
fails, so nothing is skipped silently. The guard (:mod:`agentdeck.testing.guard`) keeps the kit
whole in every subclass.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

import pytest
import pytest_asyncio

from agentdeck.model.content import ContentBlock
from agentdeck.model.events import Event
from agentdeck.ports import ClientEngine, Engine, Entry, Invocation, Suspension
from agentdeck.testing.engine.checks import (
    check_capabilities,
    check_client_face,
    check_compiles,
    check_completed,
    check_control,
    check_failed,
    check_interrupted,
    check_payloads,
    check_safe_points,
    check_walk_away,
)
from agentdeck.testing.engine.driver import DriveResult, drive, make_invocation
from agentdeck.testing.engine.state_area import MemoryStateArea
from agentdeck.testing.guard import ContractKit, check_contract
from agentdeck.vocabulary import LIFECYCLE_KINDS, ControlVerb

__all__ = ["EngineContract", "EngineScenarios"]


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
    given: Any = None
    """A caller's input as ``deck.run`` takes it, before the engine turns it into blocks (the
    client-face check compares the two turning it); ``None``: ``input`` when it is a string."""
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
    def client_factory(self) -> Callable[[], ClientEngine] | None:
        """A callable making the engine's client face (what its ``EngineRef(client=...)``
        names), or ``None`` for an engine that offers none."""
        return None

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

    def test_a_client_face_records_what_the_engine_would(
        self,
        engine: Engine,
        engine_factory: Callable[[], Engine],
        client_factory: Callable[[], ClientEngine] | None,
        scenarios: EngineScenarios,
    ) -> None:
        if client_factory is None:
            pytest.skip("the engine offers no client face (EngineRef(client=...))")
        face = client_factory()
        face.plays_on(engine_factory)  # as the host wires it
        given = scenarios.given
        if given is None and isinstance(scenarios.input, str):
            given = scenarios.input
        check_client_face(face, engine, list(scenarios.definitions().values()), given)

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

    # -- suspensions kept in memory (optional: engines that keep none pass these as they are) -----

    async def test_a_kept_suspension_continues_the_run_here(
        self, engine: Engine, scenarios: EngineScenarios
    ) -> None:
        """An engine that keeps a parked run in memory (``Invocation.keep_suspended``) continues
        it from what it kept (``Invocation.suspended``) to the same ending as from the log."""
        asks = self.require_interrupts(engine, scenarios)
        kept: list[Suspension] = []
        invocation = replace(self.invocation(engine, asks, scenarios), keep_suspended=kept.append)
        parked = await drive(engine, invocation)
        interrupt_id = check_interrupted(parked)
        answered = await drive(
            engine,
            replace(invocation, suspended=kept[-1] if kept else None, keep_suspended=None),
            history=parked.events,
            entry=Entry.ANSWERED,
            answers={interrupt_id: scenarios.answer_value},
            state=parked.state_area,
        )
        scenarios.verify_output("asks", check_completed(answered))

    async def test_a_kept_suspension_is_not_used_once_another_play_moved_the_run(
        self,
        engine: Engine,
        engine_factory: Callable[[], Engine],
        scenarios: EngineScenarios,
    ) -> None:
        """A suspension handed back with a log that another play (another process) moved since
        it was kept is dropped: the run continues from the log, exactly as a fresh engine
        continues it, and nothing the kept state did before is done again."""
        streams = self.require_safe_points(engine, scenarios)
        kept: list[Suspension] = []
        invocation = replace(
            self.invocation(engine, streams, scenarios), keep_suspended=kept.append
        )
        paused = await drive(engine, invocation, directives={1: ControlVerb.PAUSE})
        check_control(paused, ControlVerb.PAUSE)
        if not kept:
            return  # this engine keeps nothing in memory: the log is all it continues from
        # Another process continues the run and pauses it again, further on.
        history = [Event.from_json(event.to_json()) for event in paused.events]
        async with _opened(engine_factory()) as other:
            moved = await drive(
                other,
                self.invocation(other, streams, scenarios),
                history=history,
                entry=Entry.AFTER_PAUSE,
                directives={2: ControlVerb.PAUSE},
            )
        check_control(moved, ControlVerb.PAUSE)
        here = await drive(
            engine,
            replace(invocation, suspended=kept[-1], keep_suspended=None),
            history=moved.events,
            entry=Entry.AFTER_PAUSE,
        )
        reference = await self._continue_elsewhere(
            engine_factory, streams, scenarios, moved, Entry.AFTER_PAUSE, {}
        )
        scenarios.verify_output("streams", check_completed(here))
        appended = [event.kind for event in here.events[len(moved.events) :]]
        expected = [event.kind for event in reference.events[len(moved.events) :]]
        assert appended == expected, (
            f"continued with a suspension kept before another play moved the run, the engine "
            f"recorded {appended}; continued from the log alone it records {expected}"
        )

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
