"""The hooks a plugin implements: AgentDeck's plugin author documentation.

A plugin is a module listed under the ``agentdeck`` entry-point group that implements some of
these with ``@agentdeck.hookimpl``. Every hook is a synchronous *registration* hook: it receives a
``register`` callback and calls it once per thing it provides. The host (not the plugin) owns
validation, duplicate detection and attribution, which is how ``agentdeck plugins`` can say which
distribution provides each scheme, engine or binding, and why two plugins registering the same
name is a ``ConfigError`` naming both. A malformed registration raises a ``ConfigError`` out of
``register`` and the plugin is skipped, with a ``PluginWarning`` naming it.

What is registered is a *factory* (or, for engines, a class or a lazy reference to one); the
objects it builds have async methods. Nothing is constructed at registration time, so loading
plugins is cheap and never touches the network. Each hook's ``register`` type below says what its
factory takes and which port (:mod:`agentdeck.ports`) it must return.

The hooks are grouped under banners in the order a deck meets them: it reads its settings, opens
its backends, builds its engines, then starts its observers and is served over its bindings.
``docs/reference/hooks.md`` is generated from this module, one section per hook with a runnable
example (``docs/examples/hooks/``).

Hook calls are keyword-only, and an implementation may accept fewer arguments than its spec, so
these specs can grow without breaking plugins.

Example -- a store plugin in its own distribution::

    # pyproject.toml
    [project.entry-points.agentdeck]
    mystore = "mystore.plugin"

    # mystore/plugin.py
    import agentdeck
    from agentdeck.plugins.hookspecs import RegisterScheme
    from agentdeck.ports import EventStore

    @agentdeck.hookimpl
    def agentdeck_register_event_stores(register: RegisterScheme[EventStore]) -> None:
        register("mystore", MyStore.from_request, description="My store")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

import pluggy

from agentdeck.ports import (
    BackendRequest,
    Binding,
    CheckpointerFactory,
    ControlPort,
    Engine,
    EngineRef,
    EventStore,
    Execution,
    LeasePort,
    Observer,
    SessionFactory,
)
from agentdeck.settings import SettingsSection

PROJECT_NAME = "agentdeck"
"""The pluggy project name and the entry-point group plugins declare."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

_Port = TypeVar("_Port", contravariant=True)


class RegisterScheme(Protocol[_Port]):
    """The ``register`` of a backend hook: one backend factory per URL scheme.

    ``scheme`` is lower-case and bare (``"sqlite"``, not ``"sqlite://"``); register each spelling
    you serve (``redis`` and ``rediss`` are two schemes). ``factory(request)`` is called with a
    :class:`~agentdeck.ports.BackendRequest` (the URL, the deck's settings and clock) each time a
    deck needs the backend, and returns it unopened: the deck opens and closes it.
    ``RegisterScheme[EventStore]`` is the callback whose factories return event stores.
    """

    def __call__(
        self,
        scheme: str,
        factory: Callable[[BackendRequest], _Port],
        *,
        description: str = "",
    ) -> None: ...


class RegisterNamed(Protocol[_Port]):
    """The ``register`` of a component hook: one factory per name.

    ``name`` is a word (letters, digits, ``_ . -``) that settings, the CLI and
    ``host.observer(name)`` / ``host.binding(name)`` use; ``factory(**options)`` builds the
    component from the options its caller gives, so a class whose constructor takes keyword
    options is a factory as it is. ``RegisterNamed[Observer]`` is the callback for observers.
    """

    def __call__(
        self, name: str, factory: Callable[..., _Port], *, description: str = ""
    ) -> None: ...


class RegisterEngine(Protocol):
    """The ``register`` of :func:`agentdeck_register_engines`: an engine class, or a reference.

    ``engine`` is a concrete :class:`~agentdeck.ports.Engine` subclass, registered under its
    declared ``name``; or an :class:`~agentdeck.ports.EngineRef`
    (``EngineRef("mypkg.engine:MyEngine", name="mine", headless=False)``) when importing the class
    would import an engine SDK: the reference is resolved the first time a deck builds, so
    loading plugins stays cheap. A deck builds every engine as ``EngineClass(request)``.
    """

    def __call__(self, engine: type[Engine] | EngineRef, /, *, description: str = "") -> None: ...


class RegisterSettings(Protocol):
    """The ``register`` of :func:`agentdeck_register_settings`: one section class at a time.

    ``section`` is a :class:`~agentdeck.settings.SettingsSection` subclass that declares its
    ``section`` key (its ``config.yaml`` key) and an ``env_prefix`` of its own.
    """

    def __call__(self, section: type[SettingsSection], /) -> None: ...


# --------------------------------------------------------------------------- configuration
# A deck registers every settings section before it reads a value, so a plugin's own variables
# are validated, layered and documented like the core's.


@hookspec
def agentdeck_register_settings(register: RegisterSettings) -> None:
    """Register the plugin's settings sections.

    :param register: call ``register(SectionClass)`` for each
        :class:`~agentdeck.settings.SettingsSection` subclass; its ``section`` name (its key in
        ``config.yaml``) and env-var prefix must not clash with another plugin's. A deck reads a
        section with ``settings.section(SectionClass)``.
    """


# --------------------------------------------------------------------------- backends (by scheme)
# Opened when a deck opens: the run log, control requests, leases, and the engine-side backends
# (conversation sessions, checkpoints). Each is chosen by the scheme of a URL setting.


