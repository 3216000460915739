"""A lease backend for ``notebook://``: take a lease, let it lapse on a manual clock."""

import asyncio
from types import ModuleType

import agentdeck
from agentdeck.memory import MemoryLeasePort
from agentdeck.model.clock import ManualClock
from agentdeck.plugins.hookspecs import RegisterScheme
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import BackendRequest, LeasePort


class NotebookLeases(MemoryLeasePort):
    """Stands in for your backend: a real one implements every method of LeasePort."""

    @classmethod
    def from_request(cls, request: BackendRequest) -> "NotebookLeases":
        return cls(clock=request.clock, url=request.url)  # expiry reads the deck's clock


lease_plugin = ModuleType("notebook.plugin")


@agentdeck.hookimpl
def agentdeck_register_lease_ports(register: RegisterScheme[LeasePort]) -> None:
    register("notebook", NotebookLeases.from_request, description="leases in a notebook")


lease_plugin.agentdeck_register_lease_ports = agentdeck_register_lease_ports


async def main() -> None:
    clock = ManualClock()
    host = PluginHost.from_plugins(lease_plugin)
    leases = host.lease_port(BackendRequest("notebook://demo", clock=clock))
    await leases.open()
    try:
        print(await leases.acquire("run-1", owner="worker-a", ttl=30))
        print(await leases.acquire("run-1", owner="worker-b", ttl=30))  # held: refused
        clock.advance(31)
        print(await leases.state("run-1"), await leases.lapsed())
    finally:
        await leases.close()


asyncio.run(main())
