"""Engines are registered as classes, or as lazy ``EngineRef``s resolved on first use.

The lazy tests write a real module into a temporary directory on ``sys.path``, so "not imported
until a deck builds" is observed in ``sys.modules`` rather than assumed.
"""

from __future__ import annotations

import sys
import textwrap
import warnings
from collections.abc import AsyncIterator, Iterator
from itertools import count
from pathlib import Path
from typing import Any, ClassVar

import pytest

import agentdeck
from agentdeck import Agent
from agentdeck.errors import ConfigError
from agentdeck.model.payloads import Payload
from agentdeck.plugins.host import ENGINES, PluginHost, PluginSource, PluginWarning
from agentdeck.ports import (
    Engine,
    EngineRef,
    EngineRequest,
    HeadlessEngine,
    Invocable,
    Invocation,
)
from agentdeck.settings import Settings


class EchoEngine(Engine):
    name: ClassVar[str] = "echo"

    def accepts(self, definition: object) -> bool:
        return definition == "echo"

    def compile(self, definition: object) -> Invocable:
        return Invocable(name="echo", kind="workflow", engine=self.name, definition=definition)

    async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
        return
        yield


class Registers:
    """A plugin whose engines hook registers ``what`` and remembers what ``register`` raised."""

    def __init__(self, *what: tuple[Any, ...]) -> None:
        self.what = what
        self.refused: list[BaseException] = []

    @agentdeck.hookimpl
    def agentdeck_register_engines(self, register: Any) -> None:
        for args in self.what:
            try:
                register(*args, description="a test engine")
            except Exception as error:
                self.refused.append(error)
                raise


def plugin(*what: Any) -> Registers:
    """A plugin registering each of ``what`` (a tuple is the positional arguments of one call)."""
    return Registers(*(w if isinstance(w, tuple) else (w,) for w in what))


def host_of(plugin: Registers, name: str = "engines", dist: str = "engines-dist") -> PluginHost:
    return PluginHost.from_plugins(PluginSource(name, lambda: plugin, dist, "1.0", name))


_MODULES = count()

ENGINE_MODULE = """
from typing import ClassVar
from agentdeck.ports import Engine, HeadlessEngine, Invocable

class _Base:
    def accepts(self, definition):
        return definition == self.name
    def compile(self, definition):
        return Invocable(name=self.name, kind="workflow", engine=self.name, definition=definition)
    async def play(self, invocation):
        return
        yield

class LazyEngine(_Base, Engine):
    name: ClassVar[str] = "lazy"

class LazyHeadless(_Base, HeadlessEngine):
    name: ClassVar[str] = "lazy-headless"
    def accepts(self, definition):
        return True
    async def run_headless(self, definition, input, *, session=None):
        return ("headless", definition.name, input)

NOT_AN_ENGINE = object()
"""


