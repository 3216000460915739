"""AgentDeck HTTP binding: FastAPI routes and a Server-Sent Events stream.

Installed, this distribution (agentdeck-http) will provide:

- a FastAPI binding that starts, answers, pauses and cancels runs over HTTP
- a Server-Sent Events stream of a run's events (`id: <seq>`, `event: <kind>`, `data: <event
  JSON>`; resumable with `Last-Event-ID` or `from_seq`)

AgentDeck finds it through the ``agentdeck`` entry-point group; nothing needs importing by hand.
"""

__version__ = "0.1.0"
