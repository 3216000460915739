"""The plugin registers its settings sections through the core's hook, and they read the deck's
environment like the core's own sections."""

from __future__ import annotations

import warnings

import pytest

from agentdeck.errors import ConfigError
from agentdeck.plugins.host import PluginHost, PluginWarning
from agentdeck.settings import Settings
from agentdeck_langgraph.settings import CheckpointSettings


def test_its_sections_are_registered_through_the_entry_point() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        host = PluginHost.discover(env={})
    [info] = [p for p in host.plugins() if p.name == "langgraph"]
    assert info.distribution == "agentdeck-langgraph"
    assert sorted(info.provides["settings"]) == ["checkpoint", "langgraph"]


def test_its_sections_read_the_deck_environment() -> None:
    settings = Settings(env={"AGENTDECK_CHECKPOINT": "sqlite:///cp.db"})
    assert settings.section(CheckpointSettings).url == "sqlite:///cp.db"
    assert Settings(env={}).section(CheckpointSettings).url is None


def test_a_bad_value_is_a_config_error_naming_the_variable() -> None:
    with pytest.raises(ConfigError) as refused:
        Settings(env={"AGENTDECK_CHECKPOINT": "not-a-url"}).section(CheckpointSettings)
    assert refused.value.setting == "AGENTDECK_CHECKPOINT"
    assert "AGENTDECK_CHECKPOINT" in str(refused.value)
