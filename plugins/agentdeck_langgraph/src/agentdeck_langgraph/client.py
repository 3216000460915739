"""``LangGraphClientEngine``: the ``langgraph`` engine as a deck that only admits runs loads it.

On ``AGENTDECK_EXECUTION=temporal://...`` a client deck records runs that workers play. A
LangGraph definition is a graph object, so a catalog holding one has imported LangGraph
already, and this face then hands compiling and input checks to the full engine (built, never
opened: no checkpointer is opened in a client). A catalog holding none -- a client of agents
only -- must not import LangGraph at all: :meth:`accepts` tells a
:class:`~agentdeck_langgraph.workflow.Workflow` apart without importing its module, since no
such object can exist before that module was imported.
"""

from __future__ import annotations

import sys
from typing import Any, ClassVar

from agentdeck.model.content import ContentBlock
from agentdeck.ports import ClientEngine, EngineCapabilities, Invocable

__all__ = ["LangGraphClientEngine"]

_WORKFLOW_MODULE = "agentdeck_langgraph.workflow"


class LangGraphClientEngine(ClientEngine):
    """Recognises LangGraph workflows without importing LangGraph; the rest is the engine's."""

    name: ClassVar[str] = "langgraph"

    @property  # type: ignore[override]  # the engine's own depend on its checkpointer
    def capabilities(self) -> EngineCapabilities:
        return self.playing_engine().capabilities

    def accepts(self, definition: object) -> bool:
        module = sys.modules.get(_WORKFLOW_MODULE)
        return module is not None and isinstance(definition, module.Workflow)

    def compile(self, definition: object) -> Invocable:
        return self.playing_engine().compile(definition)

    def prepare_input(self, invocable: Invocable, value: Any) -> list[ContentBlock]:
        return self.playing_engine().prepare_input(invocable, value)
