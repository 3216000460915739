"""The ``sqlite`` scheme: the core's durable backends, registered like any other plugin.

Declared as the entry point ``sqlite = "agentdeck.sqlite.plugin"`` of agentdeck-core, so the host
loads it through the same path (and the same allow/block switch) as a third-party plugin. The
store module (and its threads) is imported only when the scheme is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentdeck.plugins.hookspecs import RegisterScheme, hookimpl
from agentdeck.ports import BackendRequest, ControlPort, EventStore, LeasePort

if TYPE_CHECKING:
    from agentdeck.sqlite.store import SqliteControlPort, SqliteEventStore, SqliteLeasePort

SCHEME = "sqlite"


def event_store(request: BackendRequest) -> SqliteEventStore:
    from agentdeck.sqlite.store import SqliteEventStore

    return SqliteEventStore.from_request(request)


def control_port(request: BackendRequest) -> SqliteControlPort:
    from agentdeck.sqlite.store import SqliteControlPort

    return SqliteControlPort.from_request(request)


def lease_port(request: BackendRequest) -> SqliteLeasePort:
    from agentdeck.sqlite.store import SqliteLeasePort

    return SqliteLeasePort.from_request(request)


@hookimpl
def agentdeck_register_event_stores(register: RegisterScheme[EventStore]) -> None:
    register(SCHEME, event_store, description="SQLite file (sqlite:///path)")


@hookimpl
def agentdeck_register_control_ports(register: RegisterScheme[ControlPort]) -> None:
    register(SCHEME, control_port, description="control signals in a SQLite file")


@hookimpl
def agentdeck_register_lease_ports(register: RegisterScheme[LeasePort]) -> None:
    register(SCHEME, lease_port, description="liveness leases in a SQLite file")