@hookspec
def agentdeck_register_event_stores(register: RegisterScheme[EventStore]) -> None:
    """Register event-store factories, one per URL scheme.

    :param register: call ``register(scheme, factory, description=...)``; ``factory`` takes a
        :class:`~agentdeck.ports.BackendRequest` and returns an unopened
        :class:`~agentdeck.ports.EventStore`. ``AGENTDECK_EVENTS=<scheme>://...`` selects it, and
        so does ``AGENTDECK_STATE`` when ``AGENTDECK_EVENTS`` is unset.
    """


@hookspec
def agentdeck_register_control_ports(register: RegisterScheme[ControlPort]) -> None:
    """Register control-signal backends (:class:`~agentdeck.ports.ControlPort`) by URL scheme.

    :param register: as for :func:`agentdeck_register_event_stores`, with factories returning an
        unopened ``ControlPort``; selected by ``AGENTDECK_CONTROL`` (default: the state root).
    """


@hookspec
def agentdeck_register_lease_ports(register: RegisterScheme[LeasePort]) -> None:
    """Register lease backends (:class:`~agentdeck.ports.LeasePort`) by URL scheme.

    :param register: as for :func:`agentdeck_register_event_stores`, with factories returning an
        unopened ``LeasePort``; leases live with the control backend, so ``AGENTDECK_CONTROL``
        selects them too. Expiry reads ``request.clock``.
    """


@hookspec
def agentdeck_register_session_factories(register: RegisterScheme[SessionFactory]) -> None:
    """Register conversation-session backends (:class:`~agentdeck.ports.SessionFactory`).

    :param register: as for :func:`agentdeck_register_event_stores`, with factories returning a
        ``SessionFactory``; selected by ``AGENTDECK_SESSION``. The deck hands the factory to its
        engines (``EngineRequest.session_factory``).
    """


@hookspec
def agentdeck_register_checkpointers(register: RegisterScheme[CheckpointerFactory]) -> None:
    """Register engine checkpointer backends (:class:`~agentdeck.ports.CheckpointerFactory`).

    :param register: as for :func:`agentdeck_register_event_stores`, with factories returning a
        ``CheckpointerFactory``; selected by ``AGENTDECK_CHECKPOINT``. The engine that needs
        checkpoints looks the factory up and opens it for the deck's life.
    """


# --------------------------------------------------------------------------- execution
# Where runs execute is chosen when a deck builds, by the scheme of ``AGENTDECK_EXECUTION``; what
# runs them is built then too: each definition goes to the one engine whose ``accepts()`` claims
# it.


@hookspec
def agentdeck_register_executions(register: RegisterScheme[Execution]) -> None:
    """Register execution backends (:class:`~agentdeck.ports.Execution`): where runs execute.

    :param register: as for :func:`agentdeck_register_event_stores`, with factories returning an
        unopened ``Execution``; selected by ``AGENTDECK_EXECUTION`` (unset: ``inprocess://``, the
        core's own, which plays each run in the process that opened it). An execution whose
        ``queues`` is true records admitted runs as ``queued`` and hands their ids to workers
        (``agentdeck worker`` calls its ``work``); a deck refuses to build with one on a store
        that is not durable.
    """


@hookspec
def agentdeck_register_engines(register: RegisterEngine) -> None:
    """Register engines that execute definitions.

    :param register: call ``register(EngineClass, description=...)`` with a concrete
        :class:`~agentdeck.ports.Engine` subclass that declares its ``name``, or
        ``register(EngineRef("package.module:EngineClass", name=..., headless=...),
        description=...)`` so the class (and its SDK) is imported only when a deck first builds.
        A deck builds each engine as ``EngineClass(request)`` with an
        :class:`~agentdeck.ports.EngineRequest` (the deck's settings, clock, catalog and session
        factory), and each definition goes to the engine whose ``accepts()`` claims it. An engine
        that is a :class:`~agentdeck.ports.HeadlessEngine` (a reference says ``headless=True``)
        also serves :meth:`agentdeck.Agent.run`: its ``run_headless`` runs a definition without a
        deck and returns the engine SDK's own result. A reference's ``client=`` names the
        engine's :class:`~agentdeck.ports.ClientEngine`, which a deck that only admits runs for
        workers loads instead (so that deck never imports the SDK).
    """


# --------------------------------------------------------------------------- surfaces
# Started when a deck opens (observers) or serves (bindings): what reads its runs from outside.


@hookspec
def agentdeck_register_observers(register: RegisterNamed[Observer]) -> None:
    """Register observers that settings or the CLI can name.

    :param register: call ``register(name, factory, description=...)``; ``factory(**options)``
        returns an :class:`~agentdeck.ports.Observer`. When the factory also has a
        ``from_settings(settings)`` classmethod, a deck given no ``observers=`` calls it and
        keeps the observer it returns (``None``: not configured), so an observer can start by
        itself once its settings are set.
    """


@hookspec
def agentdeck_register_bindings(register: RegisterNamed[Binding]) -> None:
    """Register bindings (external protocols a deck can be served over).

    :param register: call ``register(name, factory, description=...)``; ``factory(**options)``
        returns a :class:`~agentdeck.ports.Binding` (``deck.serve("name")`` and the CLI build it
        by name).
    """


__all__ = [
    "PROJECT_NAME",
    "RegisterEngine",
    "RegisterNamed",
    "RegisterScheme",
    "RegisterSettings",
    "agentdeck_register_bindings",
    "agentdeck_register_checkpointers",
    "agentdeck_register_control_ports",
    "agentdeck_register_engines",
    "agentdeck_register_event_stores",
    "agentdeck_register_executions",
    "agentdeck_register_lease_ports",
    "agentdeck_register_observers",
    "agentdeck_register_session_factories",
    "agentdeck_register_settings",
    "hookimpl",
    "hookspec",
]
