"""Hook implementations of the `stores` plugin: SQLite, PostgreSQL and Redis backends by scheme.

Each backend module is imported only when its scheme is first used, so installing the plugin
costs nothing at deck construction and a missing optional driver fails only the scheme that
needs it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TypeVar

import agentdeck
from agentdeck.plugins.hookspecs import RegisterScheme
from agentdeck.ports import BackendRequest, ControlPort, EventStore, LeasePort

_Port = TypeVar("_Port")

# scheme -> (module, class prefix); each module defines <Prefix>EventStore, <Prefix>ControlPort
# and <Prefix>LeasePort, each with a ``from_request(request)`` classmethod.
BACKENDS: dict[str, tuple[str, str, str]] = {
    "sqlite": ("agentdeck_stores.sqlite", "Sqlite", "SQLite file (sqlite:///path)"),
    "postgresql": ("agentdeck_stores.postgres", "Postgres", "PostgreSQL (psycopg 3, pooled)"),
    "postgres": ("agentdeck_stores.postgres", "Postgres", "PostgreSQL (alias of postgresql://)"),
    "redis": ("agentdeck_stores.redisstore", "Redis", "Redis (redis-py asyncio)"),
    "rediss": ("agentdeck_stores.redisstore", "Redis", "Redis over TLS"),
}


def _factory(module: str, class_name: str) -> Callable[[BackendRequest], Any]:
    # Any: the class is looked up by name on first use; the host checks that what it builds is
    # the port the hook registered it for.
    def build(request: BackendRequest) -> Any:
        backend = getattr(importlib.import_module(module), class_name)
        return backend.from_request(request)

    build.__qualname__ = f"{class_name}.from_request"
    return build


def _register(register: RegisterScheme[_Port], suffix: str) -> None:
    for scheme, (module, prefix, description) in BACKENDS.items():
        register(scheme, _factory(module, f"{prefix}{suffix}"), description=description)


@agentdeck.hookimpl
def agentdeck_register_event_stores(register: RegisterScheme[EventStore]) -> None:
    _register(register, "EventStore")


@agentdeck.hookimpl
def agentdeck_register_control_ports(register: RegisterScheme[ControlPort]) -> None:
    _register(register, "ControlPort")


@agentdeck.hookimpl
def agentdeck_register_lease_ports(register: RegisterScheme[LeasePort]) -> None:
    _register(register, "LeasePort")
