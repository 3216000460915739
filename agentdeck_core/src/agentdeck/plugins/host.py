"""The plugin host: the loaded plugins of one configuration, and typed lookups into what they
registered.

A :class:`PluginHost` is built from plugin sources -- installed entry points
(:meth:`PluginHost.discover`), modules handed over in a test (:meth:`PluginHost.from_plugins`),
or the process's cached one (:func:`default_host`). Building it loads every plugin through
:mod:`agentdeck.plugins.loading` (which isolates the broken ones) into the attributed tables of
:mod:`agentdeck.plugins.registry`. What callers then do with it is ask for a thing by what
chooses it: :meth:`PluginHost.event_store` (and the other backends) by the scheme of a URL,
:meth:`~PluginHost.engines`, :meth:`~PluginHost.observer` and :meth:`~PluginHost.binding` by
name, :meth:`~PluginHost.settings_sections`. Each lookup builds the thing with the factory its
plugin registered, checks that it is the port it should be (blaming the plugin when not), and
turns an unknown scheme or name into a :class:`~agentdeck.errors.ConfigError` listing what the
installed plugins offer. Engines registered as :class:`~agentdeck.ports.EngineRef` are imported
here, the first time they are needed, and never before.

``agentdeck.plugins.host`` is the import path for everything the plugin system offers its
callers: the names of the loading, registry, listing and URL modules that callers use are
re-exported here.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from types import ModuleType
from typing import Any, TypeVar, cast

import pluggy

from agentdeck.errors import ConfigError, did_you_mean
from agentdeck.plugins import hookspecs
from agentdeck.plugins.hookspecs import PROJECT_NAME
from agentdeck.plugins.listing import BrokenPlugin, DisabledPlugin, PluginInfo, provided_by
from agentdeck.plugins.loading import (
    ALLOW_ENV,
    DENY_ENV,
    PluginSource,
    PluginWarning,
    core_version,
    discover_sources,
    given_sources,
    load_plugins,
)
from agentdeck.plugins.registry import (
    BACKEND_KINDS,
    BINDINGS,
    CHECKPOINTERS,
    CONTROL_PORTS,
    CORE_PLUGIN,
    ENGINES,
    EVENT_STORES,
    EXECUTIONS,
    LEASE_PORTS,
    NAMED_KINDS,
    OBSERVERS,
    SESSION_FACTORIES,
    SETTINGS,
    BackendKind,
    NamedKind,
    Registration,
    Registry,
    is_headless,
)
from agentdeck.plugins.urls import redact_url, scheme_of
from agentdeck.ports import (
    BackendRequest,
    Binding,
    CheckpointerFactory,
    ControlPort,
    Engine,
    EngineRef,
    EngineRequest,
    EventStore,
    Execution,
    HeadlessEngine,
    LeasePort,
    Observer,
    SessionFactory,
)
from agentdeck.settings import SettingsSection

__all__ = [
    "ALLOW_ENV",
    "BACKEND_KINDS",
    "BINDINGS",
    "CHECKPOINTERS",
    "CONTROL_PORTS",
    "DENY_ENV",
    "ENGINES",
    "EVENT_STORES",
    "EXECUTIONS",
    "LEASE_PORTS",
    "NAMED_KINDS",
    "OBSERVERS",
    "SESSION_FACTORIES",
    "SETTINGS",
    "BackendKind",
    "BrokenPlugin",
    "DisabledPlugin",
    "NamedKind",
    "PluginHost",
    "PluginInfo",
    "PluginSource",
    "PluginWarning",
    "Registration",
    "clear_default_hosts",
    "core_version",
    "default_host",
    "redact_url",
    "scheme_of",
]

_T = TypeVar("_T")

# Where a missing first-party scheme comes from, so the error can say what to install.
_FIRST_PARTY_SCHEMES = {
    "redis": "agentdeck-stores",
    "rediss": "agentdeck-stores",
    "postgres": "agentdeck-stores",
    "postgresql": "agentdeck-stores",
    "temporal": "agentdeck-temporal",
}


class PluginHost:
    """The loaded plugins of one process configuration, and the registries they filled.

    Build one with :meth:`discover` (installed entry points), :meth:`from_plugins` (modules in a
    test) or :func:`default_host` (cached per allow/deny configuration).
    """

    def __init__(
        self, sources: Iterable[PluginSource] = (), *, env: Mapping[str, str] | None = None
    ) -> None:
        """Load ``sources`` in order, applying the allow/deny lists in ``env`` (default
        ``os.environ``). Raises ``ConfigError`` if two plugins register the same name."""
        self.pm = pluggy.PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self._registry = Registry()
        self._engine_classes: dict[str, type[Engine]] = {}
        self._outcome = load_plugins(
            self.pm, list(sources), os.environ if env is None else env, self._registry
        )

    @classmethod
    def discover(cls, env: Mapping[str, str] | None = None) -> PluginHost:
        """Load every plugin installed under the ``agentdeck`` entry-point group.

        The core's own default plugins are included even when the core runs from a source tree
        without installed metadata, so ``memory://`` and ``sqlite://`` (the default state) are
        always available unless disabled.
        """
        return cls(discover_sources(), env=env)

    @classmethod
    def from_plugins(
        cls,
        *plugins: ModuleType | PluginSource | tuple[str, object] | object,
        env: Mapping[str, str] | None = None,
    ) -> PluginHost:
        """Load the given plugins as if they were entry points, without scanning distributions.

        Each item is a module (named by its ``__name__``), a ``(name, plugin)`` pair, or a
        :class:`PluginSource` (to give it a distribution, or a ``load`` that fails). ``env``
        defaults to an empty mapping here, so the process's allow/deny lists do not leak into
        tests.
        """
        return cls(given_sources(plugins), env={} if env is None else env)

    # ----------------------------------------------------------------------- listing

    def plugins(self) -> list[PluginInfo]:
        """The loaded plugins, with distribution, version and what each provides."""
        tables = [(key, self._registry.table(key).values()) for key in self._registry.kinds()]
        return [
            PluginInfo(
                name, source.distribution, source.version, source.value, provided_by(name, tables)
            )
            for name, (source, _plugin) in self._outcome.loaded.items()
        ]

    def broken(self) -> list[BrokenPlugin]:
        """Plugins that were skipped because they failed, with the reason."""
        return list(self._outcome.broken)

    def disabled(self) -> list[DisabledPlugin]:
        """Installed plugins the allow/deny lists kept from loading."""
        return list(self._outcome.disabled)

    def registrations(self, kind: str) -> list[Registration]:
        """Everything registered under ``kind`` (``"event_stores"``, ``"engines"``, ...)."""
        if kind not in self._registry.kinds():
            raise ConfigError(
                f"unknown registry '{kind}'", setting=None, accepted=sorted(self._registry.kinds())
            )
        return [r for r in self._registry.table(kind).values() if r.plugin != CORE_PLUGIN]

    def schemes(self, kind: BackendKind[Any]) -> list[str]:
        """The URL schemes installed plugins offer for ``kind``."""
        return sorted(self._registry.table(kind.key))

    def names(self, kind: NamedKind[Any]) -> list[str]:
        """The names installed plugins offer for ``kind``."""
        return sorted(self._registry.table(kind.key))

    # ----------------------------------------------------------------------- backends

    def backend(
        self, kind: BackendKind[_T], request: BackendRequest, *, setting: str | None = None
    ) -> _T:
        """Build the ``kind`` backend for ``request.url`` with the plugin owning its scheme.

        ``setting`` names the variable the URL came from, for error messages; by default it is
        inferred from ``request.settings`` (``AGENTDECK_STATE`` when the URL was derived from
        it) or the kind's own variable. A read-only request for the default state file that
        nothing has created yet gets the empty ``memory://`` backend instead.
        """
        setting = setting or _setting_for(kind, request)
        if _reads_default_state_not_created_yet(request):
            # Nothing has recorded anything here yet: a fresh in-memory backend reads as the
            # empty state it is, and creates no file (read-only commands never create state).
            request = replace(request, url="memory://")
        scheme = scheme_of(request.url, setting=setting)
        registration = self._registry.table(kind.key).get(scheme)
        if registration is None:
            if request.settings is not None and request.settings.is_default_state(request.url):
                raise ConfigError(
                    f"{setting or 'AGENTDECK_STATE'} is unset, so the state is the default file "
                    f"{request.url!r}, but this plugin host does not load the core's 'sqlite' "
                    f"plugin ({_a(kind.what)} for 'sqlite://'): load it (agentdeck.sqlite."
                    "plugin), or set AGENTDECK_STATE to a scheme it offers, e.g. memory://",
                    setting=setting,
                    accepted=self.schemes(kind),
                )
            raise self._unknown_scheme(kind, request.url, scheme, setting)
        built = cast(Callable[[BackendRequest], object], registration.factory)(request)
        if not isinstance(built, kind.port):
            raise ConfigError(
                f"{registration.owner()} registered {_a(kind.what)} factory for '{scheme}' "
                f"that returned {type(built).__name__}, not {_a(kind.port.__name__)}",
                setting=setting,
            )
        return cast(_T, built)

    def event_store(self, request: BackendRequest, *, setting: str | None = None) -> EventStore:
        """An unopened event store for ``request.url`` (``AGENTDECK_EVENTS``)."""
        return self.backend(EVENT_STORES, request, setting=setting)

    def control_port(self, request: BackendRequest, *, setting: str | None = None) -> ControlPort:
        """An unopened control backend for ``request.url`` (``AGENTDECK_CONTROL``)."""
        return self.backend(CONTROL_PORTS, request, setting=setting)

    def lease_port(self, request: BackendRequest, *, setting: str | None = None) -> LeasePort:
        """An unopened lease backend for ``request.url`` (``AGENTDECK_CONTROL``)."""
        return self.backend(LEASE_PORTS, request, setting=setting)

    def session_factory(
        self, request: BackendRequest, *, setting: str | None = None
    ) -> SessionFactory:
        """A session factory for ``request.url`` (``AGENTDECK_SESSION``)."""
        return self.backend(SESSION_FACTORIES, request, setting=setting)

    def checkpointer(
        self, request: BackendRequest, *, setting: str | None = None
    ) -> CheckpointerFactory:
        """A checkpointer factory for ``request.url`` (``AGENTDECK_CHECKPOINT``)."""
        return self.backend(CHECKPOINTERS, request, setting=setting)

    def execution(self, request: BackendRequest, *, setting: str | None = None) -> Execution:
        """An unopened execution backend for ``request.url`` (``AGENTDECK_EXECUTION``)."""
        return self.backend(EXECUTIONS, request, setting=setting)

    def _unknown_scheme(
        self, kind: BackendKind[Any], url: str, scheme: str, setting: str | None
    ) -> ConfigError:
        offered = self._registry.table(kind.key)
        subject = f"{setting}={redact_url(url)!r}" if setting else repr(redact_url(url))
        if offered:
            listing = ", ".join(f"{s} ({r.distribution or r.plugin})" for s, r in offered.items())
            message = f"schemes installed plugins offer: {listing}"
        else:
            message = f"no installed plugin offers any {kind.what}"
        hint = _FIRST_PARTY_SCHEMES.get(scheme)
        if hint:
            message += f"; install {hint} for '{scheme}://'"
        disabled = self._outcome.disabled
        if disabled:
            message += f"; not loaded because of {ALLOW_ENV}/{DENY_ENV}: " + ", ".join(
                d.name for d in disabled
            )
        return ConfigError(
            f"{subject} names scheme '{scheme}', but no installed plugin provides {_a(kind.what)} "
            f"for it; {message}",
            setting=setting,
            accepted=sorted(offered),
        )

    # ----------------------------------------------------------------------- named components

    def named(self, kind: NamedKind[_T], name: str, **options: Any) -> _T:
        """Build the ``kind`` component registered as ``name`` with ``options``."""
        registration = self._registration(kind, name)
        if kind is ENGINES:
            factory: Callable[..., object] = self._engine_class(registration)
        else:
            factory = cast(Callable[..., object], registration.factory)
        built = factory(**options)
        if not isinstance(built, kind.port):
            raise ConfigError(
                f"{registration.owner()} registered {_a(kind.what)} factory for '{name}' that "
                f"returned {type(built).__name__}, not {_a(kind.port.__name__)}"
            )
        return cast(_T, built)

    def engines(self, request: EngineRequest | None = None) -> list[Engine]:
        """A fresh instance of every registered engine, built for ``request``, in name order.

        Imports the engines registered as :class:`~agentdeck.ports.EngineRef` that were not
        imported yet; a reference that cannot be resolved is a ``ConfigError`` naming its plugin.
        """
        request = request or EngineRequest()
        return [self.engine(name, request) for name in self.names(ENGINES)]

    def engine(self, name: str, request: EngineRequest | None = None) -> Engine:
        """A fresh instance of the engine registered as ``name``, built for ``request``."""
        registration = self._registration(ENGINES, name)
        return self._engine_class(registration)(request or EngineRequest())

    def client_engines(self, request: EngineRequest | None = None) -> list[Engine]:
        """What a deck that only admits runs for workers uses of every registered engine, in
        name order: its :class:`~agentdeck.ports.ClientEngine` when its
        :class:`~agentdeck.ports.EngineRef` names one (so its SDK stays unimported), else the
        engine itself (an engine without a client face still admits, with its SDK loaded)."""
        request = request or EngineRequest()
        engines: list[Engine] = []
        for name in self.names(ENGINES):
            registration = self._registration(ENGINES, name)
            reference = registration.factory
            client = None
            if isinstance(reference, EngineRef):
                try:
                    client = reference.load_client()
                except ConfigError as problem:
                    raise ConfigError(
                        f"{registration.owner()} registered engine '{name}' with the client "
                        f"{reference.client!r}, which cannot be used: {problem}"
                    ) from problem
            if client is None:
                engines.append(self.engine(name, request))
                continue
            face = client(request)
            face.plays_on(functools.partial(self.engine, name, request))
            engines.append(face)
        return engines

    def headless_engines(self, request: EngineRequest | None = None) -> list[HeadlessEngine]:
        """A fresh instance of every engine that declares headless runs, in name order.

        Only those engines are imported: which ones they are is known from the registrations
        (a :class:`~agentdeck.ports.HeadlessEngine` class, or ``EngineRef(headless=True)``).
        """
        request = request or EngineRequest()
        headless = []
        for name in self.names(ENGINES):
            if is_headless(self._registry.table(ENGINES.key)[name]):
                engine = self.engine(name, request)
                assert isinstance(engine, HeadlessEngine)  # checked when the class was resolved
                headless.append(engine)
        return headless

    def observer(self, name: str, **options: Any) -> Observer:
        """The observer registered as ``name``, built with ``options``."""
        return self.named(OBSERVERS, name, **options)

    def binding(self, name: str, **options: Any) -> Binding:
        """The binding registered as ``name``, built with ``options``."""
        return self.named(BINDINGS, name, **options)

    def settings_sections(self) -> list[type[SettingsSection]]:
        """The settings sections plugins registered (the core's own are not included)."""
        return [cast(type[SettingsSection], r.factory) for r in self.registrations(SETTINGS)]

    def _registration(self, kind: NamedKind[Any], name: str) -> Registration:
        registration = self._registry.table(kind.key).get(name)
        if registration is None:
            offered = sorted(self._registry.table(kind.key))
            raise ConfigError(
                f"no installed plugin provides {_a(kind.what)} named '{name}'; "
                + (f"available: {', '.join(offered)}" if offered else "none is installed")
                + did_you_mean(name, offered),
                setting=None,
                accepted=offered,
            )
        return registration

    def _engine_class(self, registration: Registration) -> type[Engine]:
        """The class behind a registered engine; a reference is imported on first use, once."""
        resolved = self._engine_classes.get(registration.name)
        if resolved is not None:
            return resolved
        engine = registration.factory
        if isinstance(engine, EngineRef):
            try:
                resolved = engine.load()
            except ConfigError as problem:
                raise ConfigError(
                    f"{registration.owner()} registered engine '{registration.name}' as "
                    f"{engine.target!r}, which cannot be used: {problem}"
                ) from problem
        else:
            resolved = cast(type[Engine], engine)  # checked to be a subclass at registration
        self._engine_classes[registration.name] = resolved
        return resolved


# =========================================================================== the shared host


def default_host(env: Mapping[str, str] | None = None) -> PluginHost:
    """The host for this process's installed plugins, built once per allow/deny configuration.

    Building a deck calls this, so constructing many decks scans distributions (and warns about
    broken plugins) once. ``env`` supplies the allow/deny variables (default ``os.environ``).
    Call :func:`clear_default_hosts` after installing or removing plugins at runtime.
    """
    environ = os.environ if env is None else env
    return _cached_host(environ.get(ALLOW_ENV), environ.get(DENY_ENV))


def clear_default_hosts() -> None:
    """Forget the hosts :func:`default_host` built, so the next call rescans."""
    _cached_host.cache_clear()


@functools.lru_cache(maxsize=16)
def _cached_host(allow: str | None, deny: str | None) -> PluginHost:
    # Process-wide on purpose: scanning distributions and importing every plugin module is the
    # one cost a deck's construction would otherwise pay each time; the cache is keyed by the
    # only inputs that change its result (the allow/deny lists) and cleared on request.
    env = {key: value for key, value in ((ALLOW_ENV, allow), (DENY_ENV, deny)) if value is not None}
    return PluginHost.discover(env)


# =========================================================================== internals


def _reads_default_state_not_created_yet(request: BackendRequest) -> bool:
    settings = request.settings
    return (
        request.read_only
        and settings is not None
        and settings.is_default_state(request.url)
        and not settings.default_state_path.exists()
    )


def _setting_for(kind: BackendKind[Any], request: BackendRequest) -> str | None:
    settings = request.settings
    if settings is not None:
        if kind is EVENT_STORES and request.url == settings.events_url:
            return settings.events_setting
        if kind in (CONTROL_PORTS, LEASE_PORTS) and request.url == settings.control_url:
            return settings.control_setting
    return kind.setting


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"
