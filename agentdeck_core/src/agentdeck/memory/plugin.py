"""The ``memory`` scheme: the core's default backends, registered like any other plugin.

Declared as the entry point ``memory = "agentdeck.memory.plugin"`` of agentdeck-core, so the
host loads it through the same path (and the same allow/block switch) as a third-party plugin.
"""

from __future__ import annotations

from agentdeck.plugins.deferred import Deferred
from agentdeck.plugins.hookspecs import RegisterScheme, hookimpl
from agentdeck.ports import ControlPort, EventStore, LeasePort


@hookimpl
def agentdeck_register_event_stores(register: RegisterScheme[EventStore]) -> None:
    register(
        "memory",
        Deferred("agentdeck.memory.store:MemoryEventStore.from_request"),
        description="in-process event log (not durable); memory://<name> shares one by name",
    )


@hookimpl
def agentdeck_register_control_ports(register: RegisterScheme[ControlPort]) -> None:
    register(
        "memory",
        Deferred("agentdeck.memory.control:MemoryControlPort.from_request"),
        description="in-process control signals; memory://<name> shares one by name",
    )


@hookimpl
def agentdeck_register_lease_ports(register: RegisterScheme[LeasePort]) -> None:
    register(
        "memory",
        Deferred("agentdeck.memory.lease:MemoryLeasePort.from_request"),
        description="in-process liveness leases on the deck's clock",
    )
