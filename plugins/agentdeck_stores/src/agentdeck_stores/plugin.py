"""Hook implementations of the `stores` plugin: PostgreSQL and Redis backends by scheme.

Each backend module is imported only when its scheme is first used, so installing the plugin
costs nothing at deck construction and a missing optional driver fails only the scheme that
needs it. The drivers are extras of this distribution (``agentdeck-stores[postgres]``,
``agentdeck-stores[redis]``); choosing a scheme whose driver is missing raises
:class:`~agentdeck.errors.ExtraNotInstalledError` naming the extra to install. SQLite is the
core's own (:mod:`agentdeck.sqlite`), registered by agentdeck-core.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import agentdeck
from agentdeck.plugins.extras import require_extra
from agentdeck.plugins.hookspecs import RegisterScheme, RegisterSettings
from agentdeck.ports import BackendRequest, ControlPort, EventStore, LeasePort
from agentdeck_stores.settings import StoresSettings

DISTRIBUTION = "agentdeck-stores"

_Port = TypeVar("_Port")


@dataclass(frozen=True)
class Backend:
    """One scheme's backend: ``module`` defines ``<prefix>EventStore``, ``<prefix>ControlPort``
    and ``<prefix>LeasePort``, each with a ``from_request(request)`` classmethod; ``extra`` is
    the extra that installs ``drivers`` (the top-level modules it imports), or None."""

    module: str
    prefix: str
    description: str
    extra: str | None = None
    drivers: tuple[str, ...] = ()


_POSTGRES_DRIVERS = ("psycopg", "psycopg_pool")
_REDIS_DRIVERS = ("redis",)

BACKENDS: dict[str, Backend] = {
    "postgresql": Backend(
        "agentdeck_stores.postgres",
        "Postgres",
        "PostgreSQL (psycopg 3, pooled)",
        "postgres",
        _POSTGRES_DRIVERS,
    ),
    "postgres": Backend(
        "agentdeck_stores.postgres",
        "Postgres",
        "PostgreSQL (alias of postgresql://)",
        "postgres",
        _POSTGRES_DRIVERS,
    ),
    "redis": Backend(
        "agentdeck_stores.redisstore", "Redis", "Redis (redis-py asyncio)", "redis", _REDIS_DRIVERS
    ),
    "rediss": Backend(
        "agentdeck_stores.redisstore", "Redis", "Redis over TLS", "redis", _REDIS_DRIVERS
    ),
}


def load_backend_module(scheme: str) -> Any:
    """Import the module behind ``scheme``, after checking the extra its driver comes from."""
    backend = BACKENDS[scheme]
    if backend.extra is not None:
        require_extra(
            *backend.drivers,
            feature=f"the {scheme}:// store",
            distribution=DISTRIBUTION,
            extra=backend.extra,
        )
    return importlib.import_module(backend.module)


def _factory(scheme: str, class_name: str) -> Callable[[BackendRequest], Any]:
    # Any: the class is looked up by name on first use; the host checks that what it builds is
    # the port the hook registered it for.
    def build(request: BackendRequest) -> Any:
        backend = getattr(load_backend_module(scheme), class_name)
        return backend.from_request(request)

    build.__qualname__ = f"{class_name}.from_request"
    return build


def _register(register: RegisterScheme[_Port], suffix: str) -> None:
    for scheme, backend in BACKENDS.items():
        register(
            scheme,
            _factory(scheme, f"{backend.prefix}{suffix}"),
            description=backend.description,
        )


@agentdeck.hookimpl
def agentdeck_register_event_stores(register: RegisterScheme[EventStore]) -> None:
    _register(register, "EventStore")


@agentdeck.hookimpl
def agentdeck_register_control_ports(register: RegisterScheme[ControlPort]) -> None:
    _register(register, "ControlPort")


@agentdeck.hookimpl
def agentdeck_register_lease_ports(register: RegisterScheme[LeasePort]) -> None:
    _register(register, "LeasePort")


@agentdeck.hookimpl
def agentdeck_register_settings(register: RegisterSettings) -> None:
    register(StoresSettings)
