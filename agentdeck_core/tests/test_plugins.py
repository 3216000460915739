"""The plugin host: attributed registries, clashes, isolation of broken plugins, allow/deny.

Plugins here are small in-test objects handed to ``PluginHost.from_plugins`` (the host treats
them exactly like loaded entry points); the tests that need the real entry-point scan use the
core's own ``memory`` plugin.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, ClassVar

import pytest
from pydantic_settings import SettingsConfigDict

import agentdeck
from agentdeck.errors import ConfigError
from agentdeck.memory import MemoryEventStore
from agentdeck.model.payloads import Payload
from agentdeck.plugins import hookspecs
from agentdeck.plugins.host import (
    ALLOW_ENV,
    BACKEND_KINDS,
    DENY_ENV,
    EVENT_STORES,
    NAMED_KINDS,
    SETTINGS,
    PluginHost,
    PluginSource,
    PluginWarning,
    clear_default_hosts,
    default_host,
    scheme_of,
)
from agentdeck.ports import BackendRequest, Engine, EventStore, Invocable, Invocation, Observer
from agentdeck.settings import Settings, SettingsSection

# --------------------------------------------------------------------------- in-test plugins


class StorePlugin:
    """Registers one in-memory event store per scheme, each tagged with its scheme."""

    def __init__(self, *schemes: str) -> None:
        self.schemes = schemes

    @agentdeck.hookimpl
    def agentdeck_register_event_stores(
        self, register: hookspecs.RegisterScheme[EventStore]
    ) -> None:
        for scheme in self.schemes:
            register(scheme, _tagged_store(scheme), description=f"{scheme} test store")


class TaggedStore(MemoryEventStore):
    tag = ""


def _tagged_store(tag: str) -> Callable[[BackendRequest], TaggedStore]:
    def build(request: BackendRequest) -> TaggedStore:
        store = TaggedStore(clock=request.clock, url=request.url)
        store.tag = tag
        return store

    return build


class RaisesHalfway:
    """Registers a store, an engine, then raises: nothing of it may survive."""

    @agentdeck.hookimpl
    def agentdeck_register_event_stores(
        self, register: hookspecs.RegisterScheme[EventStore]
    ) -> None:
        register("half", _tagged_store("half"))
        raise RuntimeError("lost my config")

    @agentdeck.hookimpl
    def agentdeck_register_engines(self, register: hookspecs.RegisterEngine) -> None:
        register(EchoEngine)


class UnknownHook:
    @agentdeck.hookimpl
    def agentdeck_register_event_stores(
        self, register: hookspecs.RegisterScheme[EventStore]
    ) -> None:
        register("typo", _tagged_store("typo"))

    @agentdeck.hookimpl
    def agentdeck_register_stroes(self, register: hookspecs.RegisterScheme[EventStore]) -> None:
        """Misspelled: no such hook."""


class OptionalUnknownHook:
    @agentdeck.hookimpl(optionalhook=True)
    def agentdeck_register_future_things(self, register: Any) -> None:
        """A hook from a newer core, declared optional: allowed."""

    @agentdeck.hookimpl
    def agentdeck_register_event_stores(
        self, register: hookspecs.RegisterScheme[EventStore]
    ) -> None:
        register("future", _tagged_store("future"))


class EchoEngine(Engine):
    name: ClassVar[str] = "echo"

    def accepts(self, definition: object) -> bool:
        return definition == "echo"

    def compile(self, definition: object) -> Invocable:
        return Invocable(name="echo", kind="agent", engine=self.name, definition=definition)

    async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
        return
        yield


class CountingObserver(Observer):
    def __init__(self, *, label: str = "") -> None:
        self.label = label

    async def emit(self, event: object) -> None:
        pass


class ComponentsPlugin:
    @agentdeck.hookimpl
    def agentdeck_register_engines(self, register: hookspecs.RegisterEngine) -> None:
        register(EchoEngine, description="echoes")

    @agentdeck.hookimpl
    def agentdeck_register_observers(self, register: hookspecs.RegisterNamed[Observer]) -> None:
        register("counting", CountingObserver)


class LabelSettings(SettingsSection):
    """Test plugin settings."""

    section: ClassVar[str] = "label"
    model_config = SettingsConfigDict(env_prefix="TEST_LABEL_")

    text: str = "default"
    """A label."""


class SettingsPlugin:
    def __init__(self, section: type[SettingsSection] = LabelSettings) -> None:
        self.section = section

    @agentdeck.hookimpl
    def agentdeck_register_settings(
        self, register: Callable[[type[SettingsSection]], None]
    ) -> None:
        register(self.section)


def source(name: str, plugin: object, distribution: str | None = None) -> PluginSource:
    return PluginSource(
        name=name, load=lambda: plugin, distribution=distribution, version="1.0", value=name
    )


@pytest.fixture
def no_plugin_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginWarning)
        yield


# --------------------------------------------------------------------------- registration


@pytest.mark.usefixtures("no_plugin_warnings")
def test_registrations_are_attributed_to_their_plugin_and_distribution() -> None:
    host = PluginHost.from_plugins(
        source("alpha", StorePlugin("alpha", "alpha2"), "alpha-dist"),
        source("parts", ComponentsPlugin(), "parts-dist"),
    )

    by_name = {info.name: info for info in host.plugins()}
    assert by_name["alpha"].distribution == "alpha-dist"
    assert by_name["alpha"].version == "1.0"
    assert by_name["alpha"].provides == {"event_stores": ["alpha", "alpha2"]}
    assert by_name["parts"].provides == {"engines": ["echo"], "observers": ["counting"]}
    [registration, _] = host.registrations("event_stores")
    assert (registration.plugin, registration.distribution) == ("alpha", "alpha-dist")
    assert registration.description == "alpha test store"


@pytest.mark.usefixtures("no_plugin_warnings")
def test_a_backend_is_built_by_the_plugin_owning_the_urls_scheme() -> None:
    host = PluginHost.from_plugins(StorePlugin("alpha", "beta"))

    store = host.event_store(BackendRequest("beta://somewhere"))

    assert isinstance(store, TaggedStore)
    assert store.tag == "beta"
    assert store.url == "beta://somewhere"


@pytest.mark.usefixtures("no_plugin_warnings")
def test_redis_and_rediss_are_different_schemes() -> None:
    host = PluginHost.from_plugins(StorePlugin("redis", "postgresql"))

    assert host.schemes(EVENT_STORES) == ["postgresql", "redis"]
    with pytest.raises(ConfigError, match="'rediss'"):
        host.event_store(BackendRequest("rediss://host:6380/0"))
    with pytest.raises(ConfigError, match="'postgres'"):
        host.event_store(BackendRequest("postgres://user@host/db"))


def test_scheme_is_the_part_before_colon_slash_slash_lower_cased() -> None:
    assert scheme_of("sqlite:////abs/path.db") == "sqlite"
    assert scheme_of("REDISS://host") == "rediss"
    assert scheme_of("memory://") == "memory"


def test_a_url_without_a_scheme_is_a_config_error_naming_the_setting() -> None:
    with pytest.raises(ConfigError, match="AGENTDECK_EVENTS='/var/db'") as caught:
        scheme_of("/var/db", setting="AGENTDECK_EVENTS")
    assert caught.value.setting == "AGENTDECK_EVENTS"


@pytest.mark.usefixtures("no_plugin_warnings")
def test_engines_observers_and_settings_sections_come_from_their_plugins() -> None:
    host = PluginHost.from_plugins(ComponentsPlugin(), SettingsPlugin())

    [engine] = host.engines()
    observer = host.observer("counting", label="x")

    assert isinstance(engine, EchoEngine)
    assert isinstance(observer, CountingObserver) and observer.label == "x"
    assert host.settings_sections() == [LabelSettings]


@pytest.mark.usefixtures("no_plugin_warnings")
def test_an_unknown_observer_name_lists_the_available_ones() -> None:
    host = PluginHost.from_plugins(ComponentsPlugin())

    with pytest.raises(ConfigError, match="named 'nope'; available: counting") as caught:
        host.observer("nope")
    assert caught.value.accepted == ("counting",)


@pytest.mark.usefixtures("no_plugin_warnings")
def test_a_factory_returning_the_wrong_type_is_blamed_on_its_plugin() -> None:
    class WrongStore:
        @agentdeck.hookimpl
        def agentdeck_register_event_stores(
            self, register: hookspecs.RegisterScheme[EventStore]
        ) -> None:
            register("wrong", lambda request: object())

    host = PluginHost.from_plugins(source("wrongplug", WrongStore(), "wrong-dist"))

    with pytest.raises(ConfigError, match=r"plugin 'wrongplug' \(wrong-dist\).*not an EventStore"):
        host.event_store(BackendRequest("wrong://"))


def test_every_registration_hook_has_a_registry() -> None:
    hook_names = {name for name in dir(hookspecs) if name.startswith("agentdeck_register_")}
    served = {kind.hook for kind in BACKEND_KINDS} | {kind.hook for kind in NAMED_KINDS}

    assert hook_names == served | {"agentdeck_register_settings"}


# --------------------------------------------------------------------------- clashes


def test_the_same_scheme_from_two_plugins_is_a_config_error_naming_both() -> None:
    with pytest.raises(ConfigError) as caught:
        PluginHost.from_plugins(
            source("first", StorePlugin("shared"), "first-dist"),
            source("second", StorePlugin("shared"), "second-dist"),
        )

    message = str(caught.value)
    assert "'shared'" in message
    assert "plugin 'first' (first-dist)" in message
    assert "plugin 'second' (second-dist)" in message
    assert DENY_ENV in message


def test_the_same_engine_name_from_two_plugins_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="engine 'echo' is registered by both"):
        PluginHost.from_plugins(("a", ComponentsPlugin()), ("b", ComponentsPlugin()))


def test_a_plugin_section_may_not_take_a_core_section_name() -> None:
    class Runtime(SettingsSection):
        section: ClassVar[str] = "runtime"
        model_config = SettingsConfigDict(env_prefix="OTHER_RUNTIME_")

    with pytest.raises(ConfigError, match=r"section 'runtime'.*agentdeck-core.*'squatter'"):
        PluginHost.from_plugins(("squatter", SettingsPlugin(Runtime)))


def test_a_plugin_section_may_not_read_another_sections_variable() -> None:
    class Sneaky(SettingsSection):
        section: ClassVar[str] = "sneaky"
        model_config = SettingsConfigDict(env_prefix="AGENTDECK_")

        state: str = ""

    with pytest.raises(ConfigError, match="settings section 'sneaky'"):
        PluginHost.from_plugins(("sneaky", SettingsPlugin(Sneaky)))


def test_one_entry_point_name_from_two_distributions_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"entry point 'x'.*x-one.*x-two"):
        PluginHost.from_plugins(
            source("x", StorePlugin("one"), "x-one"), source("x", StorePlugin("two"), "x-two")
        )


# --------------------------------------------------------------------------- unknown schemes


@pytest.mark.usefixtures("no_plugin_warnings")
def test_an_unknown_scheme_lists_the_schemes_installed_plugins_offer() -> None:
    host = PluginHost.from_plugins(source("alpha", StorePlugin("alpha", "beta"), "ab-dist"))

    with pytest.raises(ConfigError) as caught:
        host.event_store(BackendRequest("gamma://x"))

    error = caught.value
    assert error.setting == "AGENTDECK_EVENTS"
    assert error.accepted == ("alpha", "beta")
    assert "AGENTDECK_EVENTS='gamma://x' names scheme 'gamma'" in str(error)
    assert "alpha (ab-dist), beta (ab-dist)" in str(error)


@pytest.mark.usefixtures("no_plugin_warnings")
def test_an_unknown_scheme_derived_from_the_state_root_names_agentdeck_state() -> None:
    host = PluginHost.from_plugins(StorePlugin("alpha"))
    settings = Settings(env={"AGENTDECK_STATE": "gamma://x"})

    with pytest.raises(ConfigError, match="AGENTDECK_STATE='gamma://x'") as caught:
        host.event_store(BackendRequest(settings.events_url, settings=settings))
    assert caught.value.setting == "AGENTDECK_STATE"


@pytest.mark.usefixtures("no_plugin_warnings")
def test_a_missing_first_party_scheme_says_which_distribution_provides_it() -> None:
    host = PluginHost.from_plugins(StorePlugin("alpha"))

    with pytest.raises(ConfigError, match="install agentdeck-stores for 'redis://'"):
        host.event_store(BackendRequest("redis://127.0.0.1:6379/0"))


@pytest.mark.usefixtures("no_plugin_warnings")
def test_a_password_in_the_url_never_reaches_the_error() -> None:
    host = PluginHost.from_plugins(StorePlugin("alpha"))

    with pytest.raises(ConfigError) as caught:
        host.event_store(BackendRequest("postgresql://app:hunter2@db/agentdeck"))
    assert "hunter2" not in str(caught.value)
    assert "postgresql://app:***@db/agentdeck" in str(caught.value)


# --------------------------------------------------------------------------- broken plugins


def test_a_plugin_that_fails_to_import_is_named_skipped_and_the_others_load() -> None:
    def explode() -> object:
        raise ImportError("No module named 'missing_dependency'")

    with pytest.warns(PluginWarning, match=r"'bad' \(distribution bad-dist 2\.0\).*ImportError"):
        host = PluginHost.from_plugins(
            PluginSource("bad", explode, "bad-dist", "2.0"), ("good", StorePlugin("good"))
        )

    [broken] = host.broken()
    assert (broken.name, broken.distribution, broken.version) == ("bad", "bad-dist", "2.0")
    assert "missing_dependency" in broken.reason
    assert [info.name for info in host.plugins()] == ["good"]
    assert isinstance(host.event_store(BackendRequest("good://")), TaggedStore)


def test_a_plugin_whose_registration_raises_is_skipped_and_rolled_back() -> None:
    with pytest.warns(PluginWarning, match=r"'halfway'.*RuntimeError: lost my config"):
        host = PluginHost.from_plugins(("halfway", RaisesHalfway()), ("good", StorePlugin("good")))

    assert host.schemes(EVENT_STORES) == ["good"]
    assert host.engines() == []
    assert [b.name for b in host.broken()] == ["halfway"]
    assert "nothing it registered was kept" in host.broken()[0].reason
    assert host.pm.get_plugin("halfway") is None


def test_a_malformed_registration_is_refused_and_the_plugin_skipped() -> None:
    class SchemeWithSlashes:
        @agentdeck.hookimpl
        def agentdeck_register_event_stores(
            self, register: hookspecs.RegisterScheme[EventStore]
        ) -> None:
            register("sqlite://", _tagged_store("x"))

    with pytest.warns(PluginWarning, match="register 'sqlite', not 'sqlite://'"):
        host = PluginHost.from_plugins(("slashes", SchemeWithSlashes()))

    assert host.schemes(EVENT_STORES) == []
    assert [b.name for b in host.broken()] == ["slashes"]


def test_an_async_registration_hook_is_refused_and_the_plugin_skipped() -> None:
    class AsyncRegistration:
        @agentdeck.hookimpl
        async def agentdeck_register_event_stores(
            self, register: hookspecs.RegisterScheme[EventStore]
        ) -> None:
            register("late", _tagged_store("late"))

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no "coroutine never awaited" either
        with pytest.warns(PluginWarning, match="registration hooks must be plain functions"):
            host = PluginHost.from_plugins(("async", AsyncRegistration()))

    assert host.schemes(EVENT_STORES) == []


def test_a_hook_implementation_asking_for_an_unknown_argument_is_skipped() -> None:
    class ExtraArgument:
        @agentdeck.hookimpl
        def agentdeck_register_engines(self, register: hookspecs.RegisterEngine) -> None:
            register(EchoEngine)

        @agentdeck.hookimpl
        def agentdeck_register_event_stores(
            self, register: hookspecs.RegisterScheme[EventStore], settings: object
        ) -> None:
            register("extra", _tagged_store("extra"))

    with pytest.warns(PluginWarning, match=r"'extra' was skipped: it could not be registered"):
        host = PluginHost.from_plugins(("extra", ExtraArgument()), ("good", StorePlugin("good")))

    assert host.schemes(EVENT_STORES) == ["good"]
    assert host.engines() == []
    assert host.pm.get_plugin("extra") is None


def test_a_plugin_implementing_an_unknown_hook_is_unregistered_with_a_warning() -> None:
    with pytest.warns(PluginWarning, match=r"'typo'.*agentdeck_register_stroes"):
        host = PluginHost.from_plugins(("typo", UnknownHook()), ("good", StorePlugin("good")))

    assert host.pm.get_plugin("typo") is None
    assert host.schemes(EVENT_STORES) == ["good"]
    [broken] = host.broken()
    assert "agentdeck_register_stroes" in broken.reason


@pytest.mark.usefixtures("no_plugin_warnings")
def test_an_unknown_hook_marked_optional_is_tolerated() -> None:
    host = PluginHost.from_plugins(("future", OptionalUnknownHook()))

    assert host.schemes(EVENT_STORES) == ["future"]
    assert host.broken() == []


def test_a_clash_is_not_counted_against_a_plugin_that_was_rolled_back() -> None:
    class ClaimsGoodThenRaises:
        @agentdeck.hookimpl
        def agentdeck_register_event_stores(
            self, register: hookspecs.RegisterScheme[EventStore]
        ) -> None:
            register("good", _tagged_store("impostor"))
            raise RuntimeError("broken halfway")

    with pytest.warns(PluginWarning, match="broken halfway"):
        host = PluginHost.from_plugins(
            ("good", StorePlugin("good")), ("bad", ClaimsGoodThenRaises())
        )

    store = host.event_store(BackendRequest("good://"))
    assert isinstance(store, TaggedStore) and store.tag == "good"


# --------------------------------------------------------------------------- allow / deny


@pytest.mark.usefixtures("no_plugin_warnings")
def test_the_allowlist_loads_only_the_plugins_it_names() -> None:
    host = PluginHost.from_plugins(
        ("a", StorePlugin("a")), ("b", StorePlugin("b")), env={ALLOW_ENV: " a , "}
    )

    assert [info.name for info in host.plugins()] == ["a"]
    assert [(d.name, d.reason) for d in host.disabled()] == [("b", f"not listed in {ALLOW_ENV}")]


@pytest.mark.usefixtures("no_plugin_warnings")
def test_the_denylist_wins_over_the_allowlist() -> None:
    host = PluginHost.from_plugins(
        ("a", StorePlugin("a")), ("b", StorePlugin("b")), env={ALLOW_ENV: "a,b", DENY_ENV: "b"}
    )

    assert [info.name for info in host.plugins()] == ["a"]


@pytest.mark.usefixtures("no_plugin_warnings")
def test_an_empty_allowlist_loads_no_plugin_at_all() -> None:
    host = PluginHost.from_plugins(("a", StorePlugin("a")), env={ALLOW_ENV: ""})

    assert host.plugins() == []


def test_an_allowlist_naming_no_installed_plugin_warns() -> None:
    with pytest.warns(PluginWarning, match=f"{ALLOW_ENV} names 'memroy'"):
        PluginHost.from_plugins(("memory", StorePlugin("memory")), env={ALLOW_ENV: "memroy"})


@pytest.mark.usefixtures("no_plugin_warnings")
def test_the_core_memory_plugin_is_discovered_and_attributed_to_agentdeck_core() -> None:
    host = PluginHost.discover(env={ALLOW_ENV: "memory"})

    [memory] = host.plugins()
    assert memory.name == "memory"
    assert memory.distribution == "agentdeck-core"
    assert memory.provides["event_stores"] == ["memory"]
    assert isinstance(host.event_store(BackendRequest("memory://")), MemoryEventStore)


@pytest.mark.usefixtures("no_plugin_warnings")
def test_the_denylist_blocks_the_core_memory_plugin_too() -> None:
    host = PluginHost.discover(env={ALLOW_ENV: "memory", DENY_ENV: "memory"})

    assert host.plugins() == []
    with pytest.raises(
        ConfigError, match=rf"not loaded because of {ALLOW_ENV}/{DENY_ENV}: .*\bmemory\b"
    ):
        host.event_store(BackendRequest("memory://"))


# --------------------------------------------------------------------------- shared host


def test_the_default_host_is_built_once_per_allow_and_deny_configuration() -> None:
    clear_default_hosts()
    try:
        first = default_host({ALLOW_ENV: "memory"})
        again = default_host({ALLOW_ENV: "memory", "UNRELATED": "x"})
        other = default_host({ALLOW_ENV: "memory", DENY_ENV: "memory"})
    finally:
        clear_default_hosts()

    assert first is again
    assert other is not first
    assert other.plugins() == []


@pytest.mark.usefixtures("no_plugin_warnings")
def test_plugin_sections_load_through_a_decks_settings() -> None:
    host = PluginHost.from_plugins(SettingsPlugin())
    settings = Settings(env={"TEST_LABEL_TEXT": "hello"}, sections=host.settings_sections())

    assert settings.section(LabelSettings).text == "hello"
    assert LabelSettings in settings.sections()
    assert [r.name for r in host.registrations(SETTINGS)] == ["label"]


@pytest.mark.usefixtures("no_plugin_warnings")
def test_a_disabled_entry_point_name_declared_twice_is_no_clash() -> None:
    host = PluginHost.from_plugins(
        source("x", StorePlugin("one"), "x-one"),
        source("x", StorePlugin("two"), "x-two"),
        env={DENY_ENV: "x"},
    )

    assert [(d.name, d.distribution) for d in host.disabled()] == [("x", "x-one"), ("x", "x-two")]
