"""Tools through the openai engine: what the log records and what the model is sent.

Each test plays an agent against the loopback model server with the contract kit's ``drive`` and
asserts both the canonical events and the recorded HTTP requests.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import engine_support as support  # loaded by conftest.py
import pytest
from pydantic import BaseModel

from agentdeck import Agent
from agentdeck.authoring.catalog import Catalog
from agentdeck.authoring.context import ToolCtx
from agentdeck.authoring.skills import Skills
from agentdeck.authoring.tools import tool
from agentdeck.model.content import DataBlock, ImageBlock, TextBlock
from agentdeck.model.payloads import (
    AgentChanged,
    ArtifactCreated,
    MessageCompleted,
    PlanUpdated,
    RunCompleted,
    RunFailed,
    TextDelta,
    ThoughtDelta,
    ToolCallCompleted,
    ToolCallStarted,
    Usage,
    UsageReported,
)
from agentdeck.testing.engine_kit import check_completed, drive, make_invocation
from agentdeck.vocabulary import ErrorCode
from agentdeck_openai.testing import (
    LoopbackModelServer,
    call,
    handoff,
    reply,
    structured,
    tool_call,
    tool_calls,
)
from agentdeck_openai.testing import (
    Usage as ScriptedUsage,
)


class Opaque:
    """A value JSON cannot carry; its repr() holds a memory address."""


@tool
def get_weather(city: str) -> str:
    """Report the weather."""
    return f"sunny in {city}"


async def play(
    server: LoopbackModelServer, agent: Agent, text: str = "hi", **engine_options: Any
) -> Any:
    async with support.opened(support.make_engine(server, **engine_options)) as engine:
        return await drive(engine, make_invocation(engine, agent, text))


# --------------------------------------------------------------------------- results


async def test_a_tool_result_is_recorded_as_preview_size_and_hash_of_what_the_model_got(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(tool_call("get_weather", {"city": "Paris"}), reply("It is sunny"))
    agent = Agent(name="Weather", instructions="Answer.", tools=[get_weather])
    result = await play(model_server, agent)

    assert check_completed(result) == [TextBlock(text="It is sunny")]
    [started] = support.payloads(result, ToolCallStarted)
    [completed] = support.payloads(result, ToolCallCompleted)
    assert (started.tool, started.args, started.args_error) == (
        "get_weather",
        {"city": "Paris"},
        None,
    )
    sent = support.tool_output_sent(model_server, completed.call_id)
    assert sent == "sunny in Paris"
    assert completed.result_preview == sent
    assert completed.result_size == len(sent.encode())
    assert completed.result_sha256 == hashlib.sha256(sent.encode()).hexdigest()
    assert completed.error is None


async def test_json_data_reaches_the_model_as_json_text(model_server: LoopbackModelServer) -> None:
    class Forecast(BaseModel):
        city: str
        degrees: float

    @tool
    def forecast(city: str) -> list[Forecast]:
        """Forecast."""
        return [Forecast(city=city, degrees=21.5)]

    model_server.script.add(tool_call("forecast", {"city": "Zürich"}), reply("warm"))
    result = await play(model_server, Agent(name="F", instructions="x", tools=[forecast]))

    check_completed(result)
    [completed] = support.payloads(result, ToolCallCompleted)
    sent = support.tool_output_sent(model_server, completed.call_id)
    assert json.loads(sent) == [{"city": "Zürich", "degrees": 21.5}]
    assert "Zürich" in sent  # not \\u-escaped
    assert completed.result_sha256 == hashlib.sha256(sent.encode()).hexdigest()


async def test_an_unserializable_result_is_a_clear_error_and_never_a_memory_address(
    model_server: LoopbackModelServer,
) -> None:
    @tool
    def lookup() -> Opaque:
        """Return something JSON cannot carry."""
        return Opaque()

    model_server.script.add(tool_call("lookup", call_id="c1"), reply("sorry"))
    result = await play(model_server, Agent(name="L", instructions="x", tools=[lookup]))

    assert check_completed(result) == [TextBlock(text="sorry")]
    [completed] = support.payloads(result, ToolCallCompleted)
    assert completed.error == "returned a Opaque value, which JSON cannot carry"
    sent = support.tool_output_sent(model_server, "c1")
    assert "Opaque" in sent and "cannot be represented as JSON" in sent
    assert completed.result_sha256 == hashlib.sha256(sent.encode()).hexdigest()
    for text in (support.everything_logged(result), support.body_text(model_server)):
        assert " at 0x" not in text and "object at" not in text


async def test_two_identical_unserializable_results_hash_the_same(
    model_server: LoopbackModelServer,
) -> None:
    @tool
    def lookup(n: int) -> Opaque:
        """Return something JSON cannot carry."""
        return Opaque()

    model_server.script.add(
        tool_calls(call("lookup", {"n": 1}), call("lookup", {"n": 2})), reply("done")
    )
    result = await play(model_server, Agent(name="L", instructions="x", tools=[lookup]))

    first, second = support.payloads(result, ToolCallCompleted)
    assert first.result_sha256 == second.result_sha256
    assert first.error == second.error is not None


async def test_an_image_result_is_shown_to_the_model_and_opens_the_output(
    model_server: LoopbackModelServer,
) -> None:
    pixel = base64.b64encode(b"\x89PNG fake").decode()

    @tool
    def draw() -> list[Any]:
        """Draw a picture."""
        return [ImageBlock(media_type="image/png", data_b64=pixel), TextBlock(text="a cat")]

    model_server.script.add(tool_call("draw", call_id="d1"), reply("Here is the cat"))
    result = await play(model_server, Agent(name="Painter", instructions="x", tools=[draw]))

    assert check_completed(result) == [
        ImageBlock(media_type="image/png", data_b64=pixel),
        TextBlock(text="Here is the cat"),
    ]
    output = next(
        item["output"]
        for item in model_server.model_requests[-1].items
        if item.get("type") == "function_call_output"
    )
    assert {"type": "input_image", "image_url": f"data:image/png;base64,{pixel}"}.items() <= (
        output[0].items()
    )


async def test_each_image_a_tool_returns_is_recorded_as_an_artifact_before_its_call_completes(
    model_server: LoopbackModelServer,
) -> None:
    cat_png, dog_jpeg = b"\x89PNG cat", b"\xff\xd8\xff a dog"
    cat, dog = base64.b64encode(cat_png).decode(), base64.b64encode(dog_jpeg).decode()

    @tool
    def draw() -> list[Any]:
        """Draw two pictures."""
        return [
            ImageBlock(media_type="image/png", data_b64=cat),
            TextBlock(text="a cat and a dog"),
            ImageBlock(media_type="image/jpeg", data_b64=dog),
        ]

    model_server.script.add(tool_call("draw", call_id="d1"), reply("Here they are"))
    result = await play(model_server, Agent(name="Painter", instructions="x", tools=[draw]))

    result.assert_clean()
    kinds = support.kinds(result)
    assert kinds[kinds.index("tool.call.started") :][:4] == [
        "tool.call.started",
        "artifact.created",
        "artifact.created",
        "tool.call.completed",
    ]
    assert support.payloads(result, ArtifactCreated) == [
        ArtifactCreated(artifact_id="d1/0", media_type="image/png", size=len(cat_png)),
        ArtifactCreated(artifact_id="d1/1", media_type="image/jpeg", size=len(dog_jpeg)),
    ]
    assert check_completed(result)[:2] == [  # the same artifacts, in order, open the output
        ImageBlock(media_type="image/png", data_b64=cat),
        ImageBlock(media_type="image/jpeg", data_b64=dog),
    ]


async def test_a_text_result_records_no_artifact(model_server: LoopbackModelServer) -> None:
    model_server.script.add(tool_call("get_weather", {"city": "Oslo"}), reply("Cold"))
    result = await play(model_server, Agent(name="W", instructions="x", tools=[get_weather]))

    assert "artifact.created" not in support.kinds(result)


# --------------------------------------------------------------------------- failures


@tool
def charge(amount: int) -> str:
    """Charge a card."""
    raise PermissionError("card 4111-1111 declined by bank")


async def test_a_raising_tool_gives_the_model_the_sdk_error_message_and_the_run_goes_on(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(
        tool_call("charge", {"amount": 5}, call_id="c9"), reply("The card was declined.")
    )
    result = await play(model_server, Agent(name="Till", instructions="x", tools=[charge]))

    assert check_completed(result) == [TextBlock(text="The card was declined.")]
    [completed] = support.payloads(result, ToolCallCompleted)
    assert (completed.call_id, completed.error) == (
        "c9",
        "PermissionError: card 4111-1111 declined by bank",
    )
    sent = model_server.model_requests[-1].tool_outputs["c9"]
    assert sent == "An error occurred while running the tool. Please try again."
    assert completed.result_preview == sent
    assert "4111" not in sent  # the SDK's message leaves the exception's text out


async def test_a_tool_error_function_gives_the_model_its_own_text(
    model_server: LoopbackModelServer,
) -> None:
    seen: list[tuple[str | None, str]] = []

    def explain(ctx: ToolCtx[object], error: Exception) -> str:
        seen.append((ctx.tool_name, type(error).__name__))
        return "The bank declined: ask for another card."

    polite = tool(failure_error_function=explain)(charge)
    model_server.script.add(tool_call("charge", {"amount": 5}, call_id="c1"), reply("ok"))
    result = await play(model_server, Agent(name="Till", instructions="x", tools=[polite]))

    check_completed(result)
    assert seen == [("charge", "PermissionError")]
    assert model_server.model_requests[-1].tool_outputs == {
        "c1": "The bank declined: ask for another card."
    }


@pytest.mark.parametrize(
    "agent",
    [
        Agent(name="Till", instructions="x", tools=[charge], tool_errors="fail"),
        Agent(name="Till", instructions="x", tools=[tool(failure_error_function=None)(charge)]),
    ],
    ids=["the agent says fail", "the tool says fail"],
)
async def test_a_raising_tool_fails_the_run_when_told_to_naming_the_tool_not_the_text(
    model_server: LoopbackModelServer, agent: Agent
) -> None:
    model_server.script.add(tool_call("charge", {"amount": 5}, call_id="c9"), reply("unused"))
    result = await play(model_server, agent)

    result.assert_clean()
    assert support.kinds(result)[-2:] == ["tool.call.completed", "run.failed"]
    [completed] = support.payloads(result, ToolCallCompleted)
    assert (completed.call_id, completed.error) == (
        "c9",
        "PermissionError: card 4111-1111 declined by bank",
    )
    failed = result.last.payload
    assert isinstance(failed, RunFailed)
    assert failed.error_code == ErrorCode.TOOL_ERROR
    assert failed.where == "charge"
    assert failed.message == "tool 'charge' raised PermissionError"
    assert len(model_server.model_requests) == 1  # the run stopped; nothing more was asked


async def test_malformed_tool_call_json_is_kept_raw_and_the_model_is_told(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(
        tool_call("get_weather", '{"city": "Par', call_id="m1"), reply("Which city?")
    )
    result = await play(model_server, Agent(name="W", instructions="x", tools=[get_weather]))

    assert check_completed(result) == [TextBlock(text="Which city?")]
    [started] = support.payloads(result, ToolCallStarted)
    assert started.args == '{"city": "Par'
    assert started.args_error is not None and "not valid JSON" in started.args_error
    [completed] = support.payloads(result, ToolCallCompleted)
    assert completed.error == started.args_error
    sent = support.tool_output_sent(model_server, "m1")
    assert sent.startswith("Error: the arguments are not valid JSON")
    assert "get_weather" in sent


async def test_arguments_that_do_not_fit_are_an_error_the_model_can_correct(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(tool_call("get_weather", {"town": "Paris"}, call_id="a1"), reply("ok"))
    result = await play(model_server, Agent(name="W", instructions="x", tools=[get_weather]))

    check_completed(result)
    [completed] = support.payloads(result, ToolCallCompleted)
    assert completed.error == "the arguments do not fit the tool's parameters"
    assert "city" in support.tool_output_sent(model_server, "a1")


# --------------------------------------------------------------------------- context


async def test_a_tool_receives_the_run_context_which_the_model_never_sees(
    model_server: LoopbackModelServer,
) -> None:
    seen: list[ToolCtx[dict[str, str]]] = []

    @tool
    def whoami(ctx: ToolCtx[dict[str, str]], greeting: str) -> str:
        """Say who the user is."""
        seen.append(ctx)
        return f"{greeting} {ctx.data['user']}"

    model_server.script.add(tool_call("whoami", {"greeting": "hi"}, call_id="w1"), reply("done"))
    agent = Agent(name="Who", instructions="x", tools=[whoami])
    async with support.opened(support.make_engine(model_server)) as engine:
        invocation = make_invocation(
            engine, agent, "who?", context={"user": "sagi", "token": "tok-123"}
        )
        result = await drive(engine, invocation)

    check_completed(result)
    [ctx] = seen
    assert ctx.data == {"user": "sagi", "token": "tok-123"}
    assert (ctx.run_id, ctx.tool_call_id, ctx.tool_name) == (invocation.run_id, "w1", "whoami")
    assert support.tool_output_sent(model_server, "w1") == "hi sagi"
    [offered] = model_server.model_requests[0].body["tools"]
    assert list(offered["parameters"]["properties"]) == ["greeting"]
    for text in (support.everything_logged(result), support.body_text(model_server)):
        assert "tok-123" not in text


async def test_dynamic_instructions_render_with_the_run_context(
    model_server: LoopbackModelServer,
) -> None:
    def instructions(ctx: ToolCtx[dict[str, str]]) -> str:
        return f"You help {ctx.data['user']}."

    model_server.script.add(reply("hello"))
    agent = Agent(name="Helper", instructions=instructions)
    async with support.opened(support.make_engine(model_server)) as engine:
        result = await drive(engine, make_invocation(engine, agent, "hi", context={"user": "Ada"}))

    check_completed(result)
    assert model_server.model_requests[0].instructions == "You help Ada."


# --------------------------------------------------------------------------- agents


async def test_a_handoff_is_recorded_as_agent_changed_and_the_new_agent_answers(
    model_server: LoopbackModelServer,
) -> None:
    billing = Agent(name="Billing", instructions="You handle invoices.")
    triage = Agent(name="Triage", instructions="Route the user.", handoffs=[billing])
    model_server.script.add(handoff("Billing"), reply("Your invoice is paid."))
    result = await play(model_server, triage, "my invoice?")

    assert check_completed(result) == [TextBlock(text="Your invoice is paid.")]
    [changed] = support.payloads(result, AgentChanged)
    assert (changed.previous, changed.next) == ("Triage", "Billing")
    [message] = support.payloads(result, MessageCompleted)
    assert message.agent == "Billing"
    first, second = model_server.model_requests
    assert "transfer_to_billing" in first.tool_names
    assert second.instructions == "You handle invoices."


async def test_a_handoff_named_in_the_catalog_is_resolved(
    model_server: LoopbackModelServer,
) -> None:
    billing = Agent(name="Billing", instructions="You handle invoices.")
    triage = Agent(name="Triage", instructions="Route.", handoffs=["Billing"])
    model_server.script.add(handoff("Billing"), reply("paid"))
    result = await play(model_server, triage, catalog=Catalog(agents=[triage, billing]))

    assert check_completed(result) == [TextBlock(text="paid")]
    assert [p.next for p in support.payloads(result, AgentChanged)] == ["Billing"]


async def test_a_subagent_is_called_as_a_tool(model_server: LoopbackModelServer) -> None:
    researcher = Agent(
        name="Researcher", instructions="Find facts.", description="Finds and checks facts."
    )
    lead = Agent(name="Lead", instructions="Lead.", subagents=[researcher])
    model_server.script.add(
        tool_call("Researcher", {"input": "capital of France"}, call_id="r1"),
        reply("Paris", when=lambda r: r.instructions == "Find facts."),
        reply("It is Paris."),
    )
    result = await play(model_server, lead)

    assert check_completed(result) == [TextBlock(text="It is Paris.")]
    [completed] = support.payloads(result, ToolCallCompleted)
    assert (completed.tool, completed.result_preview) == ("Researcher", "Paris")


async def test_agent_model_is_honoured_and_others_use_openai_model(
    model_server: LoopbackModelServer,
) -> None:
    special = Agent(name="Special", instructions="x", model="special-model-1")
    plain = Agent(name="Plain", instructions="y")
    model_server.script.add(reply("a"), reply("b"))
    await play(model_server, special)
    await play(model_server, plain, OPENAI_MODEL="deck-default-model")

    assert [r.model for r in model_server.model_requests] == [
        "special-model-1",
        "deck-default-model",
    ]


async def test_structured_output_closes_the_output_as_a_data_block(
    model_server: LoopbackModelServer,
) -> None:
    class Invoice(BaseModel):
        number: str
        total: float

    model_server.script.add(structured({"number": "A-1", "total": 12.5}))
    agent = Agent(name="Extract", instructions="Extract.", output_type=Invoice)
    result = await play(model_server, agent)

    assert check_completed(result) == [DataBlock(data={"number": "A-1", "total": 12.5})]
    body = model_server.model_requests[0].body
    assert body["text"]["format"]["type"] == "json_schema"


async def test_usage_on_run_completed_is_the_sum_of_every_usage_reported(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(
        tool_call("get_weather", {"city": "Oslo"}, usage=ScriptedUsage(7, 3)),
        reply("cold", usage=ScriptedUsage(11, 2)),
    )
    result = await play(
        model_server, Agent(name="W", instructions="x", tools=[get_weather]), chat=True
    )

    reported = [p.usage for p in support.payloads(result, UsageReported)]
    assert reported == [
        Usage(requests=1, input_tokens=7, output_tokens=3, total_tokens=10),
        Usage(requests=1, input_tokens=11, output_tokens=2, total_tokens=13),
    ]
    completed = result.last.payload
    assert isinstance(completed, RunCompleted)
    assert completed.usage == Usage(requests=2, input_tokens=18, output_tokens=5, total_tokens=23)


async def test_text_arrives_as_one_delta_per_token_and_thoughts_as_thought_deltas(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(reply(["Hel", "lo", "!"], reasoning="think first"))
    result = await play(model_server, Agent(name="T", instructions="x"))

    deltas = support.payloads(result, TextDelta)
    assert [d.text for d in deltas] == ["Hel", "lo", "!"]
    assert "".join(t.text for t in support.payloads(result, ThoughtDelta)) == "think first"
    [message] = support.payloads(result, MessageCompleted)
    assert message.text == "Hello!"
    assert {d.message_id for d in deltas} == {message.message_id}


# --------------------------------------------------------------------------- generated tools


async def test_planning_records_each_plan_update_between_the_calls_events(
    model_server: LoopbackModelServer,
) -> None:
    plan = {
        "items": [
            {"title": "read the ticket", "status": "completed"},
            {"title": "draft the answer", "status": "in_progress"},
        ]
    }
    model_server.script.add(tool_call("update_plan", plan, call_id="p1"), reply("on it"))
    result = await play(model_server, Agent(name="Planner", instructions="x", planning=True))

    check_completed(result)
    assert support.kinds(result)[1:5] == [
        "usage.reported",
        "tool.call.started",
        "plan.updated",
        "tool.call.completed",
    ]
    [updated] = support.payloads(result, PlanUpdated)
    assert [(i.title, i.status) for i in updated.items] == [
        ("read the ticket", "completed"),
        ("draft the answer", "in_progress"),
    ]
    assert "update_plan" in model_server.model_requests[0].tool_names


async def test_load_skill_returns_the_skill_body(
    model_server: LoopbackModelServer, tmp_path: Path
) -> None:
    skill_dir = tmp_path / "refunds"
    skill_dir.mkdir()
    (skill_dir / "SKILL.md").write_text(
        "---\nname: refunds\ndescription: How to issue a refund.\n---\n"
        "Refunds over 100 EUR need a manager.\n",
        encoding="utf-8",
    )
    agent = Agent(name="Support", instructions="Help.")
    catalog = Catalog(agents=[agent], skills=Skills(tmp_path))
    model_server.script.add(tool_call("load_skill", {"name": "refunds"}, call_id="s1"), reply("ok"))
    result = await play(model_server, agent, catalog=catalog)

    check_completed(result)
    assert support.tool_output_sent(model_server, "s1") == "Refunds over 100 EUR need a manager."
    [offered] = model_server.model_requests[0].body["tools"]
    assert "refunds: How to issue a refund." in offered["description"]


# --------------------------------------------------------------------------- hooks


async def test_hooks_are_called_with_the_arguments_they_declare(
    model_server: LoopbackModelServer,
) -> None:
    calls: list[tuple[str, Any]] = []

    class Audit:
        def on_start(self, agent: str) -> None:
            calls.append(("start", agent))

        async def on_tool_end(self, tool: str, result: str, ctx: ToolCtx[dict[str, str]]) -> None:
            calls.append(("tool_end", (tool, result, ctx.data["user"])))

    model_server.script.add(tool_call("get_weather", {"city": "Rome"}), reply("warm"))
    agent = Agent(name="Audited", instructions="x", tools=[get_weather], hooks=Audit())
    async with support.opened(support.make_engine(model_server)) as engine:
        result = await drive(engine, make_invocation(engine, agent, "hi", context={"user": "u1"}))

    check_completed(result)
    assert calls == [("start", "Audited"), ("tool_end", ("get_weather", "sunny in Rome", "u1"))]


async def test_a_raising_hook_fails_the_run_naming_the_hook(
    model_server: LoopbackModelServer,
) -> None:
    class Broken:
        def on_start(self) -> None:
            raise ValueError("hook secret")

    model_server.script.add(reply("never"))
    result = await play(model_server, Agent(name="H", instructions="x", hooks=Broken()))

    failed = result.last.payload
    assert isinstance(failed, RunFailed)
    assert (failed.error_code, failed.where) == (ErrorCode.ENGINE_ERROR, "Broken.on_start")
    assert "hook secret" not in failed.message


@pytest.mark.parametrize("chat", [False, True], ids=["responses", "chat"])
async def test_the_same_tool_round_trip_works_over_both_apis(
    model_server: LoopbackModelServer, chat: bool
) -> None:
    model_server.script.add(tool_call("get_weather", {"city": "Lima"}), reply("mild"))
    result = await play(
        model_server, Agent(name="W", instructions="x", tools=[get_weather]), chat=chat
    )

    assert check_completed(result) == [TextBlock(text="mild")]
    assert [r.api for r in model_server.model_requests] == ["chat" if chat else "responses"] * 2
