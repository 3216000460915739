"""The public import surface: every documented name imports from where the spec puts it, and
each 4.x spelling is the very same object as its 5.x name (an alias, never a second copy)."""

from __future__ import annotations

import importlib

import agentdeck


def test_every_name_in_all_imports_from_agentdeck() -> None:
    for name in agentdeck.__all__:
        assert getattr(agentdeck, name) is not None, name


def test_the_4x_spellings_are_aliases_of_the_5x_names() -> None:
    core = importlib.import_module("agentdeck.core")
    core_ports = importlib.import_module("agentdeck.core.ports")
    errors = importlib.import_module("agentdeck.errors")

    assert agentdeck.Context is agentdeck.ToolCtx
    assert core_ports.EventSinkPort is agentdeck.Observer
    for block in ("TextBlock", "ImageBlock", "AudioBlock", "ResourceBlock", "DataBlock"):
        assert getattr(core, block) is getattr(agentdeck, block)
    assert errors.ContextTypeError is agentdeck.ContextTypeError


def test_the_plugin_marker_is_exported_from_the_package_root() -> None:
    from agentdeck.plugins.hookspecs import hookimpl

    assert agentdeck.hookimpl is hookimpl


def test_a_plugin_name_resolves_from_the_plugin_or_names_the_distribution() -> None:
    import importlib.util

    from agentdeck.errors import PluginNotInstalledError

    if importlib.util.find_spec("agentdeck_langgraph") is None:
        try:
            _ = agentdeck.Workflow
        except PluginNotInstalledError as missing:
            assert missing.distribution == "agentdeck-langgraph"
            assert isinstance(missing, ImportError)
        else:  # pragma: no cover - the branch above is the one taken here
            raise AssertionError("expected PluginNotInstalledError")
    else:
        from agentdeck_langgraph import Workflow

        assert agentdeck.Workflow is Workflow
