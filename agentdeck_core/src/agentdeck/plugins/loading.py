"""Finding and loading plugins, one at a time, so a broken one is named and skipped.

Plugins are modules listed under the ``agentdeck`` entry-point group (the core's own defaults
are entry points of agentdeck-core, loaded through exactly the same path). :func:`load_plugins`
imports each one separately, so a plugin that fails to import, implements a hook this core does
not define, registers something malformed or raises while registering is *named in a*
:class:`PluginWarning`, recorded as a :class:`~agentdeck.plugins.listing.BrokenPlugin`, and
skipped with everything it registered rolled back, while every other plugin still loads.

Registration hooks are called one plugin at a time, with ``register`` callbacks bound to that
plugin (:meth:`~agentdeck.plugins.registry.Registry.callbacks`), and its registrations are
committed only when all its hooks succeeded. Two plugins claiming one scheme, name or entry
point fail the whole load with one :class:`~agentdeck.errors.ConfigError` naming every clash:
which of the two to keep is the user's choice, not ours.

Which plugins load is controlled by two environment variables, read from the mapping given
(by default ``os.environ``):

``AGENTDECK_PLUGINS``
    Comma-separated allowlist of entry-point names. Unset: every installed plugin loads. Set
    but empty: none does (not even the core's ``memory``).
``AGENTDECK_DISABLE_PLUGINS``
    Comma-separated denylist of entry-point names; it wins over the allowlist.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import import_module, metadata
from importlib.metadata import entry_points
from types import ModuleType

import pluggy

from agentdeck.errors import ConfigError
from agentdeck.plugins.hookspecs import PROJECT_NAME
from agentdeck.plugins.listing import BrokenPlugin, DisabledPlugin
from agentdeck.plugins.registry import (
    CORE_DISTRIBUTION,
    Registration,
    RegistrationRefused,
    Registry,
)

__all__ = [
    "ALLOW_ENV",
    "DENY_ENV",
    "LoadedPlugins",
    "PluginSource",
    "PluginWarning",
    "core_version",
    "discover_sources",
    "given_sources",
    "load_plugins",
]

ALLOW_ENV = "AGENTDECK_PLUGINS"
DENY_ENV = "AGENTDECK_DISABLE_PLUGINS"

_BUILTIN_MODULES = {
    "bindings": "agentdeck.bindings.plugin",
    "execution": "agentdeck.runtime.in_process",
    "memory": "agentdeck.memory.plugin",
    "native": "agentdeck.native.plugin",
    "observers": "agentdeck.observers.plugin",
    "sqlite": "agentdeck.sqlite.plugin",
}


class PluginWarning(UserWarning):
    """A plugin was skipped (it failed to import, register or validate) or misconfigured."""


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


@dataclass(slots=True)
class LoadedPlugins:
    """What :func:`load_plugins` made of its sources."""

    loaded: dict[str, tuple[PluginSource, object]] = field(default_factory=dict)
    """Entry-point name -> (source, plugin object), in load order."""
    broken: list[BrokenPlugin] = field(default_factory=list)
    disabled: list[DisabledPlugin] = field(default_factory=list)


# =========================================================================== sources


def discover_sources() -> list[PluginSource]:
    """Every plugin installed under the ``agentdeck`` entry-point group, in name order.

    The core's own default plugins are included even when the core runs from a source tree
    without installed metadata, so ``memory://`` and ``sqlite://`` (the default state) are
    always available unless disabled.
    """
    sources = []
    for ep in entry_points(group=PROJECT_NAME):
        # ``Distribution.name`` and ``.version`` each read and parse the METADATA file again;
        # one parse per plugin gives both (this runs on every command that loads plugins).
        about = ep.dist.metadata if ep.dist is not None else None
        sources.append(
            PluginSource(
                name=ep.name,
                load=ep.load,
                distribution=about["Name"] if about is not None else None,
                version=about["Version"] if about is not None else None,
                value=ep.value,
            )
        )
    declared = {source.value for source in sources}
    for name, module in _BUILTIN_MODULES.items():
        if module not in declared:
            sources.append(_builtin_source(name, module))
    sources.sort(key=lambda s: (s.name, s.distribution or ""))
    return sources


def given_sources(
    plugins: Iterable[ModuleType | PluginSource | tuple[str, object] | object],
) -> list[PluginSource]:
    """Sources for plugins handed over directly: a module (named by its ``__name__``), a
    ``(name, plugin)`` pair, or a :class:`PluginSource` kept as it is."""
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
    return sources


def core_version() -> str:
    """The installed agentdeck-core's version, from its distribution's metadata (read once).

    Read from the metadata rather than from ``agentdeck.__version__`` so the host (and the CLI,
    which shows it) never imports the package root, which imports every layer.
    """
    return _core_version()


@functools.cache
def _core_version() -> str:
    try:
        return metadata.version(CORE_DISTRIBUTION)
    except metadata.PackageNotFoundError:  # pragma: no cover - a source tree not installed
        return "0+unknown"


def _builtin_source(name: str, module: str) -> PluginSource:
    return PluginSource(
        name=name,
        load=lambda: import_module(module),
        distribution=CORE_DISTRIBUTION,
        version=core_version(),
        value=module,
    )


# =========================================================================== loading


def load_plugins(
    pm: pluggy.PluginManager,
    sources: list[PluginSource],
    env: Mapping[str, str],
    registry: Registry,
) -> LoadedPlugins:
    """Load ``sources`` into ``pm`` in order, applying the allow/deny lists in ``env``, and fill
    ``registry`` with what each plugin registers.

    Broken plugins are skipped with a :class:`PluginWarning` (and listed in the result); raises
    :class:`~agentdeck.errors.ConfigError` when two plugins claim one scheme, name or entry point.
    """
    outcome = LoadedPlugins()
    allow = _name_list(env.get(ALLOW_ENV))
    deny = _name_list(env.get(DENY_ENV)) or set()
    conflicts: list[str] = []

    def fail(source: PluginSource, reason: str) -> None:
        outcome.broken.append(
            BrokenPlugin(source.name, source.distribution, source.version, reason)
        )
        warnings.warn(
            f"AgentDeck {source.describe()} was skipped: it {reason}",
            PluginWarning,
            stacklevel=5,  # the caller of PluginHost(...), discover() or from_plugins()
        )

    def drop(name: str) -> None:
        _, plugin = outcome.loaded.pop(name)
        pm.unregister(plugin)

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
            outcome.disabled.append(
                DisabledPlugin(source.name, source.distribution, f"listed in {DENY_ENV}")
            )
            continue
        if allow is not None and source.name not in allow:
            outcome.disabled.append(
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
            fail(source, f"failed to import: {_describe_exc(exc)}")
            continue
        try:
            pm.register(plugin, name=source.name)
        except Exception as exc:
            # pluggy may have added the implementations it validated before the failing one.
            if pm.has_plugin(source.name):
                pm.unregister(name=source.name)
            fail(source, f"could not be registered: {_describe_exc(exc)}")
            continue
        outcome.loaded[source.name] = (source, plugin)

    # A hook this core does not define is most likely a typo or a plugin built for a newer
    # core: either way its registrations cannot be trusted, so the whole plugin is dropped.
    for name, (source, plugin) in list(outcome.loaded.items()):
        unknown_hooks = _unknown_hooks(pm, plugin)
        if unknown_hooks:
            drop(name)
            fail(
                source,
                "implements hooks this version of agentdeck does not define: "
                + ", ".join(unknown_hooks),
            )
    pm.check_pending()  # nothing unknown is left; pluggy agrees

    for name, (source, plugin) in list(outcome.loaded.items()):
        staged: list[Registration] = []
        hook_name = ""
        try:
            callbacks = registry.callbacks(source.name, source.distribution, source.version, staged)
            for hook_name, register in callbacks:
                caller = _only(pm, plugin, hook_name)
                if caller is not None:
                    _require_sync(hook_name, caller(register=register))
        except Exception as exc:
            drop(name)
            what = (
                f"failed validation in {hook_name}: {exc}"
                if isinstance(exc, RegistrationRefused)
                else f"raised {_describe_exc(exc)} in {hook_name}"
            )
            fail(source, f"{what}; nothing it registered was kept")
            continue
        conflicts.extend(registry.commit(staged))

    if conflicts:
        raise ConfigError(
            "plugins clash: "
            + "; ".join(conflicts)
            + f". Uninstall one of them, or disable one with {DENY_ENV}=<plugin name>",
            setting=DENY_ENV,
        )
    return outcome


def _unknown_hooks(pm: pluggy.PluginManager, plugin: object) -> list[str]:
    callers = pm.get_hookcallers(plugin) or []
    return sorted(
        caller.name
        for caller in callers
        if not caller.has_spec()
        and any(impl.plugin is plugin and not impl.optionalhook for impl in caller.get_hookimpls())
    )


def _only(pm: pluggy.PluginManager, plugin: object, hook_name: str) -> pluggy.HookCaller | None:
    """A caller for ``hook_name`` that calls only ``plugin``'s implementation (if any)."""
    caller: pluggy.HookCaller = getattr(pm.hook, hook_name)
    if not any(impl.plugin is plugin for impl in caller.get_hookimpls()):
        return None
    others = [other for other in pm.get_plugins() if other is not plugin]
    return pm.subset_hook_caller(hook_name, remove_plugins=others)


def _require_sync(hook_name: str, results: object) -> None:
    # An `async def` implementation returns an un-awaited coroutine and never registers anything.
    for result in results if isinstance(results, list) else [results]:
        if inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()
            raise RegistrationRefused(
                "the implementation is async; registration hooks must be plain functions that "
                f"call register() before returning ({hook_name})"
            )


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
