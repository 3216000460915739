"""Compiling agents: what is refused at build (naming what was wrong), and what reaches the
model's request from settings and declarations. Compiling touches no network."""

from __future__ import annotations

import warnings
from typing import Any

import engine_support as support  # loaded by conftest.py
import pytest
from agents import Model, ModelProvider, TracingProcessor, function_tool, set_trace_processors
from agents.testing import ScriptedModel, assistant_message

from agentdeck import Agent
from agentdeck.authoring.catalog import Catalog
from agentdeck.authoring.tools import tool
from agentdeck.authoring.workflows import workflow
from agentdeck.errors import ConfigError
from agentdeck.plugins.host import PluginHost, PluginWarning
from agentdeck.ports import EngineRequest
from agentdeck.settings import Settings
from agentdeck.testing.engine_kit import check_completed, drive, make_invocation
from agentdeck_openai.dispatch_gate import declares_approval
from agentdeck_openai.engine import OpenAIEngine
from agentdeck_openai.testing import LoopbackModelServer, reply, tool_call


def engine_with(**env: str) -> OpenAIEngine:
    return OpenAIEngine(EngineRequest(settings=Settings(env=env)))


def test_an_agent_without_any_model_is_refused_naming_it() -> None:
    with pytest.raises(ConfigError, match="agent 'Nameless' has no model") as refused:
        engine_with().compile(Agent(name="Nameless", instructions="x"))
    assert refused.value.setting == "OPENAI_MODEL"


def test_compiling_twice_gives_the_same_invocable_and_only_agents_are_accepted() -> None:
    engine = engine_with(OPENAI_MODEL="m")
    agent = Agent(name="A", instructions="x")
    first, again = engine.compile(agent), engine.compile(agent)
    assert first.code_digest == again.code_digest and first.kind == "agent"
    assert engine.accepts(agent) and not engine.accepts("A")
    changed = engine_with(OPENAI_MODEL="m").compile(agent.clone(instructions="y"))
    assert changed.code_digest != first.code_digest


def test_unknown_model_settings_are_refused_listing_what_is_accepted() -> None:
    agent = Agent(name="Hot", instructions="x", model_settings={"temprature": 0.2})
    with pytest.raises(ConfigError, match="'temprature'") as refused:
        engine_with(OPENAI_MODEL="m").compile(agent)
    assert refused.value.accepted is not None and "temperature" in refused.value.accepted


def test_a_workflow_subagent_the_deck_lacks_is_refused_with_what_to_do_instead() -> None:
    @workflow
    async def refund(order_id: str) -> str:
        return order_id

    agent = Agent(name="Lead", instructions="x", subagents=[refund])
    with pytest.raises(ConfigError, match=r"'refund' in subagents=.*Deck\(workflows=") as refused:
        engine_with(OPENAI_MODEL="m").compile(agent)
    assert refused.value.setting == "subagents"


def _sdk_tool(engine: OpenAIEngine, agent: Agent, name: str) -> Any:
    compiled = engine.compile(agent).compiled
    [found] = [t for t in compiled.sdk_agent.tools if t.name == name]
    return found


def test_catalog_subagents_compile_to_child_run_tools_with_the_targets_schema() -> None:
    @workflow
    async def refund(order_id: str, amount: float = 0.0) -> str:
        """Refund an order."""
        return order_id

    researcher = Agent(name="Research Desk", instructions="x", description="Finds facts.")
    lead = Agent(name="Lead", instructions="x", subagents=["Research Desk", refund])
    catalog = Catalog(agents=[lead, researcher], workflows=[refund])
    engine = OpenAIEngine(
        EngineRequest(settings=Settings(env={"OPENAI_MODEL": "m"}), catalog=catalog)
    )

    compiled = engine.compile(lead).compiled
    assert {name: (t.name, t.kind) for name, t in compiled.child_tools.items()} == {
        "Research_Desk": ("Research Desk", "agent"),
        "refund": ("refund", "workflow"),
    }
    assert list(compiled.graph) == ["Lead"], "a child run is not part of the agent's graph"
    desk = _sdk_tool(engine, lead, "Research_Desk")
    assert desk.description == "Finds facts."
    assert desk.params_json_schema["properties"] == {
        "input": {"type": "string", "description": "What to ask the agent, in full."}
    }
    assert desk.strict_json_schema is True
    flow = _sdk_tool(engine, lead, "refund")
    assert flow.description == "Refund an order."
    assert flow.params_json_schema["required"] == ["order_id"]
    assert set(flow.params_json_schema["properties"]) == {"order_id", "amount"}
    assert flow.strict_json_schema is False, "an optional parameter must stay optional"


