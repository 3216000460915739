"""The registries: what can be registered, who registered it, and the ``register`` callbacks
that check each registration as a plugin makes it.

One :class:`Registry` per host keeps a table per kind (event stores by scheme, engines by name,
settings sections by key, ...). Each plugin's hooks are called with callbacks bound to that
plugin (:meth:`Registry.callbacks`), which refuse a malformed registration on the spot with a
:class:`~agentdeck.errors.ConfigError` raised into the plugin's hook, and *stage* the rest; the
loader commits a plugin's staged registrations only once all its hooks returned
(:meth:`Registry.commit`), so a plugin that raises halfway leaves nothing behind. Every
:class:`Registration` carries its plugin and distribution: that attribution is what lets a clash
name both plugins and ``agentdeck plugins`` say who provides what.

Nothing registered is built or imported here: factories are kept as given, and an engine
registered as an :class:`~agentdeck.ports.EngineRef` stays a string until the host resolves it.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from agentdeck.errors import ConfigError
from agentdeck.plugins.urls import SCHEME_NAME
from agentdeck.ports import (
    Binding,
    CheckpointerFactory,
    ControlPort,
    Engine,
    EngineRef,
    EventStore,
    Execution,
    HeadlessEngine,
    LeasePort,
    Observer,
    SessionFactory,
)
from agentdeck.settings import CORE_SECTIONS, SettingsSection

__all__ = [
    "BACKEND_KINDS",
    "BINDINGS",
    "CHECKPOINTERS",
    "CONTROL_PORTS",
    "CORE_DISTRIBUTION",
    "CORE_PLUGIN",
    "ENGINES",
    "EVENT_STORES",
    "EXECUTIONS",
    "LEASE_PORTS",
    "NAMED_KINDS",
    "OBSERVERS",
    "SESSION_FACTORIES",
    "SETTINGS",
    "SETTINGS_HOOK",
    "BackendKind",
    "NamedKind",
    "Registration",
    "RegistrationRefused",
    "Registry",
    "is_headless",
]

_T = TypeVar("_T")

CORE_PLUGIN = "agentdeck"
"""The owner named on the core's own settings sections (they come from no plugin)."""
CORE_DISTRIBUTION = "agentdeck-core"


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
EXECUTIONS: BackendKind[Execution] = BackendKind(
    "executions",
    "agentdeck_register_executions",
    Execution,
    "execution backend",
    "AGENTDECK_EXECUTION",
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
SETTINGS_HOOK = "agentdeck_register_settings"

BACKEND_KINDS: tuple[BackendKind[Any], ...] = (
    EVENT_STORES,
    CONTROL_PORTS,
    LEASE_PORTS,
    SESSION_FACTORIES,
    CHECKPOINTERS,
    EXECUTIONS,
)
NAMED_KINDS: tuple[NamedKind[Any], ...] = (ENGINES, OBSERVERS, BINDINGS)

_COMPONENT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")
_KIND_LABELS = {
    **{kind.key: f"{kind.what} scheme" for kind in BACKEND_KINDS},
    **{kind.key: kind.what for kind in NAMED_KINDS},
    SETTINGS: "settings section",
}


# =========================================================================== records


@dataclass(frozen=True, slots=True)
class Registration:
    """One thing a plugin registered, with who registered it."""

    kind: str
    name: str
    """The scheme, component name, or settings section key."""
    factory: object
    """What the plugin registered, as given: a backend or component factory, an engine class or
    :class:`~agentdeck.ports.EngineRef`, or (for settings) the section class."""
    description: str
    plugin: str
    distribution: str | None
    version: str | None = None

    def owner(self) -> str:
        dist = self.distribution or "no distribution"
        return f"plugin '{self.plugin}' ({dist})"


def is_headless(registration: Registration) -> bool:
    """Whether a registered engine declares headless runs, read without importing it."""
    engine = registration.factory
    if isinstance(engine, EngineRef):
        return engine.headless
    return isinstance(engine, type) and issubclass(engine, HeadlessEngine)


class RegistrationRefused(ConfigError):
    """Raised into a plugin's hook when it registers something malformed.

    A :class:`~agentdeck.errors.ConfigError` to the plugin; the loader tells it apart from
    anything else the hook raised, so the skipped plugin's reason says "failed validation".
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, setting=None)


# =========================================================================== the registry


class Registry:
    """Every kind's table of committed registrations, the core's own settings sections included."""

    def __init__(self) -> None:
        self._tables: dict[str, dict[str, Registration]] = {k.key: {} for k in BACKEND_KINDS}
        self._tables.update({k.key: {} for k in NAMED_KINDS})
        self._tables[SETTINGS] = {
            section.section: Registration(
                SETTINGS, section.section, section, "", CORE_PLUGIN, CORE_DISTRIBUTION
            )
            for section in CORE_SECTIONS
        }

    def kinds(self) -> list[str]:
        """Every registry key (``event_stores``, ..., ``settings``)."""
        return list(self._tables)

    def table(self, key: str) -> Mapping[str, Registration]:
        """The committed registrations of one kind, by scheme or name."""
        return self._tables[key]

    def callbacks(
        self, plugin: str, distribution: str | None, version: str | None, staged: list[Registration]
    ) -> Iterable[tuple[str, Callable[..., None]]]:
        """``(hook name, register callback)`` for every hook, bound to one plugin; what the
        callbacks accept is appended to ``staged``."""
        owner = _Owner(plugin, distribution, version)
        for backend_kind in BACKEND_KINDS:
            yield backend_kind.hook, _scheme_register(backend_kind, owner, staged)
        for named_kind in NAMED_KINDS:
            if named_kind is ENGINES:
                yield named_kind.hook, _engine_register(owner, staged)
            else:
                yield named_kind.hook, _named_register(named_kind, owner, staged)
        yield SETTINGS_HOOK, _settings_register(owner, staged)

    def commit(self, staged: Iterable[Registration]) -> list[str]:
        """Record ``staged``; a clash with an earlier registration is recorded as a message
        naming both owners (returned) and not committed."""
        conflicts = []
        for registration in staged:
            table = self._tables[registration.kind]
            existing = table.get(registration.name)
            if existing is None and registration.kind == SETTINGS:
                existing = _env_var_clash(registration, table.values())
            if existing is not None:
                label = _KIND_LABELS.get(registration.kind, registration.kind)
                conflicts.append(
                    f"{label} '{registration.name}' is registered by both "
                    f"{existing.owner()} and {registration.owner()}"
                )
                continue
            table[registration.name] = registration
        return conflicts


# =========================================================================== the callbacks


@dataclass(frozen=True, slots=True)
class _Owner:
    plugin: str
    distribution: str | None
    version: str | None

    def record(self, kind: str, name: str, factory: object, description: str) -> Registration:
        return Registration(
            kind=kind,
            name=name,
            factory=factory,
            description=description,
            plugin=self.plugin,
            distribution=self.distribution,
            version=self.version,
        )


# The callbacks' parameters are typed `object`: they check at runtime what a plugin passed. The
# types a plugin author sees are the Register* protocols of agentdeck.plugins.hookspecs.


def _scheme_register(
    kind: BackendKind[Any], owner: _Owner, staged: list[Registration]
) -> Callable[..., None]:
    def register(scheme: object, factory: object, *, description: object = "") -> None:
        if not isinstance(scheme, str) or not SCHEME_NAME.match(scheme):
            raise RegistrationRefused(
                f"{kind.what} scheme {scheme!r} is not a lower-case URL scheme "
                "(register 'sqlite', not 'sqlite://')"
            )
        _check_factory(kind.what, scheme, factory)
        staged.append(
            owner.record(kind.key, scheme, factory, _description(kind.what, scheme, description))
        )

    return register


def _named_register(
    kind: NamedKind[Any], owner: _Owner, staged: list[Registration]
) -> Callable[..., None]:
    def register(name: object, factory: object, *, description: object = "") -> None:
        checked = _checked_name(kind.what, name)
        _check_factory(kind.what, checked, factory)
        staged.append(
            owner.record(kind.key, checked, factory, _description(kind.what, checked, description))
        )

    return register


def _engine_how(engine_class: str = "MyEngine", name: str = "<name>") -> str:
    """What to write instead, in the words of the registration that was refused."""
    return (
        f"register the engine class -- register({engine_class}, description=...), where "
        f"{engine_class} subclasses agentdeck.ports.Engine and declares name = {name!r} -- or, "
        "to import it only when a deck first builds, "
        f"register(EngineRef('package.module:{engine_class}', name={name!r}), description=...)"
    )


def _engine_register(owner: _Owner, staged: list[Registration]) -> Callable[..., None]:
    def register(engine: object, /, *legacy: object, description: object = "") -> None:
        if isinstance(engine, str) or legacy:
            given = ", ".join(_label(x) for x in (engine, *legacy))
            name = engine if isinstance(engine, str) else "<name>"
            factory = legacy[0] if legacy else None
            named_class = (
                factory.__name__
                if isinstance(factory, type) and issubclass(factory, Engine)
                else "MyEngine"
            )
            raise RegistrationRefused(
                f"register({given}) is the old way to register an engine (a name and a "
                f"factory); {_engine_how(named_class, name)}"
            )
        if isinstance(engine, EngineRef):
            name = _checked_name("engine", engine.name)
        elif isinstance(engine, type) and issubclass(engine, Engine):
            name = _declared_name(engine)
        else:
            raise RegistrationRefused(
                f"register() takes an Engine subclass or an EngineRef, not {_label(engine)}; "
                + _engine_how()
            )
        staged.append(
            owner.record(ENGINES.key, name, engine, _description("engine", name, description))
        )

    return register


def _settings_register(owner: _Owner, staged: list[Registration]) -> Callable[..., None]:
    def register(section: object) -> None:
        if not (isinstance(section, type) and issubclass(section, SettingsSection)):
            raise RegistrationRefused(f"{section!r} is not a SettingsSection subclass")
        if not section.section:
            raise RegistrationRefused(
                f"{section.__qualname__} declares no `section` (its key in config.yaml)"
            )
        summary = (section.__doc__ or "").strip().split("\n")[0]
        staged.append(owner.record(SETTINGS, section.section, section, summary))

    return register


def _checked_name(what: str, name: object) -> str:
    if not isinstance(name, str) or not _COMPONENT_NAME.match(name):
        raise RegistrationRefused(
            f"{what} name {name!r} must be a non-empty word (letters, digits, _ . -)"
        )
    return name


def _check_factory(what: str, name: str, factory: object) -> None:
    if not callable(factory):
        raise RegistrationRefused(f"the factory for {what} '{name}' is not callable: {factory!r}")


def _description(what: str, name: str, description: object) -> str:
    if not isinstance(description, str):
        raise RegistrationRefused(f"the description of {what} '{name}' is not a string")
    return description


def _declared_name(engine: type[Engine]) -> str:
    name = getattr(engine, "name", None)
    if not isinstance(name, str):
        raise RegistrationRefused(
            f"engine class {engine.__qualname__} declares no name; give it a class attribute "
            "name: ClassVar[str] = '<name>' (the name decks and listings use)"
        )
    _checked_name("engine", name)
    if inspect.isabstract(engine):
        missing = ", ".join(sorted(getattr(engine, "__abstractmethods__", ())))
        raise RegistrationRefused(
            f"engine class {engine.__qualname__} ('{name}') is abstract: it does not "
            f"implement {missing}"
        )
    return name


def _label(value: object) -> str:
    if isinstance(value, str):
        return repr(value)
    qualname = getattr(value, "__qualname__", None)
    return str(qualname) if isinstance(qualname, str) else repr(value)


def _env_var_clash(
    registration: Registration, registered: Iterable[Registration]
) -> Registration | None:
    mine = set(cast(type[SettingsSection], registration.factory).env_vars())
    for other in registered:
        if mine & set(cast(type[SettingsSection], other.factory).env_vars()):
            return other
    return None
