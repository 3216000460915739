"""An event store for the ``notebook://`` scheme: open it, open a run, append, read it back."""

import asyncio
from types import ModuleType

import agentdeck
from agentdeck.memory import MemoryEventStore
from agentdeck.model.payloads import Report, RunStarted
from agentdeck.plugins.hookspecs import RegisterScheme
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import BackendRequest, EventStore, NewRun


class NotebookStore(MemoryEventStore):
    """Stands in for your store: a real one implements every method of EventStore."""

    @classmethod
    def from_request(cls, request: BackendRequest) -> "NotebookStore":
        return cls(clock=request.clock, url=request.url)


store_plugin = ModuleType("notebook.plugin")


@agentdeck.hookimpl
def agentdeck_register_event_stores(register: RegisterScheme[EventStore]) -> None:
    register("notebook", NotebookStore.from_request, description="runs in a notebook")


store_plugin.agentdeck_register_event_stores = agentdeck_register_event_stores


async def main() -> None:
    host = PluginHost.from_plugins(store_plugin)
    store = host.event_store(BackendRequest("notebook://demo"))  # what AGENTDECK_EVENTS picks
    await store.open()
    try:
        started = RunStarted(name="hello", invocable_kind="workflow")
        await store.open_run(NewRun(run_id="run-1", started=started))
        await store.append("run-1", [Report(message="written through notebook://")])
        print([(event.seq, event.kind) for event in await store.read("run-1")])
    finally:
        await store.close()


asyncio.run(main())