def test_an_inline_subagent_stays_an_in_process_agent_tool() -> None:
    helper = Agent(name="Helper", instructions="x")
    lead = Agent(name="Lead", instructions="x", subagents=[helper])
    catalog = Catalog(agents=[lead])
    engine = OpenAIEngine(
        EngineRequest(settings=Settings(env={"OPENAI_MODEL": "m"}), catalog=catalog)
    )

    compiled = engine.compile(lead).compiled
    assert compiled.child_tools == {}
    assert list(compiled.graph) == ["Lead", "Helper"]
    assert not declares_approval(_sdk_tool(engine, lead, "Helper"))


def test_a_tool_named_like_a_generated_one_is_refused() -> None:
    @tool
    def update_plan(text: str) -> str:
        """Mine."""
        return text

    agent = Agent(name="P", instructions="x", tools=[update_plan], planning=True)
    with pytest.raises(ConfigError, match=r"two tools named 'update_plan'.*planning=True"):
        engine_with(OPENAI_MODEL="m").compile(agent)


def test_a_misspelt_hook_is_refused_listing_the_hooks() -> None:
    class Hooks:
        def on_tool_stat(self) -> None: ...

    with pytest.raises(ConfigError, match=r"Hooks\.on_tool_stat is not a hook") as refused:
        engine_with(OPENAI_MODEL="m").compile(Agent(name="H", instructions="x", hooks=Hooks()))
    assert refused.value.accepted is not None and "on_tool_start" in refused.value.accepted


def test_a_hook_asking_for_an_argument_it_is_not_given_is_refused() -> None:
    class Hooks:
        def on_start(self, agent: str, weather: str) -> None: ...

    with pytest.raises(ConfigError, match="takes 'weather'"):
        engine_with(OPENAI_MODEL="m").compile(Agent(name="H", instructions="x", hooks=Hooks()))


def test_an_unknown_skill_or_mcp_server_name_is_refused() -> None:
    engine = OpenAIEngine(
        EngineRequest(settings=Settings(env={"OPENAI_MODEL": "m"}), catalog=Catalog())
    )
    with pytest.raises(ConfigError, match="skill 'refunds'"):
        engine.compile(Agent(name="S", instructions="x", skills=["refunds"]))
    with pytest.raises(ConfigError, match="MCP server 'files'"):
        engine.compile(Agent(name="M", instructions="x", mcp_servers=["files"]))


