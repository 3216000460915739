"""An engine registered as its class: a deck builds it and plays a definition of its kind."""

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import ModuleType
from typing import ClassVar

import agentdeck
import agentdeck.memory.plugin
import agentdeck.sqlite.plugin
from agentdeck import Deck, TextBlock
from agentdeck.model.payloads import Payload, RunCompleted
from agentdeck.plugins.hookspecs import RegisterEngine
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import Engine, Invocable, Invocation
from agentdeck.settings import Settings


@dataclass(frozen=True)
class Shout:
    """A definition of the engine's own kind; the marker lets Deck(workflows=[...]) take it."""

    name: str
    __agentdeck_workflow__: ClassVar[bool] = True


class ShoutEngine(Engine):
    name: ClassVar[str] = "shout"  # what the host registers it as

    def accepts(self, definition: object) -> bool:
        return isinstance(definition, Shout)

    def compile(self, definition: object) -> Invocable:
        assert isinstance(definition, Shout)
        return Invocable(
            name=definition.name, kind="workflow", engine=self.name, definition=definition
        )

    async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
        text = " ".join(str(getattr(block, "data", "")) for block in invocation.input)
        yield RunCompleted(output=[TextBlock(text=text.upper())])


engine_plugin = ModuleType("shout.plugin")


@agentdeck.hookimpl
def agentdeck_register_engines(register: RegisterEngine) -> None:
    # A class whose module imports an engine SDK is registered by reference instead, so loading
    # plugins stays cheap: register(EngineRef("shout.engine:ShoutEngine", name="shout"), ...).
    register(ShoutEngine, description="upper-cases its input")


engine_plugin.agentdeck_register_engines = agentdeck_register_engines


async def main() -> None:
    host = PluginHost.from_plugins(agentdeck.memory.plugin, agentdeck.sqlite.plugin, engine_plugin)
    async with Deck(workflows=[Shout("shout")], plugins=host, settings=Settings(env={})) as deck:
        print(await deck.run("shout", "hello"))


asyncio.run(main())
