"""agentdeck-openai installs as an AgentDeck plugin."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points, version

import agentdeck_openai


def test_package_imports_and_its_entry_point_is_declared() -> None:
    assert agentdeck_openai.__version__ == version("agentdeck-openai")

    (entry_point,) = [ep for ep in entry_points(group="agentdeck") if ep.name == "openai"]
    assert entry_point.value == "agentdeck_openai.plugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "agentdeck-openai"
    assert entry_point.load() is importlib.import_module("agentdeck_openai.plugin")
