"""Engine parity: what an OpenAI Agents SDK agent does raw, it does through a Deck.

Each test declares one thing twice, the SDK's way (an ``agents.Agent`` run with ``Runner.run``)
and AgentDeck's (an ``agentdeck.Agent`` run by a deck), against the same loopback model server
answering the same script, and asserts that the two agree: the output, what the model was sent,
and what the SDK's own objects (guardrails, hooks, tool-use behaviour) saw. The deck side also
asserts what its log records of it. ``docs/parity.md`` cites these tests row by row.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

import pytest
from agents import (
    Agent as SDKAgent,
)
from agents import (
    AgentHooks,
    FunctionToolResult,
    GuardrailFunctionOutput,
    InputGuardrailTripwireTriggered,
    OpenAIProvider,
    OutputGuardrailTripwireTriggered,
    RunConfig,
    RunContextWrapper,
    RunHooks,
    Runner,
    RunResult,
    ToolGuardrailFunctionOutput,
    ToolsToFinalOutputResult,
    function_tool,
    input_guardrail,
    output_guardrail,
    tool_input_guardrail,
)
from openai import AsyncOpenAI

from agentdeck import (
    Agent,
    ApprovalDecided,
    ConfigError,
    Deck,
    Event,
    InterruptResult,
    Report,
    RunFailedError,
    RunSuspendedError,
    Settings,
    ToolCallCompleted,
    ToolCtx,
    TurnResult,
    tool,
)
from agentdeck_openai.testing import (
    API_KEY,
    MODEL,
    LoopbackModelServer,
    ModelRequest,
    handoff,
    reply,
    tool_call,
)

# --------------------------------------------------------------------------- the two sides


@pytest.fixture
async def client(model_server: LoopbackModelServer) -> AsyncIterator[AsyncOpenAI]:
    client = AsyncOpenAI(base_url=model_server.base_url, api_key=API_KEY)
    yield client
    await client.close()


async def raw(
    client: AsyncOpenAI,
    agent: SDKAgent[Any],
    text: str,
    *,
    context: Any = None,
    hooks: RunHooks[Any] | None = None,
) -> RunResult:
    """The SDK's own run: ``Runner.run`` on the loopback server's Responses API."""
    config = RunConfig(
        model_provider=OpenAIProvider(openai_client=client, use_responses=True),
        tracing_disabled=True,
    )
    return await Runner.run(agent, text, context=context, hooks=hooks, run_config=config)


def deck_for(server: LoopbackModelServer, *agents: Agent, context: Any = None) -> Deck:
    return Deck(
        agents=list(agents),
        settings=Settings(env=server.env()),
        observers=(),
        context=None if context is None else type(context),
    )


async def play(deck: Deck, name: str, text: str, *, streamed: bool, context: Any = None) -> Any:
    """One turn, played quietly (``deck.run``: the SDK's ``Runner.run``) or streamed (a run
    handle: ``Runner.run_streamed``); the engine records the same either way."""
    if not streamed:
        return await deck.run(name, text, context=context)
    run = await deck.runs.start(name, text, context=context)
    try:
        return await run
    except RunSuspendedError as parked:
        return parked.pending


async def log_of(deck: Deck, run_id: str) -> list[Event]:
    run = await deck.runs.get(run_id)
    return [event async for event in run.events()]


def tool_schemas(request: ModelRequest) -> dict[str, dict[str, Any]]:
    """The function tools a request offered, by name: description and parameter schema."""
    tools = request.body.get("tools") or []
    return {t["name"]: t for t in tools if t.get("type") == "function"}


# --------------------------------------------------------------------------- 1 tool descriptions


def convert_numpy(amount: float, currency: str = "EUR") -> str:
    """Convert an amount of pounds sterling.

    Parameters
    ----------
    amount : float
        How many pounds,
        before any fee.
    currency : str, optional
        What to convert to.

    Returns
    -------
    str
        The converted amount.
    """
    return f"{amount * 1.17:.2f} {currency}"


def convert_annotated(
    amount: Annotated[float, "How many pounds."],
    currency: Annotated[str, "What to convert to."] = "EUR",
) -> str:
    """Convert an amount of pounds sterling."""
    return f"{amount * 1.17:.2f} {currency}"


def convert_sphinx(amount: float, currency: str = "EUR") -> str:
    """Convert an amount of pounds sterling.

    :param amount: How many pounds.
    :param str currency: What to convert to.
    :returns: the converted amount
    """
    return f"{amount * 1.17:.2f} {currency}"


def convert_google(amount: float, currency: str = "EUR") -> str:
    """Convert an amount of pounds sterling.

    Args:
        amount: How many pounds,
            before any fee.
        currency (str): What to convert to.
    """
    return f"{amount * 1.17:.2f} {currency}"


@pytest.mark.parametrize(
    "function", [convert_numpy, convert_annotated, convert_sphinx, convert_google]
)
async def test_tool_descriptions_reach_the_model_as_the_sdk_sends_them(
    model_server: LoopbackModelServer, client: AsyncOpenAI, function: Any
) -> None:
    name = function.__name__
    model_server.script.add(tool_call(name, {"amount": 10}, call_id="c1"), reply("11.70 EUR"))
    model_server.script.add(tool_call(name, {"amount": 10}, call_id="c1"), reply("11.70 EUR"))

    sdk = SDKAgent(
        name="clerk", instructions="Convert.", model=MODEL, tools=[function_tool(function)]
    )
    raw_result = await raw(client, sdk, "10 pounds?")
    [raw_request, _] = model_server.model_requests
    model_server.clear_requests()
    async with deck_for(
        model_server, Agent(name="clerk", instructions="Convert.", tools=[function])
    ) as deck:
        result = await deck.run("clerk", "10 pounds?")
    [deck_request, answered] = model_server.model_requests

    assert result.output == raw_result.final_output == "11.70 EUR"
    raw_tool, deck_tool = tool_schemas(raw_request)[name], tool_schemas(deck_request)[name]
    assert deck_tool["description"] == raw_tool["description"]
    described = {
        parameter: spec.get("description")
        for parameter, spec in deck_tool["parameters"]["properties"].items()
    }
    assert described == {
        parameter: spec.get("description")
        for parameter, spec in raw_tool["parameters"]["properties"].items()
    }
    assert described["amount"] is not None and described["currency"] == "What to convert to."
    assert answered.tool_outputs == {"c1": "11.70 EUR"}


# --------------------------------------------------------------------------- 2 guardrails


class Shop:
    """An application context: the guardrails read it as ``ctx.context``, raw and on a deck."""

    def __init__(self) -> None:
        self.checked: list[str] = []


@input_guardrail
def no_homework(ctx: RunContextWrapper[Shop], agent: Any, text: Any) -> GuardrailFunctionOutput:
    ctx.context.checked.append(f"input of {agent.name}")
    return GuardrailFunctionOutput(
        output_info={"reason": "homework"}, tripwire_triggered="homework" in str(text)
    )


@output_guardrail
def no_refunds_promised(
    ctx: RunContextWrapper[Shop], agent: Any, output: Any
) -> GuardrailFunctionOutput:
    ctx.context.checked.append(f"output of {agent.name}")
    return GuardrailFunctionOutput(output_info=None, tripwire_triggered="refund" in str(output))


def guarded_sdk() -> SDKAgent[Any]:
    return SDKAgent(
        name="tutor",
        instructions="Help.",
        model=MODEL,
        input_guardrails=[no_homework],
        output_guardrails=[no_refunds_promised],
    )


GUARDED = Agent(
    name="tutor",
    instructions="Help.",
    input_guardrails=[no_homework],
    output_guardrails=[no_refunds_promised],
)


async def test_guardrails_that_pass_leave_the_answer_alone_and_read_the_application_context(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    model_server.script.add(reply("Paris."), reply("Paris."))
    raw_shop, deck_shop = Shop(), Shop()

    raw_result = await raw(client, guarded_sdk(), "Capital of France?", context=raw_shop)
    async with deck_for(model_server, GUARDED, context=deck_shop) as deck:
        result = await deck.run("tutor", "Capital of France?", context=deck_shop)

    assert result.output == raw_result.final_output == "Paris."
    assert deck_shop.checked == raw_shop.checked == ["input of tutor", "output of tutor"]


async def test_an_input_tripwire_fails_the_turn_and_the_log_names_the_guardrail(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    model_server.script.add(reply("unused"), reply("unused"))

    with pytest.raises(InputGuardrailTripwireTriggered) as tripped:
        await raw(client, guarded_sdk(), "Do my homework", context=Shop())
    async with deck_for(model_server, GUARDED, context=Shop()) as deck:
        with pytest.raises(RunFailedError) as failed:
            await deck.run("tutor", "Do my homework", context=Shop())
        log = await log_of(deck, failed.value.run_id)

    assert failed.value.where == tripped.value.guardrail_result.guardrail.get_name()
    [report] = [e.payload for e in log if isinstance(e.payload, Report)]
    assert report.fields["guardrail"] == "no_homework"
    assert report.fields["stage"] == "input"
    assert report.fields["agent"] == "tutor"
    assert report.fields["output_info"] == '{"reason": "homework"}'
    assert [e.kind for e in log][-2:] == ["report", "run.failed"]


async def test_an_output_tripwire_fails_the_turn_and_the_log_names_the_guardrail(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    model_server.script.add(reply("You get a refund."), reply("You get a refund."))

    with pytest.raises(OutputGuardrailTripwireTriggered) as tripped:
        await raw(client, guarded_sdk(), "Hello", context=Shop())
    async with deck_for(model_server, GUARDED, context=Shop()) as deck:
        with pytest.raises(RunFailedError) as failed:
            await deck.run("tutor", "Hello", context=Shop())
        log = await log_of(deck, failed.value.run_id)

    assert failed.value.where == tripped.value.guardrail_result.guardrail.get_name()
    [report] = [e.payload for e in log if isinstance(e.payload, Report)]
    assert (report.fields["guardrail"], report.fields["stage"]) == ("no_refunds_promised", "output")


@tool_input_guardrail
def no_big_amounts(data: Any) -> ToolGuardrailFunctionOutput:
    if '"amount": 5000' in data.context.tool_arguments:
        return ToolGuardrailFunctionOutput.reject_content("Amounts over 1000 need a manager.")
    return ToolGuardrailFunctionOutput.allow()


def refund_body(amount: int) -> str:
    """Refund an amount."""
    return f"refunded {amount}"


async def test_a_tool_guardrail_rejection_reaches_the_model_and_is_recorded(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    guarded_tool = function_tool(refund_body, tool_input_guardrails=[no_big_amounts])
    for _ in range(2):
        model_server.script.add(
            tool_call("refund_body", {"amount": 5000}, call_id="r1"), reply("I cannot.")
        )

    sdk = SDKAgent(name="till", instructions="Refund.", model=MODEL, tools=[guarded_tool])
    raw_result = await raw(client, sdk, "Refund 5000")
    raw_sent = model_server.model_requests[-1].tool_outputs["r1"]
    async with deck_for(
        model_server, Agent(name="till", instructions="Refund.", tools=[guarded_tool])
    ) as deck:
        result = await deck.run("till", "Refund 5000")
        log = await log_of(deck, result.run_id)

    assert result.output == raw_result.final_output == "I cannot."
    assert model_server.model_requests[-1].tool_outputs["r1"] == raw_sent
    kinds = [e.kind for e in log]
    report_at = kinds.index("report")
    assert kinds[report_at + 1] == "tool.call.completed"
    report = log[report_at].payload
    assert isinstance(report, Report)
    assert report.fields == {
        "guardrail": "no_big_amounts",
        "stage": "tool_input",
        "outcome": "rejected",
        "tool": "refund_body",
    }


def test_a_guardrail_that_is_not_the_sdks_is_refused_when_the_deck_builds() -> None:
    def loose(ctx: Any, agent: Any, text: Any) -> bool:
        return False

    deck = Deck(agents=[Agent(name="a", model=MODEL, input_guardrails=[loose])], observers=())
    with pytest.raises(ConfigError) as refused:
        deck.build()
    assert refused.value.setting == "input_guardrails"
    assert "@input_guardrail" in str(refused.value)


# --------------------------------------------------------------------------- 3 approval per call


class Refunds:
    def __init__(self) -> None:
        self.asked: list[tuple[int, str]] = []
        self.done: list[int] = []


async def big_refunds_need_a_person(ctx: Any, params: dict[str, Any], call_id: str) -> bool:
    """Raw, ``ctx`` is the SDK's run context; on a deck, the call's ``ToolCtx``."""
    return int(params["amount"]) > 100


@pytest.mark.parametrize("streamed", [False, True], ids=["deck.run", "a run handle"])
async def test_a_needs_approval_function_is_asked_per_call_and_only_a_yes_parks(
    model_server: LoopbackModelServer, client: AsyncOpenAI, streamed: bool
) -> None:
    raw_refunds, deck_refunds = Refunds(), Refunds()

    def refund_tool(refunds: Refunds) -> Any:
        def refund(amount: int) -> str:
            """Refund an amount."""
            refunds.done.append(amount)
            return f"refunded {amount}"

        return refund

    for _ in range(2):
        model_server.script.add(
            tool_call("refund", {"amount": 20}, call_id="small"),
            reply("Refunded 20."),
            tool_call("refund", {"amount": 500}, call_id="big"),
        )
    sdk = SDKAgent(
        name="till",
        instructions="Refund.",
        model=MODEL,
        tools=[function_tool(refund_tool(raw_refunds), needs_approval=big_refunds_need_a_person)],
    )
    small = await raw(client, sdk, "Refund 20")
    big = await raw(client, sdk, "Refund 500")

    till = Agent(
        name="till",
        instructions="Refund.",
        tools=[tool(needs_approval=big_refunds_need_a_person)(refund_tool(deck_refunds))],
    )
    async with deck_for(model_server, till) as deck:
        deck_small = await play(deck, "till", "Refund 20", streamed=streamed)
        deck_big = await play(deck, "till", "Refund 500", streamed=streamed)
        small_log = await log_of(deck, deck_small.run_id)

    assert (small.interruptions, small.final_output) == ([], "Refunded 20.")
    assert isinstance(deck_small, TurnResult) and deck_small.output == "Refunded 20."
    assert [i.call_id for i in big.interruptions] == ["big"]
    assert isinstance(deck_big, InterruptResult) and deck_big.payload["call_id"] == "big"
    assert deck_refunds.done == raw_refunds.done == [20]
    [decided] = [e.payload for e in small_log if isinstance(e.payload, ApprovalDecided)]
    assert (decided.call_id, decided.approved, decided.origin) == ("small", True, "policy")
    kinds = [e.kind for e in small_log]
    assert kinds.index("approval.decided") < kinds.index("tool.call.completed")


async def test_a_needs_approval_function_reads_the_run_context_from_its_tool_ctx(
    model_server: LoopbackModelServer,
) -> None:
    seen: list[tuple[str | None, str | None, dict[str, Any]]] = []

    def per_customer(ctx: ToolCtx[dict[str, bool]], params: dict[str, Any], call_id: str) -> bool:
        seen.append((ctx.tool_name, ctx.tool_call_id, params))
        return not ctx.data["trusted"]

    @tool(needs_approval=per_customer)
    def refund(amount: int) -> str:
        """Refund an amount."""
        return f"refunded {amount}"

    model_server.script.add(tool_call("refund", {"amount": 5}, call_id="c1"), reply("Done."))
    async with deck_for(model_server, Agent(name="till", tools=[refund]), context={}) as deck:
        result = await deck.run("till", "Refund 5", context={"trusted": True})

    assert result.output == "Done."
    assert seen == [("refund", "c1", {"amount": 5})]


def test_a_needs_approval_function_of_the_wrong_shape_is_refused_at_the_declaration() -> None:
    with pytest.raises(ConfigError) as refused:
        tool(needs_approval=lambda args: True)(refund_body)
    assert refused.value.setting == "needs_approval"


# --------------------------------------------------------------------------- 4 tool use behaviour


def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id} is in transit"


def notify(order_id: str) -> str:
    """Tell the customer."""
    return f"told the customer about {order_id}"


def first_tool_output(ctx: RunContextWrapper[Any], results: list[FunctionToolResult]) -> Any:
    return ToolsToFinalOutputResult(
        is_final_output=True, final_output=f"final: {results[0].output}"
    )


@pytest.mark.parametrize(
    "behavior",
    [
        "stop_on_first_tool",
        {"stop_at_tool_names": ["lookup"]},
        first_tool_output,
    ],
    ids=["stop_on_first_tool", "StopAtTools", "a function"],
)
@pytest.mark.parametrize("streamed", [False, True], ids=["deck.run", "a run handle"])
async def test_tool_use_behavior_ends_the_turn_with_the_tool_output_as_the_sdk_does(
    model_server: LoopbackModelServer, client: AsyncOpenAI, behavior: Any, streamed: bool
) -> None:
    for _ in range(2):
        model_server.script.add(tool_call("lookup", {"order_id": "A-1"}, call_id="l1"))
    sdk = SDKAgent(
        name="clerk",
        instructions="Look up.",
        model=MODEL,
        tools=[function_tool(lookup), function_tool(notify)],
        tool_use_behavior=behavior,
    )
    raw_result = await raw(client, sdk, "Where is A-1?")
    clerk = Agent(
        name="clerk", instructions="Look up.", tools=[lookup, notify], tool_use_behavior=behavior
    )
    async with deck_for(model_server, clerk) as deck:
        result = await play(deck, "clerk", "Where is A-1?", streamed=streamed)
        log = await log_of(deck, result.run_id)

    assert result.output == raw_result.final_output
    assert str(raw_result.final_output).endswith("order A-1 is in transit")
    assert len(model_server.model_requests) == 2  # one model call each: the tool ended the turn
    assert [e.kind for e in log][-2:] == ["tool.call.completed", "run.completed"]


def test_tool_use_behavior_naming_a_tool_the_agent_lacks_is_refused_when_the_deck_builds() -> None:
    clerk = Agent(
        name="clerk",
        model=MODEL,
        tools=[lookup],
        tool_use_behavior={"stop_at_tool_names": ["lokup"]},
    )
    with pytest.raises(ConfigError) as refused:
        Deck(agents=[clerk], observers=()).build()
    assert refused.value.setting == "tool_use_behavior"


def test_tool_use_behavior_that_is_no_behavior_is_refused_at_the_declaration() -> None:
    with pytest.raises(ConfigError) as refused:
        Agent(name="clerk", tool_use_behavior="stop_now")
    assert refused.value.setting == "tool_use_behavior"


# ------------------------------------------------------------------------ 5 run hooks, last_agent


class Recorder(RunHooks[Any]):
    """Run hooks writing down what they are told, with what the context was."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def on_agent_start(self, context: Any, agent: Any) -> None:
        self.seen.append(f"start {agent.name} ({type(context.context).__name__})")

    async def on_agent_end(self, context: Any, agent: Any, output: Any) -> None:
        self.seen.append(f"end {agent.name}: {output}")

    async def on_handoff(self, context: Any, from_agent: Any, to_agent: Any) -> None:
        self.seen.append(f"handoff {from_agent.name} -> {to_agent.name}")

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        self.seen.append(f"tool {tool.name}")

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        self.seen.append(f"llm {agent.name}")


