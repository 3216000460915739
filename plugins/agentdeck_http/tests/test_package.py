"""agentdeck-http installs as an AgentDeck plugin."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points, version

import agentdeck_http


def test_package_imports_and_its_entry_point_is_declared() -> None:
    assert agentdeck_http.__version__ == version("agentdeck-http")

    (entry_point,) = [ep for ep in entry_points(group="agentdeck") if ep.name == "http"]
    assert entry_point.value == "agentdeck_http.plugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "agentdeck-http"
    assert entry_point.load() is importlib.import_module("agentdeck_http.plugin")


def test_the_binding_is_registered_as_http_and_resolves_from_agentdeck_bindings() -> None:
    from agentdeck.bindings import Native as Resolved
    from agentdeck.plugins.host import PluginHost

    assert Resolved is agentdeck_http.Native
    built = PluginHost.discover().binding("http", path="/api")
    assert isinstance(built, agentdeck_http.Native)
    assert built.mount_path == "/api"
