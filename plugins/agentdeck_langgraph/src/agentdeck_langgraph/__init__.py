"""AgentDeck engine plugin for LangGraph.

Installed, this distribution (agentdeck-langgraph) will provide:

- an engine that runs AgentDeck workflows on LangGraph
- checkpointers wired to the deck's state location (SQLite or PostgreSQL)
- durable timers for workflows that wait

AgentDeck finds it through the ``agentdeck`` entry-point group; nothing needs importing by hand.
"""

__version__ = "0.1.0"
