"""Nothing of a finished agent run stays alive in the process: no engine, SDK or session object.

A deck plays many runs over its life; whatever one run leaves behind is a leak that grows with
traffic. After each run ends, its per-run objects (the play, its run scope and translator, the
SDK's streamed result, run context and tool context, the application's context object) must be
collectable; the deck keeps only what the event store holds.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from dataclasses import dataclass, field

from agents.result import RunResultBase
from agents.run_context import RunContextWrapper
from agents.run_state import RunState

from agentdeck import Agent, Deck, InterruptResult, ToolCtx, TurnResult, tool
from agentdeck.settings import Settings
from agentdeck_openai.play import Play
from agentdeck_openai.scope import RunScope
from agentdeck_openai.testing import ModelRequest, Script, reply, tool_call
from agentdeck_openai.testing.model import (
    ScriptedModel,
    ScriptedModelProvider,
    plugins_with_model,
)
from agentdeck_openai.translate import Translator

ENV = {"OPENAI_MODEL": "scripted", "OPENAI_API_KEY": "sk-unused"}
PER_RUN_TYPES: tuple[type, ...] = (
    Play,
    RunScope,
    Translator,
    RunResultBase,
    RunContextWrapper,
    RunState,
)


@dataclass
class Caller:
    """The application's per-run context object (weakly referenceable, unlike a ToolCtx)."""

    name: str
    seen: list[str] = field(default_factory=list)


def _lookup(ctx: ToolCtx[Caller], city: str) -> str:
    """Look the weather up."""
    ctx.data.seen.append(city)
    return f"sunny in {city}"


def _asked(request: ModelRequest) -> bool:
    return "lookup" in request.tool_names and not request.tool_outputs


def _answered(request: ModelRequest) -> bool:
    return bool(request.tool_outputs)


def _alive(types: tuple[type, ...]) -> list[str]:
    """The type names of the live objects of ``types`` (names only: holding the objects in a
    list would keep them alive)."""
    gc.collect()
    return [type(obj).__name__ for obj in gc.get_objects() if isinstance(obj, types)]


async def _left_once_played(
    types: tuple[type, ...], refs: list[weakref.ref[Caller]]
) -> tuple[list[str], list[str]]:
    """What is still alive once the play tasks have wound down (per-run objects by type name,
    and the application's contexts by name): a run's result is returned as soon as its last
    event is recorded, while its task may still be closing its generators."""
    for _ in range(50):
        alive, contexts = _alive(types), _names(refs)
        if not alive and not contexts:
            break
        await asyncio.sleep(0)
    return alive, contexts


def _names(refs: list[weakref.ref[Caller]]) -> list[str]:
    names = []
    for ref in refs:
        caller = ref()
        if caller is not None:
            names.append(caller.name)
    return names


async def test_no_per_run_object_outlives_its_run() -> None:
    model = ScriptedModel(
        Script(
            [
                tool_call("lookup", {"city": "Paris"}, when=_asked, times=None),
                reply("It is sunny in Paris.", deltas=4, when=_answered, times=None),
                reply("Hello there.", deltas=3, when=lambda r: not r.tool_names, times=None),
            ]
        )
    )
    weather = Agent(name="Weather", instructions="Answer.", tools=[tool(name="lookup")(_lookup)])
    greeter = Agent(name="Greeter", instructions="Greet.")
    approver = Agent(
        name="Approver", instructions="Answer.", tools=[_lookup], interrupt_on=["_lookup"]
    )
    deck = Deck(
        [weather, greeter, approver],
        context=Caller,
        settings=Settings(env=ENV),
        plugins=plugins_with_model(ScriptedModelProvider(model)),
        observers=(),
    )
    contexts: list[weakref.ref[Caller]] = []
    async with deck:
        assert _alive(PER_RUN_TYPES) == []  # an open deck holds no run's objects yet
        for i in range(5):
            caller = Caller(name=f"caller-{i}")
            contexts.append(weakref.ref(caller))
            result = await deck.run("Weather", "weather?", context=caller)
            assert isinstance(result, TurnResult) and result.output == "It is sunny in Paris."
            assert caller.seen == ["Paris"]  # the tool did get this run's context
            del caller, result
            events = [event async for event in deck.stream("Greeter", "hi")]
            assert events[-1].kind == "run.completed"
            del events

        # A run parked on an approval holds its state until answered, then lets go of it too.
        caller = Caller(name="approver")
        contexts.append(weakref.ref(caller))
        model.script.add(tool_call("_lookup", {"city": "Oslo"}, when=lambda r: not r.tool_outputs))
        parked = await deck.run("Approver", "weather?", context=caller)
        assert isinstance(parked, InterruptResult)
        run = await deck.runs.get(parked.run_id)
        await run.answer({"approved": True})
        assert (await run).output == "It is sunny in Paris."
        del caller, parked, run

        alive, callers = await _left_once_played(PER_RUN_TYPES, contexts)
        assert alive == []
        assert callers == []
