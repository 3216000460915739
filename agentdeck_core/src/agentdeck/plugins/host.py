"""The plugin host: finds plugins, isolates the broken ones, and keeps attributed registries.

Plugins are modules listed under the ``agentdeck`` entry-point group (the core's own in-memory
defaults are the ``memory`` entry point, loaded through exactly the same path). The host
imports each one separately, so a plugin that fails to import, implements a hook this core does
not define, or raises while registering is *named in a* :class:`PluginWarning`, listed by
:meth:`PluginHost.broken`, and skipped, and every other plugin still loads.

Registration hooks (:mod:`agentdeck.plugins.hookspecs`) are called one plugin at a time with a
``register`` callback bound to that plugin, so the host knows which plugin and distribution
provides each scheme, engine, observer, binding and settings section. A plugin's registrations
are committed only when all its hooks succeeded (a raising plugin leaves nothing behind). The
same name registered by two plugins is a :class:`~agentdeck.errors.ConfigError` naming both.

Which plugins load is controlled by two environment variables, read from the mapping given to
the host (by default ``os.environ``):

``AGENTDECK_PLUGINS``
    Comma-separated allowlist of entry-point names. Unset: every installed plugin loads. Set
    but empty: none does (not even the core's ``memory``).
``AGENTDECK_DISABLE_PLUGINS``
    Comma-separated denylist of entry-point names; it wins over the allowlist.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import import_module, metadata
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any, Generic, TypeVar, cast

import pluggy

from agentdeck.errors import ConfigError
from agentdeck.plugins import hookspecs
from agentdeck.plugins.hookspecs import PROJECT_NAME
from agentdeck.ports import (
    BackendRequest,
    Binding,
    CheckpointerFactory,
    ControlPort,
    Engine,
    EngineRequest,
    EventStore,
    LeasePort,
    Observer,
    SessionFactory,
)
from agentdeck.settings import CORE_SECTIONS, SettingsSection

__all__ = [
    "ALLOW_ENV",
    "BACKEND_KINDS",
    "BINDINGS",
    "CHECKPOINTERS",
    "CONTROL_PORTS",
    "DENY_ENV",
    "ENGINES",
    "EVENT_STORES",
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
    "default_host",
    "redact_url",
    "scheme_of",
]

ALLOW_ENV = "AGENTDECK_PLUGINS"
DENY_ENV = "AGENTDECK_DISABLE_PLUGINS"

_T = TypeVar("_T")


class PluginWarning(UserWarning):
    """A plugin was skipped (it failed to import, register or validate) or misconfigured."""


# =========================================================================== what can be registered


@dataclass(frozen=True, slots=True)
class BackendKind(Generic[_T]):
    """A kind of backend chosen by URL scheme, and the port its factories must return."""

    key: str
    """Registry key, as ``agentdeck plugins`` shows it (``event_stores``)."""
    hook: str
    port: type
    what: str
    """How an error message names one (``event store``)."""
    setting: str | None = None
    """The environment variable that chooses it, when there is one."""


@dataclass(frozen=True, slots=True)
class NamedKind(Generic[_T]):
    """A kind of component chosen by name (engines, observers, bindings)."""

    key: str
    hook: str
    port: type
    what: str


EVENT_STORES: BackendKind[EventStore] = BackendKind(
    "event_stores",
    "agentdeck_register_event_stores",
    EventStore,
    "event store",
    "AGENTDECK_EVENTS",
)
CONTROL_PORTS: BackendKind[ControlPort] = BackendKind(
    "control_ports",
    "agentdeck_register_control_ports",
    ControlPort,
    "control backend",
    "AGENTDECK_CONTROL",
)
LEASE_PORTS: BackendKind[LeasePort] = BackendKind(
    "lease_ports",
    "agentdeck_register_lease_ports",
    LeasePort,
    "lease backend",
    "AGENTDECK_CONTROL",
)
SESSION_FACTORIES: BackendKind[SessionFactory] = BackendKind(
    "session_factories",
    "agentdeck_register_session_factories",
    SessionFactory,
    "session backend",
    "AGENTDECK_SESSION",
)
CHECKPOINTERS: BackendKind[CheckpointerFactory] = BackendKind(
    "checkpointers",
    "agentdeck_register_checkpointers",
    CheckpointerFactory,
    "checkpointer",
    "AGENTDECK_CHECKPOINT",
)
ENGINES: NamedKind[Engine] = NamedKind("engines", "agentdeck_register_engines", Engine, "engine")
OBSERVERS: NamedKind[Observer] = NamedKind(
    "observers", "agentdeck_register_observers", Observer, "observer"
)
BINDINGS: NamedKind[Binding] = NamedKind(
    "bindings", "agentdeck_register_bindings", Binding, "binding"
)
SETTINGS = "settings"
"""Registry key of settings sections (hook ``agentdeck_register_settings``)."""
_SETTINGS_HOOK = "agentdeck_register_settings"

BACKEND_KINDS: tuple[BackendKind[Any], ...] = (
    EVENT_STORES,
    CONTROL_PORTS,
    LEASE_PORTS,
    SESSION_FACTORIES,
    CHECKPOINTERS,
)
NAMED_KINDS: tuple[NamedKind[Any], ...] = (ENGINES, OBSERVERS, BINDINGS)

# Where a missing first-party scheme comes from, so the error can say what to install.
_FIRST_PARTY_SCHEMES = {
    "sqlite": "agentdeck-stores",
    "redis": "agentdeck-stores",
    "rediss": "agentdeck-stores",
    "postgres": "agentdeck-stores",
    "postgresql": "agentdeck-stores",
}
_SCHEME_NAME = re.compile(r"^[a-z][a-z0-9+.\-]*$")
_COMPONENT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")
_CORE_PLUGIN = "agentdeck"
_CORE_DISTRIBUTION = "agentdeck-core"
_BUILTIN_MODULES = {
    "bindings": "agentdeck.bindings.plugin",
    "memory": "agentdeck.memory.plugin",
    "native": "agentdeck.native.plugin",
    "observers": "agentdeck.observers.plugin",
}


# =========================================================================== records


@dataclass(frozen=True, slots=True)
class PluginSource:
    """Where a plugin comes from: an entry point, or (in tests) a module handed over directly."""

    name: str
    """Entry-point name; what the allow/deny lists match."""
    load: Callable[[], object]
    distribution: str | None = None
    version: str | None = None
    value: str = ""
    """The entry point's target (``agentdeck.memory.plugin``), for listings."""

    def describe(self) -> str:
        if self.distribution is None:
            return f"plugin '{self.name}'"
        version = f" {self.version}" if self.version else ""
        return f"plugin '{self.name}' (distribution {self.distribution}{version})"


