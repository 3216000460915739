"""The hooks a plugin implements: AgentDeck's plugin author documentation.

A plugin is a module listed under the ``agentdeck`` entry-point group that implements some of
these with ``@agentdeck.hookimpl``. Every hook is a synchronous *registration* hook: it receives a
``register`` callback and calls it once per thing it provides. The host (not the plugin) owns
validation, duplicate detection and attribution, which is how ``agentdeck plugins`` can say which
distribution provides each scheme, engine or binding, and why two plugins registering the same
name is a ``ConfigError`` naming both.

What is registered is a *factory*; the objects it builds have async methods. Nothing is
constructed at registration time, so loading plugins is cheap and never touches the network.

Hook calls are keyword-only, and an implementation may accept fewer arguments than its spec, so
these specs can grow without breaking plugins.

Example — a store plugin in its own distribution::

    # pyproject.toml
    [project.entry-points.agentdeck]
    mystore = "mystore.plugin"

    # mystore/plugin.py
    import agentdeck

    @agentdeck.hookimpl
    def agentdeck_register_event_stores(register):
        register("mystore", lambda request: MyStore(request.url), description="My store")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import pluggy

if TYPE_CHECKING:
    from agentdeck.ports import (
        BackendRequest,
        Binding,
        CheckpointerFactory,
        ControlPort,
        Engine,
        EventStore,
        LeasePort,
        Observer,
        SessionFactory,
    )
    from agentdeck.settings import SettingsSection

PROJECT_NAME = "agentdeck"
"""The pluggy project name and the entry-point group plugins declare."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


class RegisterScheme(Protocol):
    """``register(scheme, factory, *, description="")`` for URL-chosen backends."""

    def __call__(
        self, scheme: str, factory: Callable[[BackendRequest], Any], *, description: str = ""
    ) -> None: ...


class RegisterNamed(Protocol):
    """``register(name, factory, *, description="")`` for things chosen by name."""

    def __call__(
        self, name: str, factory: Callable[..., Any], *, description: str = ""
    ) -> None: ...


# --------------------------------------------------------------------------- backends (by scheme)


@hookspec
def agentdeck_register_event_stores(register: RegisterScheme) -> None:
    """Register event-store factories, one per URL scheme.

    :param register: call ``register(scheme, factory, description=...)``; ``factory`` takes a
        :class:`~agentdeck.ports.BackendRequest` and returns an unopened
        :class:`~agentdeck.ports.EventStore`. ``AGENTDECK_EVENTS=<scheme>://...`` selects it.
    """


@hookspec
def agentdeck_register_control_ports(register: RegisterScheme) -> None:
    """Register control-signal backends (:class:`~agentdeck.ports.ControlPort`) by URL scheme.

    :param register: as for :func:`agentdeck_register_event_stores`; selected by
        ``AGENTDECK_CONTROL``.
    """


@hookspec
def agentdeck_register_lease_ports(register: RegisterScheme) -> None:
    """Register lease backends (:class:`~agentdeck.ports.LeasePort`) by URL scheme.

    :param register: as for :func:`agentdeck_register_event_stores`; leases live with the
        control backend, so ``AGENTDECK_CONTROL`` selects them too.
    """


@hookspec
def agentdeck_register_session_factories(register: RegisterScheme) -> None:
    """Register conversation-session backends (:class:`~agentdeck.ports.SessionFactory`).

    :param register: as for :func:`agentdeck_register_event_stores`; selected by
        ``AGENTDECK_SESSION``.
    """


@hookspec
def agentdeck_register_checkpointers(register: RegisterScheme) -> None:
    """Register engine checkpointer backends (:class:`~agentdeck.ports.CheckpointerFactory`).

    :param register: as for :func:`agentdeck_register_event_stores`; selected by
        ``AGENTDECK_CHECKPOINT``.
    """


# --------------------------------------------------------------------------- execution


@hookspec
def agentdeck_register_engines(register: RegisterNamed) -> None:
    """Register engines that execute definitions.

    :param register: call ``register(name, factory, description=...)``; ``factory(request)``
        takes an :class:`~agentdeck.ports.EngineRequest` (the deck's settings, clock, catalog and
        session factory) and returns an :class:`~agentdeck.ports.Engine` whose ``name`` equals
        ``name``. When a deck builds, each definition goes to the engine whose ``accepts()``
        claims it. A factory may also carry a ``run_headless(engine, definition, input,
        session=...)`` coroutine function attribute: :meth:`agentdeck.Agent.run` awaits it to
        run a definition without a deck (no log, no observers, no context) and returns what it
        returns -- the engine SDK's own result.
    """


# --------------------------------------------------------------------------- surfaces


@hookspec
def agentdeck_register_observers(register: RegisterNamed) -> None:
    """Register observers that settings or the CLI can name.

    :param register: call ``register(name, factory, description=...)``; ``factory(**options)``
        returns an :class:`~agentdeck.ports.Observer`.
    """


@hookspec
def agentdeck_register_bindings(register: RegisterNamed) -> None:
    """Register bindings (external protocols a deck can be served over).

    :param register: call ``register(name, factory, description=...)``; ``factory(**options)``
        returns a :class:`~agentdeck.ports.Binding`.
    """


# --------------------------------------------------------------------------- configuration


@hookspec
def agentdeck_register_settings(register: Callable[[type[SettingsSection]], None]) -> None:
    """Register the plugin's settings sections.

    :param register: call ``register(SectionClass)`` for each
        :class:`~agentdeck.settings.SettingsSection` subclass; its ``section`` name (its key in
        ``config.yaml``) and env-var prefix must not clash with another plugin's.
    """


__all__ = [
    "PROJECT_NAME",
    "RegisterNamed",
    "RegisterScheme",
    "agentdeck_register_bindings",
    "agentdeck_register_checkpointers",
    "agentdeck_register_control_ports",
    "agentdeck_register_engines",
    "agentdeck_register_event_stores",
    "agentdeck_register_lease_ports",
    "agentdeck_register_observers",
    "agentdeck_register_session_factories",
    "agentdeck_register_settings",
    "hookimpl",
    "hookspec",
]

if TYPE_CHECKING:  # names used only in annotations above, kept visible to type checkers
    _unused = (Binding, CheckpointerFactory, ControlPort, Engine, EventStore, LeasePort)
    _unused2 = (Observer, SessionFactory)
