"""AgentDeck runs executed by Temporal workers.

``AGENTDECK_EXECUTION=temporal://HOST:PORT/NAMESPACE?task_queue=NAME`` makes a deck *admit* its
runs: each is recorded in AgentDeck's store as ``queued`` and a Temporal workflow is started
for it whose history holds only the run's id and statuses. ``agentdeck worker`` (or
:func:`agentdeck_temporal.worker.serve`) plays queued runs from the task queue.

The names below import lazily, so loading the plugin (``agentdeck plugins``, any deck) does not
import the Temporal SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["TemporalAddress", "TemporalExecution"]

_HOMES = {
    "TemporalAddress": "agentdeck_temporal.address",
    "TemporalExecution": "agentdeck_temporal.execution",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agentdeck_temporal' has no attribute {name!r}")
    return getattr(import_module(home), name)
