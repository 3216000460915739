"""``Agent``: what the declaration checks when constructed, and what it offers an engine."""

from typing import Any

import pytest

from agentdeck.authoring.agents import Agent
from agentdeck.authoring.context import ToolCtx
from agentdeck.authoring.tools import Tool, tool
from agentdeck.errors import ConfigError, ContextTypeError


class Calendar:
    owner = "Ada"


def search(query: str) -> str:
    """Search the documentation."""
    return query


def delete_page(slug: str) -> str:
    """Delete a page."""
    return slug


def test_tools_are_normalized_to_tool_declarations() -> None:
    agent = Agent(name="Jack", tools=[search])

    assert isinstance(agent.tools[0], Tool)
    assert agent.tool_names == ("search",)


@pytest.mark.parametrize("name", ["", "  ", " Jack"])
def test_a_blank_or_padded_name_is_refused(name: str) -> None:
    with pytest.raises(ConfigError, match="name"):
        Agent(name=name)


def test_a_single_string_where_a_list_belongs_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"skills=\['pdf'\]"):
        Agent(name="Jack", skills="pdf")


def test_the_declaration_is_frozen_and_clone_derives_a_variant() -> None:
    agent = Agent(name="Jack", model="gpt-4o")

    with pytest.raises(AttributeError):
        agent.model = "other"  # type: ignore[misc]
    variant = agent.clone(name="Jill")
    assert (variant.name, variant.model) == ("Jill", "gpt-4o")


def test_model_settings_are_read_only() -> None:
    agent = Agent(name="Jack", model_settings={"temperature": 0.2})

    with pytest.raises(TypeError):
        agent.model_settings["temperature"] = 1.0  # type: ignore[index]


def test_interrupt_on_must_name_a_tool_of_the_agent() -> None:
    with pytest.raises(ConfigError, match=r"'delete'.*delete_page, search") as refused:
        Agent(name="Jack", tools=[search, delete_page], interrupt_on=["delete"])

    assert refused.value.accepted == ("delete_page", "search")


def test_interrupt_on_is_not_checked_when_tools_arrive_from_mcp() -> None:
    agent = Agent(name="Jack", mcp_servers=["files"], interrupt_on=["files_write"])

    assert agent.needs_approval("files_write")


def test_needs_approval_reads_interrupt_on_and_the_tool_policy() -> None:
    guarded = tool(needs_approval=True)(delete_page)
    agent = Agent(name="Jack", tools=[search, guarded, Tool.from_function(len, name="count")])
    listed = Agent(name="Jill", tools=[search], interrupt_on=["search"])

    assert agent.needs_approval("delete_page")
    assert not agent.needs_approval("search")
    assert listed.needs_approval("search")


def test_hooks_must_be_an_instance() -> None:
    class Hooks:
        async def on_start(self) -> None: ...

    with pytest.raises(ConfigError, match=r"hooks=Hooks\(\)"):
        Agent(name="Jack", hooks=Hooks)


def test_context_sites_cover_tools_instructions_and_hooks() -> None:
    def lookup(day: str, ctx: ToolCtx[Calendar]) -> str:
        """Look up."""
        return day

    def brief(ctx: ToolCtx[Calendar]) -> str:
        return "hi"

    class Hooks:
        async def on_start(self, ctx: ToolCtx[Calendar]) -> None: ...

        async def on_end(self, output: Any) -> None: ...

    agent = Agent(name="Jack", tools=[lookup, search], instructions=brief, hooks=Hooks())

    assert [site for site, _ in agent.context_sites()] == [
        "tool 'lookup'",
        "instructions callable 'brief'",
        "hook method 'Hooks.on_start'",
    ]


async def test_static_instructions_render_as_themselves() -> None:
    assert await Agent(name="Jack", instructions="Be brief.").render_instructions(None) == (
        "Be brief."
    )


async def test_an_instructions_callable_receives_the_context_and_the_agent() -> None:
    async def brief(ctx: ToolCtx[Calendar], agent: Agent) -> str:
        return f"{agent.name} works for {ctx.data.owner}"

    agent = Agent(name="Jack", instructions=brief)

    assert await agent.render_instructions(ToolCtx(Calendar())) == "Jack works for Ada"


async def test_an_instructions_callable_without_its_context_refuses_by_name() -> None:
    def brief(ctx: ToolCtx[Calendar]) -> str:
        return "hi"

    with pytest.raises(ContextTypeError, match=r"'brief'.*carries NoneType"):
        await Agent(name="Jack", instructions=brief).render_instructions(None)


def test_an_instructions_callable_taking_more_than_the_agent_is_refused() -> None:
    def brief(run_context: Any, agent: Any) -> str:
        return "hi"

    with pytest.raises(ConfigError, match="run_context, agent"):
        Agent(name="Jack", instructions=brief)


def test_handoffs_and_subagents_accept_names_and_objects() -> None:
    helper = Agent(name="Helper")
    agent = Agent(name="Lead", handoffs=[helper, "Other"], subagents=["Lookup"])

    assert agent.handoff_names == ("Helper", "Other")
    assert agent.subagent_names == ("Lookup",)
    with pytest.raises(ConfigError, match="handoffs="):
        Agent(name="Lead", handoffs=[42])  # type: ignore[list-item]


# --------------------------------------------------------------------------- engine-checked fields


def test_tool_errors_is_model_or_fail() -> None:
    assert Agent(name="a").tool_errors == "model"
    assert Agent(name="a", tool_errors="fail").tool_errors == "fail"
    with pytest.raises(ConfigError) as refused:
        Agent(name="a", tool_errors="raise")  # type: ignore[arg-type]
    assert refused.value.setting == "tool_errors"


def test_engine_objects_are_kept_as_given_for_the_engine_to_check() -> None:
    guardrail, hooks = object(), object()
    agent = Agent(
        name="a",
        input_guardrails=[guardrail],
        output_guardrails=(guardrail,),
        run_hooks=hooks,
        tool_use_behavior={"stop_at_tool_names": ["x"]},
    )
    assert agent.input_guardrails == agent.output_guardrails == (guardrail,)
    assert agent.run_hooks is hooks
    assert dict(agent.tool_use_behavior) == {"stop_at_tool_names": ["x"]}  # type: ignore[call-overload]


@pytest.mark.parametrize(
    ("changes", "setting"),
    [
        ({"tool_use_behavior": "stop_now"}, "tool_use_behavior"),
        ({"tool_use_behavior": 3}, "tool_use_behavior"),
        ({"input_guardrails": "no_homework"}, "input_guardrails"),
        ({"run_hooks": type("Hooks", (), {})}, "run_hooks"),
    ],
    ids=["an unknown behaviour name", "not a behaviour", "a string for a list", "a class"],
)
def test_what_the_declaration_can_tell_is_wrong_is_refused_at_once(
    changes: dict[str, Any], setting: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        Agent(name="a", **changes)
    assert refused.value.setting == setting
