"""AgentDeck observer that exports runs to Langfuse.

Installed, this distribution (agentdeck-langfuse) will provide:

- an observer that turns a run's events into Langfuse traces, generations and tool observations
  (`agentdeck.observers.LangfuseObserver`)

AgentDeck finds it through the ``agentdeck`` entry-point group; nothing needs importing by hand.
"""

__version__ = "0.1.0"