@dataclass(frozen=True, slots=True)
class Registration:
    """One thing a plugin registered, with who registered it."""

    kind: str
    name: str
    """The scheme, component name, or settings section key."""
    factory: Any
    """The factory (or, for settings, the section class)."""
    description: str
    plugin: str
    distribution: str | None
    version: str | None = None

    def owner(self) -> str:
        dist = self.distribution or "no distribution"
        return f"plugin '{self.plugin}' ({dist})"


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """A loaded plugin and what it provides, per registry (``{"event_stores": ["memory"]}``)."""

    name: str
    distribution: str | None
    version: str | None
    module: str
    provides: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "module": self.module,
            "provides": {key: list(names) for key, names in self.provides.items()},
        }


@dataclass(frozen=True, slots=True)
class BrokenPlugin:
    """A plugin that was skipped because it failed; ``reason`` says how."""

    name: str
    distribution: str | None
    version: str | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class DisabledPlugin:
    """An installed plugin not loaded because the allow/deny lists exclude it."""

    name: str
    distribution: str | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "distribution": self.distribution, "reason": self.reason}


class _RegistrationRefused(Exception):
    """Raised into a plugin's hook when it registers something malformed."""


# =========================================================================== the host


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
        self._loaded: dict[str, tuple[PluginSource, object]] = {}
        self._broken: list[BrokenPlugin] = []
        self._disabled: list[DisabledPlugin] = []
        self._registry: dict[str, dict[str, Registration]] = {k.key: {} for k in BACKEND_KINDS}
        self._registry.update({k.key: {} for k in NAMED_KINDS})
        self._registry[SETTINGS] = {
            section.section: Registration(
                SETTINGS, section.section, section, "", _CORE_PLUGIN, _CORE_DISTRIBUTION
            )
            for section in CORE_SECTIONS
        }
        self._load(list(sources), os.environ if env is None else env)

    @classmethod
    def discover(cls, env: Mapping[str, str] | None = None) -> PluginHost:
        """Load every plugin installed under the ``agentdeck`` entry-point group.

        The core's own default plugins are included even when the core runs from a source tree
        without installed metadata, so ``memory://`` is always available unless disabled.
        """
        sources = []
        for ep in entry_points(group=PROJECT_NAME):
            dist = ep.dist
            sources.append(
                PluginSource(
                    name=ep.name,
                    load=ep.load,
                    distribution=dist.name if dist is not None else None,
                    version=dist.version if dist is not None else None,
                    value=ep.value,
                )
            )
        declared = {source.value for source in sources}
        for name, module in _BUILTIN_MODULES.items():
            if module not in declared:
                sources.append(_builtin_source(name, module))
        sources.sort(key=lambda s: (s.name, s.distribution or ""))
        return cls(sources, env=env)

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
        sources = []
        for plugin in plugins:
            if isinstance(plugin, PluginSource):
                sources.append(plugin)
                continue
            if isinstance(plugin, tuple):
                name, target = plugin
            else:
                name, target = _plugin_name(plugin), plugin
            sources.append(
                PluginSource(name=str(name), load=_constant(target), value=_plugin_name(target))
            )
        return cls(sources, env={} if env is None else env)

    # ----------------------------------------------------------------------- loading

    def _load(self, sources: list[PluginSource], env: Mapping[str, str]) -> None:
        allow = _name_list(env.get(ALLOW_ENV))
        deny = _name_list(env.get(DENY_ENV)) or set()
        conflicts: list[str] = []

        if allow is not None:
            unknown = sorted(allow - {source.name for source in sources})
            if unknown:
                warnings.warn(
                    f"{ALLOW_ENV} names {', '.join(map(repr, unknown))}, which no installed "
                    f"plugin declares; installed: {', '.join(s.name for s in sources) or 'none'}",
                    PluginWarning,
                    stacklevel=4,
                )

        seen: dict[str, PluginSource] = {}
        for source in sources:
            if source.name in deny:
                self._disabled.append(
                    DisabledPlugin(source.name, source.distribution, f"listed in {DENY_ENV}")
                )
                continue
            if allow is not None and source.name not in allow:
                self._disabled.append(
                    DisabledPlugin(source.name, source.distribution, f"not listed in {ALLOW_ENV}")
                )
                continue
            if source.name in seen:
                conflicts.append(
                    f"entry point '{source.name}' is declared by both "
                    f"{seen[source.name].describe()} and {source.describe()}"
                )
                continue
            seen[source.name] = source
            try:
                plugin = source.load()
            except Exception as exc:
                self._fail(source, f"failed to import: {_describe_exc(exc)}")
                continue
            try:
                self.pm.register(plugin, name=source.name)
            except Exception as exc:
                # pluggy may have added the implementations it validated before the failing one.
                if self.pm.has_plugin(source.name):
                    self.pm.unregister(name=source.name)
                self._fail(source, f"could not be registered: {_describe_exc(exc)}")
                continue
            self._loaded[source.name] = (source, plugin)

        # A hook this core does not define is most likely a typo or a plugin built for a newer
        # core: either way its registrations cannot be trusted, so the whole plugin is dropped.
        for name, (source, plugin) in list(self._loaded.items()):
            unknown_hooks = self._unknown_hooks(plugin)
            if unknown_hooks:
                self._drop(name)
                self._fail(
                    source,
                    "implements hooks this version of agentdeck does not define: "
                    + ", ".join(unknown_hooks),
                )
        self.pm.check_pending()  # nothing unknown is left; pluggy agrees

        for name, (source, plugin) in list(self._loaded.items()):
            staged: list[Registration] = []
            hook_name = ""
            try:
                for hook_name, register in self._callbacks(source, staged):
                    caller = self._only(plugin, hook_name)
                    if caller is not None:
                        _require_sync(hook_name, caller(register=register))
            except Exception as exc:
                self._drop(name)
                what = (
                    f"failed validation in {hook_name}: {exc}"
                    if isinstance(exc, _RegistrationRefused)
                    else f"raised {_describe_exc(exc)} in {hook_name}"
                )
                self._fail(source, f"{what}; nothing it registered was kept")
                continue
            conflicts.extend(self._commit(staged))

        if conflicts:
            raise ConfigError(
                "plugins clash: "
                + "; ".join(conflicts)
                + f". Uninstall one of them, or disable one with {DENY_ENV}=<plugin name>",
                setting=DENY_ENV,
            )

    def _unknown_hooks(self, plugin: object) -> list[str]:
        callers = self.pm.get_hookcallers(plugin) or []
        return sorted(
            caller.name
            for caller in callers
            if not caller.has_spec()
            and any(
                impl.plugin is plugin and not impl.optionalhook for impl in caller.get_hookimpls()
            )
        )

    def _only(self, plugin: object, hook_name: str) -> pluggy.HookCaller | None:
        """A caller for ``hook_name`` that calls only ``plugin``'s implementation (if any)."""
        caller: pluggy.HookCaller = getattr(self.pm.hook, hook_name)
        if not any(impl.plugin is plugin for impl in caller.get_hookimpls()):
            return None
        others = [other for other in self.pm.get_plugins() if other is not plugin]
        return self.pm.subset_hook_caller(hook_name, remove_plugins=others)

    def _callbacks(
        self, source: PluginSource, staged: list[Registration]
    ) -> Iterable[tuple[str, Callable[..., None]]]:
        for backend_kind in BACKEND_KINDS:
            yield backend_kind.hook, _scheme_register(backend_kind, source, staged)
        for named_kind in NAMED_KINDS:
            yield named_kind.hook, _named_register(named_kind, source, staged)
        yield _SETTINGS_HOOK, _settings_register(source, staged)

    def _commit(self, staged: list[Registration]) -> list[str]:
        conflicts = []
        for registration in staged:
            registry = self._registry[registration.kind]
            existing = registry.get(registration.name)
            if existing is None and registration.kind == SETTINGS:
                existing = _env_var_clash(registration, registry.values())
            if existing is not None:
                label = _KIND_LABELS.get(registration.kind, registration.kind)
                conflicts.append(
                    f"{label} '{registration.name}' is registered by both "
                    f"{existing.owner()} and {registration.owner()}"
                )
                continue
            registry[registration.name] = registration
        return conflicts

    def _drop(self, name: str) -> None:
        _, plugin = self._loaded.pop(name)
        self.pm.unregister(plugin)

    def _fail(self, source: PluginSource, reason: str) -> None:
        self._broken.append(BrokenPlugin(source.name, source.distribution, source.version, reason))
        warnings.warn(
            f"AgentDeck {source.describe()} was skipped: it {reason}",
            PluginWarning,
            stacklevel=5,
        )

    # ----------------------------------------------------------------------- introspection

    def plugins(self) -> list[PluginInfo]:
        """The loaded plugins, with distribution, version and what each provides."""
        infos = []
        for name, (source, _plugin) in self._loaded.items():
            provides: dict[str, list[str]] = {}
            for key, registry in self._registry.items():
                names = sorted(n for n, r in registry.items() if r.plugin == name)
                if names:
                    provides[key] = names
            infos.append(
                PluginInfo(name, source.distribution, source.version, source.value, provides)
            )
        return infos

    def broken(self) -> list[BrokenPlugin]:
        """Plugins that were skipped because they failed, with the reason."""
        return list(self._broken)

    def disabled(self) -> list[DisabledPlugin]:
        """Installed plugins the allow/deny lists kept from loading."""
        return list(self._disabled)

    def registrations(self, kind: str) -> list[Registration]:
        """Everything registered under ``kind`` (``"event_stores"``, ``"engines"``, ...)."""
        if kind not in self._registry:
            raise ConfigError(
                f"unknown registry '{kind}'", setting=None, accepted=sorted(self._registry)
            )
        return [r for r in self._registry[kind].values() if r.plugin != _CORE_PLUGIN]

    def schemes(self, kind: BackendKind[Any]) -> list[str]:
        """The URL schemes installed plugins offer for ``kind``."""
        return sorted(self._registry[kind.key])

    def names(self, kind: NamedKind[Any]) -> list[str]:
        """The names installed plugins offer for ``kind``."""
        return sorted(self._registry[kind.key])

    # ----------------------------------------------------------------------- backends

    def backend(
        self, kind: BackendKind[_T], request: BackendRequest, *, setting: str | None = None
    ) -> _T:
        """Build the ``kind`` backend for ``request.url`` with the plugin owning its scheme.

        ``setting`` names the variable the URL came from, for error messages; by default it is
        inferred from ``request.settings`` (``AGENTDECK_STATE`` when the URL was derived from
        it) or the kind's own variable.
        """
        setting = setting or _setting_for(kind, request)
        scheme = scheme_of(request.url, setting=setting)
        registration = self._registry[kind.key].get(scheme)
        if registration is None:
            raise self._unknown_scheme(kind, request.url, scheme, setting)
        built = registration.factory(request)
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

    def _unknown_scheme(
        self, kind: BackendKind[Any], url: str, scheme: str, setting: str | None
    ) -> ConfigError:
        offered = self._registry[kind.key]
        subject = f"{setting}={redact_url(url)!r}" if setting else repr(redact_url(url))
        if offered:
            listing = ", ".join(f"{s} ({r.distribution or r.plugin})" for s, r in offered.items())
            message = f"schemes installed plugins offer: {listing}"
        else:
            message = f"no installed plugin offers any {kind.what}"
        hint = _FIRST_PARTY_SCHEMES.get(scheme)
        if hint:
            message += f"; install {hint} for '{scheme}://'"
        if self._disabled:
            message += f"; not loaded because of {ALLOW_ENV}/{DENY_ENV}: " + ", ".join(
                d.name for d in self._disabled
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
        registration = self._registry[kind.key].get(name)
        if registration is None:
            offered = sorted(self._registry[kind.key])
            raise ConfigError(
                f"no installed plugin provides {_a(kind.what)} named '{name}'; "
                + (f"available: {', '.join(offered)}" if offered else "none is installed"),
                setting=None,
                accepted=offered,
            )
        built = registration.factory(**options)
        if not isinstance(built, kind.port):
            raise ConfigError(
                f"{registration.owner()} registered {_a(kind.what)} factory for '{name}' that "
                f"returned {type(built).__name__}, not {_a(kind.port.__name__)}"
            )
        return cast(_T, built)

    def engines(self, request: EngineRequest | None = None) -> list[Engine]:
        """A fresh instance of every registered engine, built for ``request``, in name order."""
        engines = []
        for name in self.names(ENGINES):
            engine = self.named(ENGINES, name, request=request or EngineRequest())
            if getattr(engine, "name", None) != name:
                owner = self._registry[ENGINES.key][name].owner()
                raise ConfigError(
                    f"{owner} registered engine '{name}' but its factory built an engine named "
                    f"{getattr(engine, 'name', None)!r}; the two must match"
                )
            engines.append(engine)
        return engines

    def observer(self, name: str, **options: Any) -> Observer:
        """The observer registered as ``name``, built with ``options``."""
        return self.named(OBSERVERS, name, **options)

    def binding(self, name: str, **options: Any) -> Binding:
        """The binding registered as ``name``, built with ``options``."""
        return self.named(BINDINGS, name, **options)

    def settings_sections(self) -> list[type[SettingsSection]]:
        """The settings sections plugins registered (the core's own are not included)."""
        return [r.factory for r in self.registrations(SETTINGS)]


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
    env = {key: value for key, value in ((ALLOW_ENV, allow), (DENY_ENV, deny)) if value is not None}
    return PluginHost.discover(env)


# =========================================================================== URLs


def scheme_of(url: str, *, setting: str | None = None) -> str:
    """The scheme of a scheme-shaped URL: everything before ``://``, lower-cased.

    Schemes are compared exactly, so ``redis``/``rediss`` and ``postgres``/``postgresql`` are
    different schemes (a plugin registers each it serves).
    """
    scheme, separator, _ = url.partition("://")
    if not separator or not _SCHEME_NAME.match(scheme.lower()):
        subject = f"{setting}={redact_url(url)!r}" if setting else repr(redact_url(url))
        raise ConfigError(
            f"{subject} is not a scheme-shaped URL; accepted: '<scheme>://...' such as "
            "memory://, sqlite:///path/to/state.db, redis://host:6379/0, postgresql://user@host/db",
            setting=setting,
        )
    return scheme.lower()


def redact_url(url: str) -> str:
    """``url`` with any password in its authority replaced by ``***``."""
    return re.sub(r"^([^:/?#]+://[^:/?#@]*):[^@/?#]*@", r"\1:***@", url)


# =========================================================================== internals

_KIND_LABELS = {
    **{kind.key: f"{kind.what} scheme" for kind in BACKEND_KINDS},
    **{kind.key: kind.what for kind in NAMED_KINDS},
    SETTINGS: "settings section",
}


def _scheme_register(
    kind: BackendKind[Any], source: PluginSource, staged: list[Registration]
) -> Callable[..., None]:
    # Parameters are typed `object`: these check what a plugin passed at runtime.
    def register(scheme: object, factory: object, *, description: object = "") -> None:
        if not isinstance(scheme, str) or not _SCHEME_NAME.match(scheme):
            raise _RegistrationRefused(
                f"{kind.what} scheme {scheme!r} is not a lower-case URL scheme "
                "(register 'sqlite', not 'sqlite://')"
            )
        _stage(staged, source, kind.key, kind.what, scheme, factory, description)

    return register


def _named_register(
    kind: NamedKind[Any], source: PluginSource, staged: list[Registration]
) -> Callable[..., None]:
    def register(name: object, factory: object, *, description: object = "") -> None:
        if not isinstance(name, str) or not _COMPONENT_NAME.match(name):
            raise _RegistrationRefused(
                f"{kind.what} name {name!r} must be a non-empty word (letters, digits, _ . -)"
            )
        _stage(staged, source, kind.key, kind.what, name, factory, description)

    return register


def _settings_register(source: PluginSource, staged: list[Registration]) -> Callable[..., None]:
    def register(section: object) -> None:
        if not (isinstance(section, type) and issubclass(section, SettingsSection)):
            raise _RegistrationRefused(f"{section!r} is not a SettingsSection subclass")
        if not section.section:
            raise _RegistrationRefused(
                f"{section.__qualname__} declares no `section` (its key in config.yaml)"
            )
        summary = (section.__doc__ or "").strip().split("\n")[0]
        staged.append(
            Registration(
                kind=SETTINGS,
                name=section.section,
                factory=section,
                description=summary,
                plugin=source.name,
                distribution=source.distribution,
                version=source.version,
            )
        )

    return register


def _stage(
    staged: list[Registration],
    source: PluginSource,
    key: str,
    what: str,
    name: str,
    factory: object,
    description: object,
) -> None:
    if not callable(factory):
        raise _RegistrationRefused(f"the factory for {what} '{name}' is not callable: {factory!r}")
    if not isinstance(description, str):
        raise _RegistrationRefused(f"the description of {what} '{name}' is not a string")
    staged.append(
        Registration(
            kind=key,
            name=name,
            factory=factory,
            description=description,
            plugin=source.name,
            distribution=source.distribution,
            version=source.version,
        )
    )


def _env_var_clash(
    registration: Registration, registered: Iterable[Registration]
) -> Registration | None:
    mine = set(cast(type[SettingsSection], registration.factory).env_vars())
    for other in registered:
        if mine & set(cast(type[SettingsSection], other.factory).env_vars()):
            return other
    return None


def _setting_for(kind: BackendKind[Any], request: BackendRequest) -> str | None:
    settings = request.settings
    if settings is not None:
        if kind is EVENT_STORES and request.url == settings.events_url:
            return settings.events_setting
        if kind in (CONTROL_PORTS, LEASE_PORTS) and request.url == settings.control_url:
            return settings.control_setting
    return kind.setting


def _require_sync(hook_name: str, results: object) -> None:
    # An `async def` implementation returns an un-awaited coroutine and never registers anything.
    for result in results if isinstance(results, list) else [results]:
        if inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()
            raise _RegistrationRefused(
                "the implementation is async; registration hooks must be plain functions that "
                f"call register() before returning ({hook_name})"
            )


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


def _name_list(value: str | None) -> set[str] | None:
    if value is None:
        return None
    return {name.strip() for name in value.split(",") if name.strip()}


def _describe_exc(exc: BaseException) -> str:
    message = str(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _plugin_name(plugin: object) -> str:
    name = getattr(plugin, "__name__", None)
    return str(name) if isinstance(name, str) else type(plugin).__name__


def _constant(value: object) -> Callable[[], object]:
    return lambda: value


def core_version() -> str:
    """The installed agentdeck-core's version, from its distribution's metadata (read once).

    Read from the metadata rather than from ``agentdeck.__version__`` so the host (and the CLI,
    which shows it) never imports the package root, which imports every layer.
    """
    return _core_version()


@functools.cache
def _core_version() -> str:
    try:
        return metadata.version(_CORE_DISTRIBUTION)
    except metadata.PackageNotFoundError:  # pragma: no cover - a source tree not installed
        return "0+unknown"


def _builtin_source(name: str, module: str) -> PluginSource:
    return PluginSource(
        name=name,
        load=lambda: import_module(module),
        distribution=_CORE_DISTRIBUTION,
        version=core_version(),
        value=module,
    )
