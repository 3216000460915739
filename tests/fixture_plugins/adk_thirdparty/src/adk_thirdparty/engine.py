"""The fixture's engine: plays :class:`Echo` definitions by completing with their input.

The plugin registers it as a lazy ``EngineRef``, as a third party with a heavy engine SDK would,
so this module is imported only when a deck first builds its engines (which
``tests/test_third_party_plugins.py`` checks in a fresh interpreter).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import ClassVar

from agentdeck.model.content import TextBlock
from agentdeck.model.payloads import Payload, RunCompleted
from agentdeck.ports import Engine, Invocable, Invocation


@dataclass(frozen=True)
class Echo:
    """A definition of the fixture's own kind; the marker lets ``Deck(workflows=[...])`` take it."""

    name: str
    __agentdeck_workflow__: ClassVar[bool] = True


class ThirdPartyEngine(Engine):
    """Completes every run with the text of its input."""

    name: ClassVar[str] = "thirdparty-echo"

    def accepts(self, definition: object) -> bool:
        return isinstance(definition, Echo)

    def compile(self, definition: object) -> Invocable:
        assert isinstance(definition, Echo)
        return Invocable(
            name=definition.name, kind="workflow", engine=self.name, definition=definition
        )

    async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
        text = " ".join(str(getattr(block, "data", "")) for block in invocation.input)
        yield RunCompleted(output=[TextBlock(text=text)])
