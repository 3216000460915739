"""An observer chosen by name: built with its options, it taps every event of a deck's runs."""

import asyncio
from collections import Counter
from types import ModuleType

import agentdeck
import agentdeck.memory.plugin
import agentdeck.native.plugin
import agentdeck.sqlite.plugin
from agentdeck import Deck, Event, workflow
from agentdeck.plugins.hookspecs import RegisterNamed
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import Observer
from agentdeck.settings import Settings


class Tally(Observer):
    """Counts events by kind; emit() does in-memory work only."""

    def __init__(self, *, prefix: str = "") -> None:
        self.prefix = prefix
        self.kinds: Counter[str] = Counter()

    async def emit(self, event: Event) -> None:
        self.kinds[f"{self.prefix}{event.kind}"] += 1


observer_plugin = ModuleType("tally.plugin")


@agentdeck.hookimpl
def agentdeck_register_observers(register: RegisterNamed[Observer]) -> None:
    register("tally", Tally, description="counts events by kind")


observer_plugin.agentdeck_register_observers = agentdeck_register_observers


@workflow
async def greet(name: str) -> str:
    return f"hello {name}"


async def main() -> None:
    host = PluginHost.from_plugins(
        agentdeck.memory.plugin, agentdeck.sqlite.plugin, agentdeck.native.plugin, observer_plugin
    )
    tally = host.observer("tally", prefix="seen ")  # what settings or the CLI name
    assert isinstance(tally, Tally)
    async with Deck(
        workflows=[greet], plugins=host, observers=[tally], settings=Settings(env={})
    ) as deck:
        await deck.run("greet", {"name": "ada"})
    print(dict(tally.kinds))


asyncio.run(main())
