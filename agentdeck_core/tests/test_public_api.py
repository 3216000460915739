"""The public import surface: every documented name imports from where the spec puts it, and
each 4.x spelling is the very same object as its 5.x name (an alias, never a second copy)."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

import agentdeck


def test_every_name_in_all_imports_from_agentdeck() -> None:
    for name in agentdeck.__all__:
        assert getattr(agentdeck, name) is not None, name


def test_the_4x_spellings_are_aliases_of_the_5x_names() -> None:
    errors = importlib.import_module("agentdeck.errors")

    assert agentdeck.Context is agentdeck.ToolCtx
    assert errors.ContextTypeError is agentdeck.ContextTypeError


@pytest.fixture
def fresh_shim(monkeypatch: pytest.MonkeyPatch) -> None:
    """``agentdeck.core`` not imported yet (the originals come back after the test)."""
    for name in ("agentdeck.core", "agentdeck.core.ports"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.delattr(agentdeck, "core", raising=False)


@pytest.mark.usefixtures("fresh_shim")
def test_the_4x_block_import_warns_once_naming_the_5x_import_and_gives_the_same_classes() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from agentdeck.core import ImageBlock, TextBlock  # the 4.x spelling, as the spec has it

    assert [warning.category for warning in caught] == [DeprecationWarning]
    assert "use `from agentdeck import ImageBlock`" in str(caught[0].message)
    assert caught[0].filename == __file__  # it points at the importing line, not at the shim
    assert ImageBlock is agentdeck.ImageBlock and TextBlock is agentdeck.TextBlock
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        import agentdeck.core as core

        blocks = [getattr(core, name) for name in core.__all__]
    assert again == []  # warned once; the names are plain attributes from then on
    assert blocks == [getattr(agentdeck, name) for name in core.__all__]


@pytest.mark.usefixtures("fresh_shim")
def test_the_4x_observer_port_import_warns_once_naming_observer() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from agentdeck.core.ports import EventSinkPort  # imports agentdeck.core first

    assert [warning.category for warning in caught] == [DeprecationWarning]
    assert "use `from agentdeck import Observer`" in str(caught[0].message)
    assert caught[0].filename == __file__
    assert EventSinkPort is agentdeck.Observer


def test_a_name_the_4x_location_never_had_is_an_attribute_error() -> None:
    core = sys.modules.get("agentdeck.core") or importlib.import_module("agentdeck.core")
    with pytest.raises(AttributeError, match="Nope"):
        _ = core.Nope


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
