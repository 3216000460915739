"""AgentDeck durable stores: Redis and PostgreSQL.

Installed, this distribution (agentdeck-stores) will provide:

- event-log stores for the `redis://` and `postgresql://` schemes (SQLite is the core's own:
  `agentdeck.sqlite`; `agentdeck_stores.sqlite` remains as an alias)
- control (pause/cancel requests) and session leases on the same backends
- each backend verified by the core's store and control/lease contract kits

AgentDeck finds it through the ``agentdeck`` entry-point group; nothing needs importing by hand.
"""

__version__ = "0.1.0"
