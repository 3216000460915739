"""AgentDeck observer that exports runs to Langfuse.

Installed, this distribution (agentdeck-langfuse) provides :class:`LangfuseObserver`, also
reachable as ``agentdeck.observers.LangfuseObserver`` (and by its 4.x name
``agentdeck.observers.Langfuse``), and the ``langfuse`` settings section
(``AGENTDECK_LANGFUSE_*``). A deck given no ``observers=`` starts one by itself when both keys
are set (``AGENTDECK_LANGFUSE_*``, else the SDK's own ``LANGFUSE_*``).

AgentDeck finds it through the ``agentdeck`` entry-point group; nothing needs importing by hand.
The Langfuse SDK itself is imported only when an observer starts.
"""

from __future__ import annotations

from agentdeck_langfuse.observer import LangfuseObserver
from agentdeck_langfuse.settings import LangfuseSettings

__version__ = "0.1.0"

__all__ = ["LangfuseObserver", "LangfuseSettings", "__version__"]
