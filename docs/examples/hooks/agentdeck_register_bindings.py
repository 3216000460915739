"""A binding chosen by name: the deck is served over it (here, a batch of inputs, one run each)."""

import asyncio
from types import ModuleType
from typing import Any, ClassVar

import agentdeck
import agentdeck.memory.plugin
import agentdeck.native.plugin
import agentdeck.sqlite.plugin
from agentdeck import Deck, workflow
from agentdeck.plugins.hookspecs import RegisterNamed
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import Binding
from agentdeck.settings import Settings


class Batch(Binding):
    """A running binding: serve() plays each input once the deck is open, then returns."""

    name: ClassVar[str] = "batch"

    def __init__(self, *, workflow: str, inputs: list[Any]) -> None:
        self.workflow, self.inputs = workflow, inputs
        self.results: list[Any] = []

    async def serve(self, deck: Deck) -> None:
        for value in self.inputs:
            self.results.append(await deck.run(self.workflow, value))


binding_plugin = ModuleType("batch.plugin")


@agentdeck.hookimpl
def agentdeck_register_bindings(register: RegisterNamed[Binding]) -> None:
    register("batch", Batch, description="plays a list of inputs")


binding_plugin.agentdeck_register_bindings = agentdeck_register_bindings


@workflow
async def double(n: int) -> int:
    return 2 * n


host = PluginHost.from_plugins(
    agentdeck.memory.plugin, agentdeck.sqlite.plugin, agentdeck.native.plugin, binding_plugin
)
batch = host.binding("batch", workflow="double", inputs=[{"n": 1}, {"n": 2}])
assert isinstance(batch, Batch)
deck = Deck(workflows=[double], plugins=host, settings=Settings(env={}))
asyncio.run(deck.serve_async(batch))  # the deck opens, the binding plays, the deck closes
print(batch.results)
