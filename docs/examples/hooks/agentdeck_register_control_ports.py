"""A control backend for ``notebook://``: request a pause, see it pending, take it."""

import asyncio
from types import ModuleType

import agentdeck
from agentdeck.memory import MemoryControlPort
from agentdeck.plugins.hookspecs import RegisterScheme
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import BackendRequest, ControlPort
from agentdeck.vocabulary import ControlVerb


class NotebookControl(MemoryControlPort):
    """Stands in for your backend: a real one implements every method of ControlPort."""

    @classmethod
    def from_request(cls, request: BackendRequest) -> "NotebookControl":
        return cls(clock=request.clock, url=request.url)


control_plugin = ModuleType("notebook.plugin")


@agentdeck.hookimpl
def agentdeck_register_control_ports(register: RegisterScheme[ControlPort]) -> None:
    register("notebook", NotebookControl.from_request, description="control in a notebook")


control_plugin.agentdeck_register_control_ports = agentdeck_register_control_ports


async def main() -> None:
    host = PluginHost.from_plugins(control_plugin)
    control = host.control_port(BackendRequest("notebook://demo"))  # AGENTDECK_CONTROL picks it
    await control.open()
    try:
        assert await control.request("run-1", ControlVerb.PAUSE, reason="lunch")
        print([signal.verb for signal in await control.pending("run-1")])
        taken = await control.take("run-1", ControlVerb.PAUSE)  # what a safe point does
        print(taken is not None and taken.reason, await control.pending("run-1"))
    finally:
        await control.close()


asyncio.run(main())
