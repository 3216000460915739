"""``Agent.run()``: the headless runner, on the SDK's own ``Runner.run`` against the loopback
server. It returns the SDK's ``RunResult``, runs tools, refuses a context it does not carry, and
records nothing anywhere."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import certifi
import pytest
from agents import RunResult, SQLiteSession, add_trace_processor, set_trace_processors
from agents.exceptions import MaxTurnsExceeded
from agents.tracing import Span, Trace, TracingProcessor
from pydantic import BaseModel

import agentdeck
from agentdeck import (
    Agent,
    ConfigError,
    ContextTypeError,
    DataBlock,
    Deck,
    Event,
    ResourceBlock,
    Settings,
    TextBlock,
    ToolCtx,
    tool,
)
from agentdeck.memory import plugin as memory_plugin
from agentdeck.memory.store import MemoryEventStore
from agentdeck.plugins.hookspecs import RegisterNamed, RegisterScheme
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import BackendRequest, EventStore, Observer
from agentdeck_openai import plugin as openai_plugin
from agentdeck_openai.testing import LoopbackModelServer, handoff, reply, structured, tool_call

added: list[tuple[int, int]] = []


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    added.append((a, b))
    return a + b


looked_up: list[str] = []


@tool
def whoami(ctx: ToolCtx[dict[str, str]]) -> str:
    """The signed-in user."""
    looked_up.append(ctx.data["user"])
    return ctx.data["user"]


@pytest.fixture(autouse=True)
def _fresh_calls() -> None:
    added.clear()
    looked_up.clear()


def settings_for(model_server: LoopbackModelServer, **extra: str) -> Settings:
    return Settings(env={**model_server.env(), **extra})


# --------------------------------------------------------------------------- what comes back


async def test_a_headless_run_returns_the_sdk_run_result_with_its_final_output(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(reply("We open at nine."))
    helper = Agent(name="helper", instructions="You answer questions about our shop.")

    result = await helper.run("When do you open?", settings=settings_for(model_server))

    assert type(result) is RunResult
    assert result.final_output == "We open at nine."
    assert result.last_agent.name == "helper"
    sent = model_server.model_requests[-1]
    assert sent.instructions == "You answer questions about our shop."
    assert sent.last_user_text == "When do you open?"


async def test_a_tool_call_runs_the_tool_and_the_model_receives_its_result(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(tool_call("add", {"a": 2, "b": 3}, call_id="c1"), reply("It is 5."))
    calculator = Agent(name="calculator", tools=[add])

    result = await calculator.run("What is 2 + 3?", settings=settings_for(model_server))

    assert added == [(2, 3)]
    assert result.final_output == "It is 5."
    assert model_server.model_requests[-1].tool_outputs == {"c1": "5"}


async def test_structured_output_comes_back_as_the_sdk_gives_it(
    model_server: LoopbackModelServer,
) -> None:
    class Ticket(BaseModel):
        category: str
        urgent: bool

    model_server.script.add(structured(Ticket(category="billing", urgent=True)))
    triage = Agent(name="triage", output_type=Ticket)

    result = await triage.run("I was charged twice!!", settings=settings_for(model_server))

    assert result.final_output == Ticket(category="billing", urgent=True)


# --------------------------------------------------------------------------- no context


async def test_a_tool_declaring_a_context_fails_the_call_and_the_model_is_told_why(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(tool_call("whoami", {}, call_id="w1"), reply("I cannot tell."))
    greeter = Agent(name="greeter", tools=[whoami])

    result = await greeter.run("Who am I?", settings=settings_for(model_server))

    assert result.final_output == "I cannot tell."
    message = model_server.model_requests[-1].tool_outputs["w1"]
    assert "tool 'whoami' requires ToolCtx[dict[str, str]]" in message
    assert "the run carries NoneType rather than an AgentDeck run context" in message
    assert "Deck.run()" in message
    assert looked_up == []  # the body was never called


async def test_an_instructions_callable_declaring_a_context_refuses_too(
    model_server: LoopbackModelServer,
) -> None:
    def personal(ctx: ToolCtx[dict[str, str]]) -> str:
        return f"The customer is {ctx.data['user']}."

    concierge = Agent(name="concierge", instructions=personal)

    with pytest.raises(ContextTypeError, match="rather than an AgentDeck run context"):
        await concierge.run("hi", settings=settings_for(model_server))
    assert model_server.model_requests == []


# --------------------------------------------------------------------------- nothing recorded


class Recorder:
    """A plugin whose event store and settings-configured observer keep what they are given, so a
    test can tell whether anything was recorded at all."""

    def __init__(self) -> None:
        self.stores: list[EventStore] = []
        self.observed: list[Event] = []
        recorder = self

        class Tap(Observer):
            async def emit(self, event: Event) -> None:
                recorder.observed.append(event)

            @classmethod
            def from_settings(cls, _settings: Settings) -> Observer:
                return cls()

        self._tap = Tap

    def _store(self, request: BackendRequest) -> EventStore:
        store = MemoryEventStore(clock=request.clock, url=request.url)
        self.stores.append(store)
        return store

    @agentdeck.hookimpl
    def agentdeck_register_event_stores(self, register: RegisterScheme) -> None:
        register("recorded", self._store)

    @agentdeck.hookimpl
    def agentdeck_register_observers(self, register: RegisterNamed) -> None:
        register("tap", self._tap)


async def test_a_headless_run_records_nothing_a_deck_run_would_record(
    model_server: LoopbackModelServer,
) -> None:
    recorder = Recorder()
    host = PluginHost.from_plugins(
        ("memory", memory_plugin), ("openai", openai_plugin), ("recorder", recorder)
    )
    env = {"AGENTDECK_STATE": "memory://", "AGENTDECK_EVENTS": "recorded://log"}
    helper = Agent(name="helper", instructions="Be brief.")
    model_server.script.add(reply("Headless."), reply("On the deck."))

    result = await helper.run("hi", settings=settings_for(model_server, **env), plugins=host)

    assert result.final_output == "Headless."
    assert recorder.stores == []
    assert recorder.observed == []

    # The same host and settings on a deck do record, so the emptiness above means something.
    async with Deck(agents=[helper], settings=settings_for(model_server, **env), plugins=host) as d:
        turn = await d.run("helper", "hi")
    assert turn.output == "On the deck."
    assert len(recorder.stores) == 1
    assert {e.run_id for e in recorder.observed} == {turn.run_id}
    assert recorder.observed[-1].kind == "run.completed"


class Spans(TracingProcessor):
    def __init__(self) -> None:
        self.traces: list[str] = []

    def on_trace_start(self, trace: Trace) -> None:
        self.traces.append(trace.name)

    def on_trace_end(self, trace: Trace) -> None: ...

    def on_span_start(self, span: Span[Any]) -> None: ...

    def on_span_end(self, span: Span[Any]) -> None: ...

    def shutdown(self) -> None: ...

    def force_flush(self) -> None: ...


@pytest.fixture
def sdk_traces() -> Iterator[Spans]:
    spans = Spans()
    add_trace_processor(spans)
    try:
        yield spans
    finally:
        set_trace_processors([])


async def test_the_sdk_traces_nothing_unless_runner_settings_let_it(
    model_server: LoopbackModelServer, sdk_traces: Spans
) -> None:
    model_server.script.add(reply("untraced"), reply("traced"))
    helper = Agent(name="helper")

    await helper.run("hi", settings=settings_for(model_server))
    assert sdk_traces.traces == []

    traced = settings_for(
        model_server,
        AGENTDECK_RUNNER_SDK_TRACING="true",
        AGENTDECK_RUNNER_WORKFLOW_NAME="headless-check",
    )
    await helper.run("hi", settings=traced)
    assert sdk_traces.traces == ["headless-check"]


# --------------------------------------------------------------------------- settings and input


async def test_the_endpoint_settings_choose_the_api(model_server: LoopbackModelServer) -> None:
    model_server.script.add(reply("over chat"))

    result = await Agent(name="helper").run(
        "hi", settings=settings_for(model_server, OPENAI_USE_RESPONSES="false")
    )

    assert result.final_output == "over chat"
    assert [r.api for r in model_server.model_requests] == ["chat"]


async def test_the_runner_turn_budget_applies(model_server: LoopbackModelServer) -> None:
    model_server.script.add(tool_call("add", {"a": 1, "b": 1}), reply("two"))
    calculator = Agent(name="calculator", tools=[add])

    with pytest.raises(MaxTurnsExceeded):
        await calculator.run(
            "1 + 1?", settings=settings_for(model_server, AGENTDECK_RUNNER_MAX_TURNS="1")
        )


async def test_content_blocks_are_sent_as_a_deck_run_sends_them(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(reply("Two items, 30.00 in total."))

    await Agent(name="helper").run(
        [TextBlock(text="Sum up this order:"), DataBlock(data={"items": [12.5, 17.5]})],
        settings=settings_for(model_server),
    )

    parts = model_server.model_requests[-1].items[-1]["content"]
    assert [part["text"] for part in parts] == ["Sum up this order:", '{"items": [12.5, 17.5]}']


async def test_input_the_engine_cannot_send_is_refused_before_any_request(
    model_server: LoopbackModelServer,
) -> None:
    with pytest.raises(ConfigError, match="ResourceBlock"):
        await Agent(name="helper").run(
            [ResourceBlock(uri="s3://bucket/order.pdf")], settings=settings_for(model_server)
        )
    assert model_server.requests == []


async def test_a_session_carries_the_conversation_across_headless_runs(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(reply("Nice to meet you, Sagi!"), reply("Your name is Sagi."))
    greeter = Agent(name="greeter")
    session = SQLiteSession("headless-1")
    settings = settings_for(model_server)

    await greeter.run("my name is Sagi", settings=settings, session=session)
    second = await greeter.run("what is my name?", settings=settings, session=session)

    assert second.final_output == "Your name is Sagi."
    assert model_server.model_requests[-1].user_texts == ["my name is Sagi", "what is my name?"]
    assert len(await session.get_items()) == 4
    session.close()


async def test_a_session_that_is_not_an_sdk_session_is_refused(
    model_server: LoopbackModelServer,
) -> None:
    with pytest.raises(ConfigError, match=r"takes an Agents SDK Session.*got str"):
        await Agent(name="helper").run("hi", settings=settings_for(model_server), session="wa-1")
    assert model_server.requests == []


async def test_names_only_a_catalog_could_resolve_are_refused_naming_the_fix(
    model_server: LoopbackModelServer,
) -> None:
    front_desk = Agent(name="front_desk", handoffs=["billing"])

    with pytest.raises(ConfigError, match="no catalog to look it up in; pass the Agent object"):
        await front_desk.run("hi", settings=settings_for(model_server))
    assert model_server.requests == []


async def test_a_handoff_to_an_agent_object_runs_in_the_same_headless_run(
    model_server: LoopbackModelServer,
) -> None:
    billing = Agent(name="billing", instructions="Sort out payments.")
    front_desk = Agent(name="front_desk", handoffs=[billing])
    model_server.script.add(handoff("billing"), reply("Refund issued."))

    result = await front_desk.run("I was charged twice", settings=settings_for(model_server))

    assert result.final_output == "Refund issued."
    assert result.last_agent.name == "billing"
    assert model_server.model_requests[-1].instructions == "Sort out payments."


async def test_an_approval_comes_back_unanswered_in_the_sdk_result(
    model_server: LoopbackModelServer,
) -> None:
    consulted: list[str] = []

    class Policy:
        def approve_tool_call(self, tool: str) -> bool:
            consulted.append(tool)
            return True

    model_server.script.add(tool_call("add", {"a": 1, "b": 2}))
    calculator = Agent(name="calculator", tools=[add], interrupt_on=["add"], hooks=Policy())

    result = await calculator.run("1 + 2?", settings=settings_for(model_server))

    assert result.final_output is None
    assert [item.tool_name for item in result.interruptions] == ["add"]
    assert added == []
    assert consulted == []  # the policy belongs to a deck run's approval flow


async def test_a_ca_bundle_gets_a_client_of_its_own_and_an_unreadable_one_is_refused(
    model_server: LoopbackModelServer, tmp_path: Path
) -> None:
    model_server.script.add(reply("trusted"))
    helper = Agent(name="helper")

    result = await helper.run(
        "hi", settings=settings_for(model_server, OPENAI_CA_BUNDLE=certifi.where())
    )
    assert result.final_output == "trusted"

    missing = tmp_path / "no-such-bundle.pem"
    with pytest.raises(ConfigError, match=r"OPENAI_CA_BUNDLE=.*is not a readable PEM file") as bad:
        await helper.run("hi", settings=settings_for(model_server, OPENAI_CA_BUNDLE=str(missing)))
    assert bad.value.setting == "OPENAI_CA_BUNDLE"
    assert len(model_server.model_requests) == 1


def test_successive_event_loops_each_run_and_leave_no_connection_open(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(reply("first loop"), reply("again"), reply("second loop"))
    helper = Agent(name="helper")
    settings = settings_for(model_server)

    async def twice() -> list[Any]:
        return [
            (await helper.run("hi", settings=settings)).final_output,
            (await helper.run("hi", settings=settings)).final_output,
        ]

    first = asyncio.run(twice())
    second = asyncio.run(helper.run("hi", settings=settings))

    assert first == ["first loop", "again"]
    assert second.final_output == "second loop"
    assert open_connections_to(model_server) == []


def open_connections_to(server: LoopbackModelServer) -> list[asyncio.Transport]:
    port = urlsplit(server.base_url).port
    return [
        transport
        for transport in gc.get_objects()
        if isinstance(transport, asyncio.Transport)
        and not transport.is_closing()
        and (transport.get_extra_info("peername") or (None, None))[1] == port
    ]