async def test_runner_settings_and_agent_model_settings_reach_the_request(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(reply("a"), reply("b"))
    engine = support.make_engine(
        model_server, AGENTDECK_RUNNER_TEMPERATURE="0.3", AGENTDECK_RUNNER_MAX_TOKENS="99"
    )
    plain = Agent(name="Plain", instructions="x")
    tuned = Agent(name="Tuned", instructions="x", model_settings={"temperature": 0.9, "top_p": 0.5})
    async with support.opened(engine):
        for agent in (plain, tuned):
            check_completed(await drive(engine, make_invocation(engine, agent, "hi")))

    first, second = (r.body for r in model_server.model_requests)
    assert (first["temperature"], first["max_output_tokens"]) == (0.3, 99)
    assert (second["temperature"], second["top_p"], second["max_output_tokens"]) == (0.9, 0.5, 99)


async def test_an_agents_sdk_function_tool_is_kept_and_gains_the_dispatch_safe_point(
    model_server: LoopbackModelServer,
) -> None:
    @function_tool
    def native_add(a: int, b: int) -> int:
        """Add."""
        return a + b

    model_server.script.add(tool_call("native_add", {"a": 2, "b": 3}, call_id="n1"), reply("5"))
    agent = Agent(name="Native", instructions="x", tools=[native_add])
    async with support.opened(support.make_engine(model_server)) as engine:
        result = await drive(engine, make_invocation(engine, agent, "2+3"))

    check_completed(result)
    assert support.tool_output_sent(model_server, "n1") == "5"
    assert "tool_dispatch" in [str(point) for point in result.safe_points]


class TraceRecorder(TracingProcessor):
    def __init__(self) -> None:
        self.workflows: list[str] = []

    def on_trace_start(self, trace: Any) -> None:
        self.workflows.append(trace.name)

    def on_trace_end(self, trace: Any) -> None: ...

    def on_span_start(self, span: Any) -> None: ...

    def on_span_end(self, span: Any) -> None: ...

    def shutdown(self) -> None: ...

    def force_flush(self) -> None: ...


async def test_sdk_traces_are_off_unless_asked_and_carry_the_workflow_name(
    model_server: LoopbackModelServer,
) -> None:
    recorder = TraceRecorder()
    set_trace_processors([recorder])
    model_server.script.add(reply("a"), reply("b"))
    agent = Agent(name="T", instructions="x")
    try:
        for env in ({}, {"AGENTDECK_RUNNER_SDK_TRACING": "true"}):
            engine = support.make_engine(
                model_server, AGENTDECK_RUNNER_WORKFLOW_NAME="billing-deck", **env
            )
            async with support.opened(engine):
                check_completed(await drive(engine, make_invocation(engine, agent, "hi")))
    finally:
        set_trace_processors([])
    assert recorder.workflows == ["billing-deck"]


def test_the_plugin_registers_the_engine_and_the_session_schemes() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        host = PluginHost.discover(env={})
    [info] = [p for p in host.plugins() if p.name == "openai"]
    assert info.provides["engines"] == ["openai"]
    assert sorted(info.provides["session_factories"]) == ["local", "redis", "rediss", "sqlite"]
    engines = host.engines(EngineRequest(settings=Settings(env={"OPENAI_MODEL": "m"})))
    [engine] = [e for e in engines if e.name == "openai"]
    assert isinstance(engine, OpenAIEngine)
    assert engine.config.openai.model == "m"


async def test_a_missing_api_key_fails_the_run_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    engine = engine_with(OPENAI_MODEL="m", OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    async with support.opened(engine):  # opening does not need the key
        result = await drive(engine, make_invocation(engine, Agent(name="K", instructions="x")))

    assert isinstance(result.raised, ConfigError)
    assert result.raised.setting == "OPENAI_API_KEY"
    assert result.last.kind == "run.failed"


async def test_a_given_model_provider_serves_the_model_calls() -> None:
    class Scripted(ModelProvider):
        def __init__(self) -> None:
            self.asked: list[str | None] = []
            self.model = ScriptedModel([[assistant_message("scripted hello")]])

        def get_model(self, model_name: str | None) -> Model:
            self.asked.append(model_name)
            return self.model

    provider = Scripted()
    engine = OpenAIEngine(
        EngineRequest(settings=Settings(env={"OPENAI_MODEL": "any"})), model_provider=provider
    )
    async with support.opened(engine):
        result = await drive(engine, make_invocation(engine, Agent(name="P", instructions="x")))

    assert check_completed(result)[0].text == "scripted hello"  # type: ignore[union-attr]
    assert provider.asked == ["any"]


def test_the_agents_sdks_default_model_is_used_when_openai_model_is_unset() -> None:
    agent = Agent(name="Plain", instructions="x")
    engine = engine_with(OPENAI_DEFAULT_MODEL="sdk-default-model")
    assert engine.config.default_model == "sdk-default-model"
    assert engine.compile(agent).kind == "agent"  # no "has no model" refusal


def test_openai_model_wins_over_the_agents_sdks_default_model() -> None:
    engine = engine_with(OPENAI_MODEL="ours", OPENAI_DEFAULT_MODEL="sdk-default-model")
    assert engine.config.default_model == "ours"
    from_file = OpenAIEngine(
        EngineRequest(
            settings=Settings(
                env={"OPENAI_DEFAULT_MODEL": "sdk-default-model"},
                config={"openai": {"model": "from-config"}},
            )
        )
    )
    assert from_file.config.default_model == "from-config"