@pytest.fixture
def engine_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The name of a fresh, not yet imported module holding ``LazyEngine`` and ``LazyHeadless``."""
    name = f"lazy_engines_{next(_MODULES)}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(ENGINE_MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


# --------------------------------------------------------------------------- classes


def test_an_engine_class_is_registered_under_its_declared_name() -> None:
    host = host_of(plugin(EchoEngine))

    assert host.names(ENGINES) == ["echo"]
    [registration] = host.registrations("engines")
    assert registration.factory is EchoEngine
    assert registration.description == "a test engine"
    [engine] = host.engines(EngineRequest(state_url="memory://x"))
    assert type(engine) is EchoEngine and engine.request.state_url == "memory://x"


@pytest.mark.parametrize(
    ("old", "says"),
    [
        (("echo", EchoEngine), "register(EchoEngine, description=...), where EchoEngine"),
        (("echo", lambda request: EchoEngine(request)), "register(MyEngine, description=...)"),
        (("echo",), "declares name = 'echo'"),
    ],
    ids=["name-and-class", "name-and-function", "name-alone"],
)
def test_an_engine_registered_the_old_way_gets_a_config_error_saying_what_to_write(
    old: tuple[Any, ...], says: str
) -> None:
    old_way = plugin(old)

    with pytest.warns(PluginWarning, match=r"'engines'.*the old way to register an engine"):
        host = host_of(old_way)

    [error] = old_way.refused
    assert isinstance(error, ConfigError)
    assert "is the old way to register an engine" in str(error)
    assert says in str(error)
    assert "EngineRef('package.module:" in str(error)
    assert host.names(ENGINES) == []
    [broken] = host.broken()
    assert broken.name == "engines" and str(error) in broken.reason


def test_a_function_is_not_an_engine() -> None:
    def build(request: EngineRequest) -> Engine:
        return EchoEngine(request)

    functional = plugin(build)
    with pytest.warns(PluginWarning, match="takes an Engine subclass or an EngineRef, not"):
        host_of(functional)

    [error] = functional.refused
    assert isinstance(error, ConfigError) and "build" in str(error)


def test_an_abstract_engine_class_is_refused_naming_what_it_lacks() -> None:
    class Unfinished(Engine):
        name: ClassVar[str] = "unfinished"

        def accepts(self, definition: object) -> bool:
            return False

    with pytest.warns(PluginWarning, match=r"'unfinished'\) is abstract.*compile, play"):
        host = host_of(plugin(Unfinished))
    assert host.names(ENGINES) == []


def test_an_engine_class_without_a_name_is_refused() -> None:
    class Nameless(EchoEngine):
        name = None  # type: ignore[assignment]  # what a plugin could write by mistake

    with pytest.warns(PluginWarning, match="declares no name"):
        host_of(plugin(Nameless))


def test_an_engine_class_and_a_reference_of_one_name_clash_naming_both_plugins(
    engine_module: str,
) -> None:
    class AlsoLazy(EchoEngine):
        name: ClassVar[str] = "lazy"

    with pytest.raises(ConfigError, match=r"engine 'lazy' is registered by both") as clash:
        PluginHost.from_plugins(
            PluginSource("first", lambda: plugin(AlsoLazy), "first-dist"),
            PluginSource(
                "second",
                lambda: plugin(EngineRef(f"{engine_module}:LazyEngine", name="lazy")),
                "second-dist",
            ),
        )
    assert "plugin 'first' (first-dist)" in str(clash.value)
    assert "plugin 'second' (second-dist)" in str(clash.value)


# --------------------------------------------------------------------------- lazy references


def test_a_reference_is_imported_when_a_deck_first_needs_the_engine_not_when_plugins_load(
    engine_module: str,
) -> None:
    host = host_of(plugin(EngineRef(f"{engine_module}:LazyEngine", name="lazy")))

    assert host.names(ENGINES) == ["lazy"]
    assert engine_module not in sys.modules
    [engine] = host.engines()
    assert engine_module in sys.modules
    assert type(engine).__name__ == "LazyEngine" and engine.name == "lazy"
    assert type(host.engine("lazy")) is type(engine)  # resolved once, the same class after


def test_a_reference_whose_class_declares_another_name_is_blamed_on_its_plugin(
    engine_module: str,
) -> None:
    host = host_of(plugin(EngineRef(f"{engine_module}:LazyEngine", name="eager")))

    with pytest.raises(ConfigError) as refused:
        host.engines()
    message = str(refused.value)
    assert "plugin 'engines' (engines-dist) registered engine 'eager'" in message
    assert "declares name = 'lazy'" in message


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("{module}:Missing", "cannot be loaded: AttributeError"),
        ("no_such_module_anywhere:Engine", "cannot be loaded: ModuleNotFoundError"),
        ("{module}:NOT_AN_ENGINE", "not an Engine subclass"),
    ],
)
def test_a_reference_that_does_not_resolve_to_an_engine_says_why(
    engine_module: str, target: str, says: str
) -> None:
    host = host_of(plugin(EngineRef(target.format(module=engine_module), name="lazy")))

    with pytest.raises(ConfigError, match=says):
        host.engine("lazy")


@pytest.mark.parametrize(
    ("class_name", "name", "headless", "says"),
    [
        ("LazyEngine", "lazy", True, "says it is headless, but .* is not a HeadlessEngine"),
        ("LazyHeadless", "lazy-headless", False, "says it is not headless, but .* is a Headless"),
    ],
)
def test_a_reference_must_declare_headless_runs_exactly_as_its_class_does(
    engine_module: str, class_name: str, name: str, headless: bool, says: str
) -> None:
    ref = EngineRef(f"{engine_module}:{class_name}", name=name, headless=headless)
    host = host_of(plugin(ref))

    with pytest.raises(ConfigError, match=says):
        host.engine(name)


def test_a_reference_target_must_be_an_import_path() -> None:
    with pytest.raises(ConfigError, match=r"'package\.module:ClassName'"):
        EngineRef("lazy_engines.LazyEngine", name="lazy")


async def test_agent_run_imports_only_the_engines_that_declare_headless_runs(
    engine_module: str, tmp_path: Path
) -> None:
    other = f"{engine_module}_deck_only"
    (tmp_path / f"{other}.py").write_text(textwrap.dedent(ENGINE_MODULE), encoding="utf-8")
    host = host_of(
        plugin(
            EngineRef(f"{other}:LazyEngine", name="lazy"),
            EngineRef(f"{engine_module}:LazyHeadless", name="lazy-headless", headless=True),
        )
    )
    agent = Agent(name="helper", instructions="Be brief.")

    try:
        result = await agent.run("hi", settings=Settings(env={}), plugins=host)
        assert result == ("headless", "helper", "hi")
        assert engine_module in sys.modules
        assert other not in sys.modules
        [engine] = host.headless_engines()
        assert isinstance(engine, HeadlessEngine)
    finally:
        sys.modules.pop(other, None)


def test_a_plugin_loading_with_a_reference_raises_no_warning(engine_module: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginWarning)
        host = host_of(plugin(EngineRef(f"{engine_module}:LazyEngine", name="lazy")))
    assert host.broken() == []
