"""An execution for ``inline://``: where a deck's runs execute, chosen by AGENTDECK_EXECUTION."""

import asyncio
from types import ModuleType
from typing import ClassVar

import agentdeck
from agentdeck import Deck, WorkflowCtx, workflow
from agentdeck.memory import plugin as memory_plugin
from agentdeck.native import plugin as native_plugin
from agentdeck.plugins.hookspecs import RegisterScheme
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import Admission, BackendRequest, Execution
from agentdeck.settings import Settings


class InlineExecution(Execution):
    """Plays each run where it was opened, counting them. An execution that hands runs to
    workers sets ``queues = True``, puts ``admission.run_id`` in its queue, and implements
    ``work()`` for ``agentdeck worker``."""

    queues: ClassVar[bool] = False

    def __init__(self, url: str) -> None:
        self.url = url
        self.admitted = 0

    @classmethod
    def from_request(cls, request: BackendRequest) -> "InlineExecution":
        return cls(request.url)

    async def admit(self, admission: Admission) -> None:
        self.admitted += 1
        admission.play_here()


execution_plugin = ModuleType("inline.plugin")


@agentdeck.hookimpl
def agentdeck_register_executions(register: RegisterScheme[Execution]) -> None:
    register("inline", InlineExecution.from_request, description="runs play where opened")


execution_plugin.agentdeck_register_executions = agentdeck_register_executions


@workflow
async def greet(ctx: WorkflowCtx, name: str) -> str:
    return f"hello {name}"


async def main() -> None:
    host = PluginHost.from_plugins(memory_plugin, native_plugin, execution_plugin)
    settings = Settings(env={"AGENTDECK_STATE": "memory://", "AGENTDECK_EXECUTION": "inline://"})
    async with Deck(workflows=[greet], settings=settings, plugins=host) as deck:
        print(await deck.run("greet", {"name": "ada"}))
        print(deck.service.runtime.execution.admitted)


asyncio.run(main())
