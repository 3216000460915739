"""agentdeck-langfuse installs as an AgentDeck plugin."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points, version

import agentdeck_langfuse


def test_package_imports_and_its_entry_point_is_declared() -> None:
    assert agentdeck_langfuse.__version__ == version("agentdeck-langfuse")

    (entry_point,) = [ep for ep in entry_points(group="agentdeck") if ep.name == "langfuse"]
    assert entry_point.value == "agentdeck_langfuse.plugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "agentdeck-langfuse"
    assert entry_point.load() is importlib.import_module("agentdeck_langfuse.plugin")
