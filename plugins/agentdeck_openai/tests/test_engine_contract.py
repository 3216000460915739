"""The openai engine passes the core's engine contract kit, over the real HTTP path.

Every scenario is an ``Agent`` whose model is the loopback server; turns are matched to the
scenario by the agent's instructions, and answer as often as asked (a paused run re-asks its cut
model call, a fresh engine instance continues a parked one).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace

import engine_support as support  # loaded by conftest.py
import pytest

from agentdeck import Agent
from agentdeck.authoring.tools import tool
from agentdeck.model.content import ContentBlock, TextBlock
from agentdeck.model.payloads import Payload
from agentdeck.ports import ClientEngine, Engine, Invocation
from agentdeck.testing.engine_kit import EngineContract, EngineScenarios
from agentdeck_openai.client import OpenAIClientEngine
from agentdeck_openai.engine import OpenAIEngine
from agentdeck_openai.testing import LoopbackModelServer, ModelRequest, Script, reply, tool_call

SECRET = "the vault code is 4711"


@tool
def explode() -> str:
    """Always fails."""
    raise RuntimeError(SECRET)


@tool
def jot(text: str) -> str:
    """Write a note down."""
    return f"noted: {text}"


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def _for(instructions: str, *, answered: bool | None = None) -> Callable[[ModelRequest], bool]:
    def rule(request: ModelRequest) -> bool:
        if request.instructions != instructions:
            return False
        return answered is None or bool(request.tool_outputs) is answered

    rule.__name__ = f"{instructions}{'' if answered is None else f'_answered={answered}'}"
    return rule


COMPLETES = Agent(name="Completes", instructions="completes")
FAILS = Agent(name="Fails", instructions="fails", tools=[explode], tool_errors="fail")
"""A raising tool fails the run only when told to (by default the model is told and goes on)."""
STREAMS = Agent(name="Streams", instructions="streams")
STREAMS_QUIETLY = Agent(name="StreamsQuietly", instructions="streams quietly", tools=[jot])
"""A quiet play's safe points are a turn's tool dispatch and its final reply: two need a tool."""
ASKS = Agent(name="Asks", instructions="asks", tools=[delete_file], interrupt_on=["delete_file"])


@pytest.fixture
def contract_server() -> Iterator[LoopbackModelServer]:
    script = Script(
        [
            reply("done", when=_for("completes"), times=None),
            tool_call("explode", when=_for("fails"), times=None),
            reply("one two three four", when=_for("streams"), times=None),
            tool_call(
                "jot", {"text": "x"}, when=_for("streams quietly", answered=False), times=None
            ),
            reply("one two three four", when=_for("streams quietly", answered=True), times=None),
            tool_call(
                "delete_file", {"path": "notes.txt"}, when=_for("asks", answered=False), times=None
            ),
            reply("deleted it", when=_for("asks", answered=True), times=None),
        ]
    )
    with LoopbackModelServer(script) as server:
        yield server


def _check_output(name: str, output: list[ContentBlock]) -> bool:
    expected = {"completes": "done", "streams": "one two three four", "asks": "deleted it"}
    return output == [TextBlock(text=expected[name])]


def _scenarios(*, streams: Agent) -> EngineScenarios:
    return EngineScenarios(
        completes=COMPLETES,
        fails=FAILS,
        streams=streams,
        asks=ASKS,
        answer_value={"approved": True},
        failure_text=SECRET,
        input="hello",
        check_output=_check_output,
    )


class TestOpenAIEngineContract(EngineContract):
    @pytest.fixture
    def engine_factory(self, contract_server: LoopbackModelServer) -> Callable[[], Engine]:
        return lambda: support.make_engine(contract_server)

    @pytest.fixture
    def client_factory(self, engine_factory: Callable[[], Engine]) -> Callable[[], ClientEngine]:
        """The face a client deck loads, built for the same settings as the engine."""
        return lambda: OpenAIClientEngine(engine_factory().request)

    @pytest.fixture
    def scenarios(self) -> EngineScenarios:
        return _scenarios(streams=STREAMS)


class TestOpenAIEngineContractOverChatCompletions(TestOpenAIEngineContract):
    """The same contract when model calls go through Chat Completions."""

    @pytest.fixture
    def engine_factory(self, contract_server: LoopbackModelServer) -> Callable[[], Engine]:
        return lambda: support.make_engine(contract_server, chat=True)


class _QuietEngine(OpenAIEngine):
    """Plays every invocation as ``Deck.run`` does: asking for no deltas, so quietly."""

    async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
        async for payload in super().play(replace(invocation, deltas=False)):
            yield payload


class TestOpenAIEngineContractPlayedQuietly(TestOpenAIEngineContract):
    """The same contract for quiet plays (``Runner.run``, see ``agentdeck_openai.quiet``)."""

    @pytest.fixture
    def engine_factory(self, contract_server: LoopbackModelServer) -> Callable[[], Engine]:
        def quiet() -> Engine:
            engine = support.make_engine(contract_server)
            return _QuietEngine(engine.request)

        return quiet

    @pytest.fixture
    def scenarios(self) -> EngineScenarios:
        return _scenarios(streams=STREAMS_QUIETLY)
