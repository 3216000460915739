"""The ``openai`` engine's client face: what a deck that only admits runs for workers records.

A worker refuses a run whose ``code_digest`` is not the one its own engine compiles, so the face
(which never imports the Agents SDK) must give the same digest for every shape of agent: SDK
``ModelSettings``, structured output, handoffs, subagents, tools, skills. The contract kit's
``test_a_client_face_records_what_the_engine_would`` covers the simple scenarios; these cover
the declarations those do not.
"""

from __future__ import annotations

import pytest
from agents import ModelSettings
from pydantic import BaseModel

from agentdeck import Agent, tool
from agentdeck.errors import ConfigError
from agentdeck.model.content import ResourceBlock, TextBlock
from agentdeck.ports import EngineRequest
from agentdeck.settings import Settings
from agentdeck_openai.client import OpenAIClientEngine
from agentdeck_openai.engine import OpenAIEngine


class Ticket(BaseModel):
    title: str


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    return order_id


BILLING = Agent(name="billing", instructions="Bill.", model="m")
AGENTS = [
    Agent(name="plain", instructions="Be brief.", model="m"),
    Agent(name="tuned", model="m", model_settings=ModelSettings(temperature=0.2, max_tokens=50)),
    Agent(name="mapped", model="m", model_settings={"temperature": 0.7}),
    Agent(name="typed", model="m", output_type=Ticket),
    Agent(name="tools", model="m", tools=[lookup], interrupt_on=["lookup"], planning=True),
    Agent(name="triage", model="m", handoffs=[BILLING], subagents=[BILLING]),
]


def pair(**env: str) -> tuple[OpenAIClientEngine, OpenAIEngine]:
    request = EngineRequest(settings=Settings(env=env))
    return OpenAIClientEngine(request), OpenAIEngine(request)


@pytest.mark.parametrize("agent", AGENTS, ids=[agent.name for agent in AGENTS])
def test_the_face_records_the_digest_the_engine_compiles(agent: Agent) -> None:
    face, engine = pair()
    described, compiled = face.compile(agent), engine.compile(agent)
    assert described.code_digest == compiled.code_digest
    identity = ("name", "kind", "engine", "description")
    assert [getattr(described, a) for a in identity] == [getattr(compiled, a) for a in identity]
    assert described.compiled is None  # nothing of the SDK was built


def test_a_changed_declaration_changes_the_digest_on_both_sides() -> None:
    face, engine = pair()
    before = Agent(name="a", instructions="one", model="m")
    after = Agent(name="a", instructions="two", model="m")
    assert face.compile(before).code_digest != face.compile(after).code_digest
    assert engine.compile(after).code_digest == face.compile(after).code_digest


def test_the_face_refuses_the_inputs_the_engine_refuses_before_a_run_is_opened() -> None:
    face, engine = pair()
    invocable = face.compile(AGENTS[0])
    blocks = [TextBlock(text="read this"), ResourceBlock(uri="s3://bucket/report.pdf")]
    for side in (face, engine):
        with pytest.raises(ConfigError, match=r"input\[1\] is a ResourceBlock"):
            side.prepare_input(invocable, blocks)
    assert face.prepare_input(invocable, "hi") == [TextBlock(text="hi")]


def test_the_face_and_the_engine_declare_the_same_capabilities() -> None:
    face, engine = pair()
    assert face.capabilities == engine.capabilities
