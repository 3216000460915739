"""A deferred factory imports its module on first use and then behaves as the factory."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentdeck.errors import ConfigError
from agentdeck.plugins.deferred import Deferred


def test_calling_it_calls_the_target_and_attributes_are_the_targets() -> None:
    factory = Deferred("agentdeck.observers.file:FileObserver")

    from agentdeck.observers.file import FileObserver

    assert factory.load() is FileObserver
    assert factory.read == FileObserver.read  # an attribute, as a deck reads from_settings
    assert factory.__class__ is Deferred  # special names stay this object's
    with pytest.raises(AttributeError):
        _ = factory._private


def test_a_dotted_attribute_names_a_method() -> None:
    from agentdeck.memory.store import MemoryEventStore

    assert Deferred("agentdeck.memory.store:MemoryEventStore.from_request").load() == (
        MemoryEventStore.from_request
    )


@pytest.mark.parametrize(
    "target", ["agentdeck.no_such_module:Thing", "agentdeck.observers.file:NoSuchThing"]
)
def test_a_target_that_cannot_be_loaded_is_a_config_error_naming_it(target: str) -> None:
    with pytest.raises(ConfigError, match=target.split(":")[0]):
        Deferred(target)()


def test_a_target_without_an_attribute_is_refused_at_once() -> None:
    with pytest.raises(ConfigError, match=r"package\.module:attribute"):
        Deferred("agentdeck.observers.file")


def test_loading_the_core_plugins_imports_none_of_what_they_register() -> None:
    """A fresh interpreter (this one has imported them already), the core's plugins only."""
    code = (
        "import sys; from agentdeck.plugins.host import PluginHost; "
        "PluginHost.discover({'AGENTDECK_PLUGINS': 'bindings,memory,native,observers'}); "
        "print(sorted(m for m in ('agentdeck.observers.console', 'agentdeck.observers.file', "
        "'agentdeck.bindings.terminal', 'agentdeck.memory.store', 'agentdeck.memory.control') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_core_plugins_still_build_what_they_register() -> None:
    from agentdeck.bindings.terminal import Terminal
    from agentdeck.memory.store import MemoryEventStore
    from agentdeck.observers.console import ConsoleObserver
    from agentdeck.plugins.host import BINDINGS, PluginHost
    from agentdeck.ports import BackendRequest

    host = PluginHost.discover({})
    assert isinstance(host.observer("console"), ConsoleObserver)
    assert isinstance(host.event_store(BackendRequest("memory://")), MemoryEventStore)
    assert host.names(BINDINGS).count(Terminal.name) == 1
