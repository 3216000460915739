"""AgentDeck engine plugin for LangGraph.

Declare a workflow as a LangGraph graph and run it through a Deck, with its events in the run's
log, interrupts answered from any process, pause/cancel at node boundaries and durable timers::

    from agentdeck_langgraph import Workflow, sleep_until

    approval = Workflow("approval", builder)            # a StateGraph builder
    legacy = Workflow.from_graph("legacy", compiled)    # an existing compiled graph, unchanged

Installed, the distribution (agentdeck-langgraph) registers through the ``agentdeck``
entry-point group: the ``langgraph`` engine, the ``memory``/``sqlite``/``postgresql``
checkpointers behind ``AGENTDECK_CHECKPOINT``, and that setting's section.
"""

from agentdeck_langgraph.checkpointers import (
    MemoryCheckpointers,
    PostgresCheckpointers,
    SqliteCheckpointers,
)
from agentdeck_langgraph.engine import LangGraphEngine
from agentdeck_langgraph.headless import PendingInterrupt
from agentdeck_langgraph.settings import CheckpointSettings
from agentdeck_langgraph.streaming import emit, report
from agentdeck_langgraph.timers import sleep_until
from agentdeck_langgraph.workflow import RunRef, ThreadPolicy, Workflow

__version__ = "0.1.0"

__all__ = [
    "CheckpointSettings",
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
]
