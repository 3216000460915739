"""Conversation sessions through the engine: the deck's session factory, keyed per namespace."""

from __future__ import annotations

from collections.abc import AsyncIterator

import engine_support as support  # loaded by conftest.py
import pytest

from agentdeck import Agent
from agentdeck.authoring.tools import tool
from agentdeck.model.content import TextBlock
from agentdeck.model.events import Event
from agentdeck.ports import BackendRequest, Entry
from agentdeck.settings import Settings
from agentdeck.testing.engine_kit import (
    MemoryStateArea,
    check_completed,
    check_interrupted,
    drive,
    make_invocation,
)
from agentdeck.testing.fixtures import RedisPrefix
from agentdeck_openai.sessions import LocalSessionFactory, RedisSessionFactory
from agentdeck_openai.testing import LoopbackModelServer, handoff, reply, tool_call

GREETER = Agent(
    name="Greeter",
    instructions="You are a friendly scheduling assistant. Keep replies to one short sentence.",
)


@pytest.fixture
async def local() -> AsyncIterator[LocalSessionFactory]:
    factory = LocalSessionFactory()
    yield factory
    await factory.close()


def redis_factory(redis_prefix: RedisPrefix) -> RedisSessionFactory:
    env = {"AGENTDECK_SESSION_REDIS_KEY_PREFIX": f"{redis_prefix.prefix}sessions"}
    return RedisSessionFactory.from_request(
        BackendRequest(url=redis_prefix.url, settings=Settings(env=env))
    )


async def test_the_spec_session_example_holds_through_the_engine(
    model_server: LoopbackModelServer, local: LocalSessionFactory
) -> None:
    model_server.script.add(reply("Nice to meet you, Sagi!"), reply("Your name is Sagi."))
    async with support.opened(support.make_engine(model_server, session_factory=local)) as engine:
        first = await drive(
            engine, make_invocation(engine, GREETER, "my name is Sagi", session_id="wa-1")
        )
        after_one = len(await local.session_for("wa-1").get_items())
        second = await drive(
            engine, make_invocation(engine, GREETER, "what is my name?", session_id="wa-1")
        )
        items = [dict(item) for item in await local.session_for("wa-1").get_items()]

    check_completed(first)
    assert check_completed(second) == [TextBlock(text="Your name is Sagi.")]
    assert (after_one, len(items)) == (2, 4)
    assert (items[0]["role"], items[0]["content"]) == ("user", "my name is Sagi")
    assert model_server.model_requests[1].user_texts == ["my name is Sagi", "what is my name?"]


async def test_one_session_id_in_two_namespaces_is_two_conversations(
    model_server: LoopbackModelServer, local: LocalSessionFactory
) -> None:
    model_server.script.add(reply("hi acme"), reply("hi globex"))
    async with support.opened(support.make_engine(model_server, session_factory=local)) as engine:
        for namespace in ("acme", "globex"):
            invocation = make_invocation(
                engine, GREETER, f"I am {namespace}", session_id="wa-1", namespace=namespace
            )
            check_completed(await drive(engine, invocation))

    assert model_server.model_requests[1].user_texts == ["I am globex"]
    assert len(await local.session_for("acme:wa-1").get_items()) == 2
    assert await local.session_for("wa-1").get_items() == []


async def test_a_handoff_keeps_the_conversation_in_the_same_session(
    model_server: LoopbackModelServer, local: LocalSessionFactory
) -> None:
    billing = Agent(name="Billing", instructions="Invoices.")
    triage = Agent(name="Triage", instructions="Route.", handoffs=[billing])
    model_server.script.add(handoff("Billing"), reply("Paid."), reply("Still paid."))
    async with support.opened(support.make_engine(model_server, session_factory=local)) as engine:
        await drive(engine, make_invocation(engine, triage, "invoice?", session_id="s"))
        await drive(engine, make_invocation(engine, triage, "sure?", session_id="s"))

    last = model_server.model_requests[-1]
    assert last.user_texts == ["invoice?", "sure?"]
    assert "Paid." in str(last.items)


async def test_without_a_session_factory_the_engine_keeps_its_own_per_session(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(reply("one"), reply("two"))
    async with support.opened(support.make_engine(model_server)) as engine:
        for text in ("first", "second"):
            await drive(engine, make_invocation(engine, GREETER, text, session_id="own"))

    assert model_server.model_requests[1].user_texts == ["first", "second"]


@tool
def book(slot: str) -> str:
    """Book a slot."""
    return f"booked {slot}"


async def test_an_approval_survives_a_restart_with_a_redis_session(
    model_server: LoopbackModelServer, redis_prefix: RedisPrefix
) -> None:
    agent = Agent(name="Booker", instructions="Book.", tools=[book], interrupt_on=["book"])
    model_server.script.add(tool_call("book", {"slot": "9:00"}, call_id="b1"), reply("Booked."))

    before = redis_factory(redis_prefix)
    try:
        async with support.opened(
            support.make_engine(model_server, session_factory=before)
        ) as engine:
            parked = await drive(engine, make_invocation(engine, agent, "book 9", session_id="c1"))
    finally:
        await before.close()
    interrupt_id = check_interrupted(parked)

    after = redis_factory(redis_prefix)
    try:
        history = [Event.from_json(event.to_json()) for event in parked.events]
        area = parked.state_area
        assert isinstance(area, MemoryStateArea)
        async with support.opened(
            support.make_engine(model_server, session_factory=after)
        ) as fresh:
            done = await drive(
                fresh,
                make_invocation(fresh, agent, session_id="c1"),
                history=history,
                entry=Entry.ANSWERED,
                answers={interrupt_id: {"approved": True}},
                state=area.copy(),
            )
        items = [dict(item) for item in await after.session_for("c1").get_items()]
    finally:
        await after.close()

    assert check_completed(done) == [TextBlock(text="Booked.")]
    assert [item.get("role") or item.get("type") for item in items] == [
        "user",
        "function_call",
        "function_call_output",
        "assistant",
    ]
