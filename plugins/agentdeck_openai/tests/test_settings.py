"""The plugin registers its settings sections through the core's hook, and they read the deck's
environment like the core's own sections."""

from __future__ import annotations

import warnings

import pytest

from agentdeck.errors import ConfigError
from agentdeck.plugins.host import PluginHost, PluginWarning
from agentdeck.settings import Settings
from agentdeck_openai.settings import OpenAISettings, RunnerSettings, SessionSettings


def test_its_sections_are_registered_through_the_entry_point() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        host = PluginHost.discover(env={})
    [info] = [p for p in host.plugins() if p.name == "openai"]
    assert info.distribution == "agentdeck-openai"
    assert sorted(info.provides["settings"]) == ["openai", "runner", "session"]


def test_its_sections_read_the_deck_environment() -> None:
    settings = Settings(
        env={
            "OPENAI_MODEL": "m-1",
            "AGENTDECK_SESSION_REDIS_KEY_PREFIX": "chat",
            "AGENTDECK_RUNNER_MAX_TURNS": "7",
        }
    )
    assert settings.section(OpenAISettings).model == "m-1"
    assert settings.section(SessionSettings).redis_key_prefix == "chat"
    assert settings.section(RunnerSettings).max_turns == 7
    assert settings.section(RunnerSettings).sdk_tracing is False


def test_a_bad_value_is_a_config_error_naming_the_variable() -> None:
    with pytest.raises(ConfigError) as refused:
        Settings(env={"AGENTDECK_RUNNER_MAX_TURNS": "0"}).section(RunnerSettings)
    assert refused.value.setting == "AGENTDECK_RUNNER_MAX_TURNS"
    assert "AGENTDECK_RUNNER_MAX_TURNS" in str(refused.value)
