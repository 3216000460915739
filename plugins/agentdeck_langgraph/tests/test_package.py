"""agentdeck-langgraph installs as an AgentDeck plugin."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from importlib.metadata import entry_points, version

import agentdeck_langgraph


def test_package_imports_and_its_entry_point_is_declared() -> None:
    assert agentdeck_langgraph.__version__ == version("agentdeck-langgraph")

    (entry_point,) = [ep for ep in entry_points(group="agentdeck") if ep.name == "langgraph"]
    assert entry_point.value == "agentdeck_langgraph.plugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "agentdeck-langgraph"
    assert entry_point.load() is importlib.import_module("agentdeck_langgraph.plugin")


# Run in a fresh interpreter: this test process has imported the SDK long ago.
_LOAD_THEN_BUILD = """
import json, sys
from agentdeck.plugins.host import ENGINES, PluginHost
import agentdeck_langgraph.plugin as plugin

host = PluginHost.from_plugins(("langgraph", plugin))
sdks = ['langgraph', 'langchain_core']
loaded = [name for name in sdks if name in sys.modules]
names = host.names(ENGINES)
host.engine("langgraph")
built = [name for name in sdks if name in sys.modules]
print(json.dumps({"at_load": loaded, "names": names, "at_build": built}))
"""


def test_loading_the_plugin_imports_no_sdk_until_a_deck_builds_its_engine() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_THEN_BUILD], capture_output=True, text=True, check=True
    )
    seen = json.loads(done.stdout)

    assert seen["at_load"] == []
    assert seen["names"] == ["langgraph"]
    assert seen["at_build"] == ["langgraph", "langchain_core"]