def handoff_script(server: LoopbackModelServer) -> None:
    server.script.add(
        tool_call("lookup", {"order_id": "A-1"}, call_id="l1"),
        handoff("billing"),
        reply("Billing here: refunded."),
    )


@pytest.mark.parametrize("streamed", [False, True], ids=["deck.run", "a run handle"])
async def test_run_hooks_see_the_same_run_and_the_result_names_the_answering_agent(
    model_server: LoopbackModelServer, client: AsyncOpenAI, streamed: bool
) -> None:
    raw_hooks, deck_hooks = Recorder(), Recorder()
    sdk_billing = SDKAgent(name="billing", instructions="Payments.", model=MODEL)
    sdk_front = SDKAgent(
        name="front",
        instructions="Route.",
        model=MODEL,
        tools=[function_tool(lookup)],
        handoffs=[sdk_billing],
    )
    handoff_script(model_server)
    raw_result = await raw(client, sdk_front, "Refund A-1", context=Shop(), hooks=raw_hooks)

    billing = Agent(name="billing", instructions="Payments.")
    front = Agent(
        name="front",
        instructions="Route.",
        tools=[lookup],
        handoffs=[billing],
        run_hooks=deck_hooks,
    )
    handoff_script(model_server)
    async with deck_for(model_server, front, billing, context=Shop()) as deck:
        result = await play(deck, "front", "Refund A-1", streamed=streamed, context=Shop())
        log = await log_of(deck, result.run_id)

    assert result.output == raw_result.final_output == "Billing here: refunded."
    assert result.last_agent == raw_result.last_agent.name == "billing"
    assert deck_hooks.seen == raw_hooks.seen
    assert "start front (Shop)" in deck_hooks.seen
    changed = [e.payload for e in log if e.kind == "agent.changed"]
    assert [(c.previous, c.next) for c in changed] == [("front", "billing")]  # type: ignore[union-attr]


