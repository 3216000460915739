"""agentdeck-otel installs as an AgentDeck plugin and is reachable where the docs say."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from importlib.metadata import entry_points, version

import agentdeck_otel
from agentdeck.plugins.host import PluginHost, PluginWarning
from agentdeck_otel import OTelObserver


def test_package_imports_and_its_entry_point_is_declared() -> None:
    assert agentdeck_otel.__version__ == version("agentdeck-otel")

    (entry_point,) = [ep for ep in entry_points(group="agentdeck") if ep.name == "otel"]
    assert entry_point.value == "agentdeck_otel.plugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "agentdeck-otel"
    assert entry_point.load() is importlib.import_module("agentdeck_otel.plugin")


def test_it_registers_its_settings_section_and_observer() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        host = PluginHost.discover(env={})
    [info] = [p for p in host.plugins() if p.name == "otel"]
    assert info.distribution == "agentdeck-otel"
    assert info.provides["settings"] == ["otel"]
    assert info.provides["observers"] == ["otel"]
    assert isinstance(host.observer("otel", endpoint="http://127.0.0.1:4318"), OTelObserver)


def test_agentdeck_observers_resolves_it_from_the_installed_plugin() -> None:
    from agentdeck.observers import OTelObserver as resolved

    assert resolved is OTelObserver


def test_loading_the_plugin_and_constructing_the_observer_import_no_sdk() -> None:
    code = (
        "import sys, agentdeck_otel.plugin\n"
        "from agentdeck_otel import OTelObserver\n"
        "OTelObserver('http://127.0.0.1:4318')\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] == 'opentelemetry']\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
