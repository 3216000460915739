"""The plugin registers its settings sections through the core's hook, and they read the deck's
environment like the core's own sections."""

from __future__ import annotations

import warnings

import pytest

from agentdeck.errors import ConfigError
from agentdeck.plugins.host import PluginHost, PluginWarning
from agentdeck.settings import Settings
from agentdeck_langfuse.settings import LangfuseSettings


def test_its_sections_are_registered_through_the_entry_point() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        host = PluginHost.discover(env={})
    [info] = [p for p in host.plugins() if p.name == "langfuse"]
    assert info.distribution == "agentdeck-langfuse"
    assert sorted(info.provides["settings"]) == ["langfuse"]


def test_its_sections_read_the_deck_environment() -> None:
    settings = Settings(env={"AGENTDECK_LANGFUSE_SAMPLE_RATE": "0.25"})
    assert settings.section(LangfuseSettings).sample_rate == 0.25
    assert settings.section(LangfuseSettings).public_key == ""


def test_a_bad_value_is_a_config_error_naming_the_variable() -> None:
    with pytest.raises(ConfigError) as refused:
        Settings(env={"AGENTDECK_LANGFUSE_SAMPLE_RATE": "2.0"}).section(LangfuseSettings)
    assert refused.value.setting == "AGENTDECK_LANGFUSE_SAMPLE_RATE"
    assert "AGENTDECK_LANGFUSE_SAMPLE_RATE" in str(refused.value)


def test_capture_and_its_cap_are_settings_too() -> None:
    section = Settings(
        env={"AGENTDECK_LANGFUSE_CAPTURE": "metadata", "AGENTDECK_LANGFUSE_MAX_BYTES": "1024"}
    ).section(LangfuseSettings)
    assert (section.capture, section.max_bytes) == ("metadata", 1024)


def test_an_unknown_capture_level_names_the_variable_and_the_levels() -> None:
    with pytest.raises(ConfigError) as refused:
        Settings(env={"AGENTDECK_LANGFUSE_CAPTURE": "all"}).section(LangfuseSettings)
    assert refused.value.setting == "AGENTDECK_LANGFUSE_CAPTURE"
    assert "metadata" in str(refused.value)