async def test_without_a_handoff_the_answering_agent_is_the_one_asked(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(reply("Hello."))
    async with deck_for(model_server, Agent(name="front", instructions="Hi.")) as deck:
        result = await deck.run("front", "hi")
    assert result.last_agent == "front"


def test_run_hooks_that_are_not_the_sdks_are_refused_when_the_deck_builds() -> None:
    class NotHooks:
        def on_agent_start(self) -> None: ...

    with pytest.raises(ConfigError) as refused:
        Deck(agents=[Agent(name="a", model=MODEL, run_hooks=NotHooks())], observers=()).build()
    assert refused.value.setting == "run_hooks"


# --------------------------------------------------------------------------- 8 a raising tool


def kaboom(order_id: str) -> str:
    """Charge an order."""
    raise RuntimeError("kaboom now")


async def test_a_raising_tool_is_reported_to_the_model_and_the_run_returns_its_answer(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    for _ in range(2):
        model_server.script.add(
            tool_call("kaboom", {"order_id": "A-7"}, call_id="k1"),
            reply("The charge failed; try again later."),
        )
    sdk = SDKAgent(
        name="cashier", instructions="Charge.", model=MODEL, tools=[function_tool(kaboom)]
    )
    raw_result = await raw(client, sdk, "Charge A-7")
    raw_sent = model_server.model_requests[-1].tool_outputs["k1"]
    model_server.clear_requests()

    cashier = Agent(name="cashier", instructions="Charge.", tools=[kaboom])
    async with deck_for(model_server, cashier) as deck:
        run = await deck.runs.start("cashier", "Charge A-7")
        result = await run
        log = await log_of(deck, run.id)

    assert result.output == raw_result.final_output == "The charge failed; try again later."
    [completed] = [e.payload for e in log if isinstance(e.payload, ToolCallCompleted)]
    assert completed.error is not None and "kaboom now" in completed.error
    sent = model_server.model_requests[-1].tool_outputs["k1"]
    assert sent == raw_sent  # the SDK's own message ...
    assert "kaboom" not in sent  # ... which leaves the exception's text out
    assert completed.result_preview == sent


# --------------------------------------------------------------------------- passed through


async def test_a_hosted_tool_is_offered_to_the_model_as_the_sdk_offers_it(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    from agents import WebSearchTool

    search = WebSearchTool(search_context_size="low")
    model_server.script.add(reply("Nothing found."), reply("Nothing found."))

    sdk = SDKAgent(name="researcher", instructions="Search.", model=MODEL, tools=[search])
    raw_result = await raw(client, sdk, "News?")
    [raw_request] = model_server.model_requests
    model_server.clear_requests()
    researcher = Agent(name="researcher", instructions="Search.", tools=[search])
    async with deck_for(model_server, researcher) as deck:
        result = await deck.run("researcher", "News?")
    [deck_request] = model_server.model_requests

    assert result.output == raw_result.final_output == "Nothing found."
    hosted = [t for t in deck_request.body["tools"] if t.get("type") != "function"]
    assert hosted == [t for t in raw_request.body["tools"] if t.get("type") != "function"]
    assert hosted and hosted[0]["type"].startswith("web_search")


class SDKAudit(AgentHooks[Any]):
    """The SDK's own per-agent hooks, in ``hooks=`` as the SDK agent takes them."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def on_start(self, context: Any, agent: Any) -> None:
        self.seen.append(f"start {agent.name} ({type(context.context).__name__})")

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        self.seen.append(f"tool {tool.name}: {result}")

    async def on_end(self, context: Any, agent: Any, output: Any) -> None:
        self.seen.append(f"end {agent.name}: {output}")


async def test_sdk_agent_hooks_in_hooks_are_the_sdk_agents_own(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    raw_audit, deck_audit = SDKAudit(), SDKAudit()
    for _ in range(2):
        model_server.script.add(
            tool_call("lookup", {"order_id": "A-1"}, call_id="l1"), reply("In transit.")
        )

    sdk = SDKAgent(
        name="clerk",
        instructions="Help.",
        model=MODEL,
        tools=[function_tool(lookup)],
        hooks=raw_audit,
    )
    raw_result = await raw(client, sdk, "Where is A-1?", context=Shop())
    clerk = Agent(name="clerk", instructions="Help.", tools=[lookup], hooks=deck_audit)
    async with deck_for(model_server, clerk, context=Shop()) as deck:
        result = await deck.run("clerk", "Where is A-1?", context=Shop())

    assert result.output == raw_result.final_output == "In transit."
    assert (
        deck_audit.seen
        == raw_audit.seen
        == [
            "start clerk (Shop)",
            "tool lookup: order A-1 is in transit",
            "end clerk: In transit.",
        ]
    )


async def test_sdk_model_settings_are_the_agents_own(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    from agents import ModelSettings

    settings = ModelSettings(temperature=0.25, max_tokens=77)
    model_server.script.add(reply("Hi."), reply("Hi."))
    await raw(client, SDKAgent(name="a", model=MODEL, model_settings=settings), "hi")
    [raw_request] = model_server.model_requests
    model_server.clear_requests()
    async with deck_for(model_server, Agent(name="a", model_settings=settings)) as deck:
        await deck.run("a", "hi")
    [deck_request] = model_server.model_requests

    for name in ("temperature", "max_output_tokens"):
        assert deck_request.body[name] == raw_request.body[name]
    assert deck_request.body["temperature"] == 0.25


def test_an_agent_field_put_in_model_settings_is_refused_saying_where_it_goes() -> None:
    clerk = Agent(name="clerk", model=MODEL, model_settings={"tool_use_behavior": "x"})
    with pytest.raises(ConfigError) as refused:
        Deck(agents=[clerk], observers=()).build()
    assert "write Agent(tool_use_behavior=...)" in str(refused.value)


async def test_run_hooks_take_part_in_a_headless_run_too(
    model_server: LoopbackModelServer,
) -> None:
    hooks = Recorder()
    model_server.script.add(tool_call("lookup", {"order_id": "A-1"}), reply("In transit."))
    clerk = Agent(name="clerk", tools=[lookup], run_hooks=hooks)

    result = await clerk.run("Where is A-1?", settings=Settings(env=model_server.env()))

    assert result.final_output == "In transit."
    assert hooks.seen[0] == "start clerk (NoneType)"  # no context headless
    assert "tool lookup" in hooks.seen


async def test_an_sdk_function_tool_that_raises_is_handled_as_the_sdk_handles_it_and_recorded(
    model_server: LoopbackModelServer, client: AsyncOpenAI
) -> None:
    native = function_tool(kaboom)
    for _ in range(2):
        model_server.script.add(
            tool_call("kaboom", {"order_id": "A-7"}, call_id="k1"), reply("It failed.")
        )
    sdk = SDKAgent(name="cashier", instructions="Charge.", model=MODEL, tools=[native])
    raw_result = await raw(client, sdk, "Charge A-7")
    raw_sent = model_server.model_requests[-1].tool_outputs["k1"]
    async with deck_for(model_server, Agent(name="cashier", tools=[native])) as deck:
        result = await deck.run("cashier", "Charge A-7")
        log = await log_of(deck, result.run_id)

    assert result.output == raw_result.final_output == "It failed."
    assert model_server.model_requests[-1].tool_outputs["k1"] == raw_sent
    [completed] = [e.payload for e in log if isinstance(e.payload, ToolCallCompleted)]
    assert completed.error == "RuntimeError: kaboom now"
    assert completed.result_preview == raw_sent
