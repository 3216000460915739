"""AgentDeck engine plugin for LangGraph.

Declare a workflow as a LangGraph graph and run it through a Deck, with its events in the run's
log, interrupts answered from any process, pause/cancel at node boundaries and durable timers::

    from agentdeck_langgraph import Workflow, sleep_until

    approval = Workflow("approval", builder)            # a StateGraph builder
    legacy = Workflow.from_graph("legacy", compiled)    # an existing compiled graph, unchanged

Installed, the distribution (agentdeck-langgraph) registers through the ``agentdeck``
entry-point group: the ``langgraph`` engine, the ``memory``/``sqlite``/``postgresql``
checkpointers behind ``AGENTDECK_CHECKPOINT``, and that setting's section.

The names below resolve on first access (module ``__getattr__``): the host imports
``agentdeck_langgraph.plugin`` whenever plugins load, and that must not import LangGraph
through this package's ``__init__``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentdeck_langgraph.checkpointers import (
        MemoryCheckpointers,
        PostgresCheckpointers,
        SqliteCheckpointers,
    )
    from agentdeck_langgraph.engine import LangGraphEngine
    from agentdeck_langgraph.headless import PendingInterrupt
    from agentdeck_langgraph.run_config import GraphInput, with_config
    from agentdeck_langgraph.settings import CheckpointSettings
    from agentdeck_langgraph.streaming import emit, report
    from agentdeck_langgraph.timers import sleep_until
    from agentdeck_langgraph.workflow import RunRef, ThreadPolicy, Workflow

__version__ = "0.1.0"

_HOMES = {
    "CheckpointSettings": "agentdeck_langgraph.settings",
    "GraphInput": "agentdeck_langgraph.run_config",
    "LangGraphEngine": "agentdeck_langgraph.engine",
    "MemoryCheckpointers": "agentdeck_langgraph.checkpointers",
    "PendingInterrupt": "agentdeck_langgraph.headless",
    "PostgresCheckpointers": "agentdeck_langgraph.checkpointers",
    "RunRef": "agentdeck_langgraph.workflow",
    "SqliteCheckpointers": "agentdeck_langgraph.checkpointers",
    "ThreadPolicy": "agentdeck_langgraph.workflow",
    "Workflow": "agentdeck_langgraph.workflow",
    "emit": "agentdeck_langgraph.streaming",
    "report": "agentdeck_langgraph.streaming",
    "sleep_until": "agentdeck_langgraph.timers",
    "with_config": "agentdeck_langgraph.run_config",
}

__all__ = [
    "CheckpointSettings",
    "GraphInput",
    "LangGraphEngine",
    "MemoryCheckpointers",
    "PendingInterrupt",
    "PostgresCheckpointers",
    "RunRef",
    "SqliteCheckpointers",
    "ThreadPolicy",
    "Workflow",
    "__version__",
    "emit",
    "report",
    "sleep_until",
    "with_config",
]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agentdeck_langgraph' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # resolved once; later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
