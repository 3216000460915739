"""Checkpoints for ``notebook://``: open the checkpointer for a deck's life, save, read back."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import ModuleType

import agentdeck
from agentdeck.plugins.hookspecs import RegisterScheme
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import BackendRequest, CheckpointerFactory


class NotebookCheckpointers(CheckpointerFactory):
    """Yields a dict of checkpoints per open; a real one yields its engine SDK's saver."""

    def __init__(self, url: str) -> None:
        self.url = url

    @classmethod
    def from_request(cls, request: BackendRequest) -> "NotebookCheckpointers":
        return cls(request.url)

    def open(self) -> AbstractAsyncContextManager[dict[str, bytes]]:
        return self._opened()

    @asynccontextmanager
    async def _opened(self) -> AsyncIterator[dict[str, bytes]]:
        saver: dict[str, bytes] = {}  # connect here
        try:
            yield saver
        finally:
            saver.clear()  # and close here


checkpoints_plugin = ModuleType("notebook.plugin")


@agentdeck.hookimpl
def agentdeck_register_checkpointers(register: RegisterScheme[CheckpointerFactory]) -> None:
    register("notebook", NotebookCheckpointers.from_request, description="checkpoints in memory")


checkpoints_plugin.agentdeck_register_checkpointers = agentdeck_register_checkpointers


async def main() -> None:
    host = PluginHost.from_plugins(checkpoints_plugin)
    factory = host.checkpointer(BackendRequest("notebook://"))  # AGENTDECK_CHECKPOINT picks it
    async with factory.open() as saver:
        saver["thread-1"] = b"state after step 3"
        print(sorted(saver))


asyncio.run(main())
