"""agentdeck-langgraph installs as an AgentDeck plugin."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points, version

import agentdeck_langgraph


def test_package_imports_and_its_entry_point_is_declared() -> None:
    assert agentdeck_langgraph.__version__ == version("agentdeck-langgraph")

    (entry_point,) = [ep for ep in entry_points(group="agentdeck") if ep.name == "langgraph"]
    assert entry_point.value == "agentdeck_langgraph.plugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "agentdeck-langgraph"
    assert entry_point.load() is importlib.import_module("agentdeck_langgraph.plugin")
