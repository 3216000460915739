"""``Agent.run()`` in the core: it finds the installed engine that runs agents headless (a
``HeadlessEngine``) through the plugin host, and without one says which distribution to install.
No engine SDK is involved: the engines here are the core's own test doubles."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

import agentdeck
from agentdeck import Agent, AgentDeckError, PluginNotInstalledError
from agentdeck.memory import plugin as memory_plugin
from agentdeck.native import plugin as native_plugin
from agentdeck.plugins.hookspecs import RegisterEngine
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import Engine, HeadlessEngine, Invocable, Invocation
from agentdeck.settings import Settings

helper = Agent(name="helper", instructions="Be brief.")


class DeckOnly(Engine):
    """An engine for agents that offers no headless runs."""

    name: ClassVar[str] = "deck-only"

    def accepts(self, definition: object) -> bool:
        return isinstance(definition, Agent)

    def compile(self, definition: object) -> Invocable:
        raise NotImplementedError  # a deck is never built here

    def play(self, invocation: Invocation) -> Any:
        raise NotImplementedError


class AgentsHeadless(DeckOnly, HeadlessEngine):
    """An engine for agents that runs them headless; every headless run it is asked for is
    remembered, and answered with a marker object."""

    name: ClassVar[str] = "headless"
    runs: ClassVar[list[tuple[Engine, object, Any, Any]]] = []

    async def run_headless(self, definition: object, input: Any, *, session: Any = None) -> Any:
        AgentsHeadless.runs.append((self, definition, input, session))
        return ("sdk result for", getattr(definition, "name", None))


class WorkflowsOnly(AgentsHeadless):
    """Offers headless runs, but not of agents."""

    name: ClassVar[str] = "workflows-only"

    def accepts(self, definition: object) -> bool:
        return False


def engine_plugin(engine: type[Engine]) -> tuple[str, object]:
    class Plugin:
        @agentdeck.hookimpl
        def agentdeck_register_engines(self, register: RegisterEngine) -> None:
            register(engine)

    return engine.name, Plugin()


@pytest.fixture(autouse=True)
def _fresh_runs() -> None:
    AgentsHeadless.runs.clear()


async def test_without_an_agent_engine_it_raises_plugin_not_installed_naming_the_distribution() -> (
    None
):
    host = PluginHost.from_plugins(("memory", memory_plugin), ("native", native_plugin))

    with pytest.raises(PluginNotInstalledError) as missing:
        await helper.run("hi", settings=Settings(env={}), plugins=host)

    error = missing.value
    assert isinstance(error, ImportError) and isinstance(error, AgentDeckError)
    assert error.distribution == "agentdeck-openai"
    assert "agentdeck.Agent.run is provided by the agentdeck-openai plugin" in str(error)
    assert "pip install agentdeck-openai" in str(error)


async def test_an_engine_for_agents_that_is_no_headless_engine_does_not_count() -> None:
    host = PluginHost.from_plugins(engine_plugin(DeckOnly))

    with pytest.raises(PluginNotInstalledError, match="agentdeck-openai"):
        await helper.run("hi", settings=Settings(env={}), plugins=host)
    assert AgentsHeadless.runs == []


async def test_a_headless_runner_whose_engine_does_not_accept_agents_is_passed_over() -> None:
    host = PluginHost.from_plugins(engine_plugin(WorkflowsOnly))

    with pytest.raises(PluginNotInstalledError):
        await helper.run("hi", settings=Settings(env={}), plugins=host)
    assert AgentsHeadless.runs == []


async def test_the_engine_that_accepts_the_agent_runs_it_headless_with_the_given_settings() -> None:
    host = PluginHost.from_plugins(engine_plugin(WorkflowsOnly), engine_plugin(AgentsHeadless))
    settings = Settings(env={"AGENTDECK_STATE": "memory://headless-test"})
    session = object()

    result = await helper.run("hi", settings=settings, plugins=host, session=session)

    assert result == ("sdk result for", "helper")
    [(engine, agent, given, given_session)] = AgentsHeadless.runs
    assert type(engine) is AgentsHeadless
    assert engine.request.settings is settings
    assert engine.request.catalog is None  # headless: no deck, so no catalog
    assert agent is helper
    assert given == "hi"
    assert given_session is session


async def test_without_settings_it_reads_them_as_a_deck_does(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no config.yaml here
    monkeypatch.setenv("AGENTDECK_STATE", "memory://from-the-environment")
    host = PluginHost.from_plugins(engine_plugin(AgentsHeadless))

    await helper.run("hi", plugins=host)

    [(engine, *_)] = AgentsHeadless.runs
    assert engine.request.settings is not None
    assert engine.request.settings.state_url == "memory://from-the-environment"
