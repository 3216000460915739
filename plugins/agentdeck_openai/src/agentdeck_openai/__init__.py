"""AgentDeck engine plugin for the OpenAI Agents SDK.

Installed, this distribution (agentdeck-openai) will provide:

- an engine that runs AgentDeck agents on the OpenAI Agents SDK (`openai-agents`)
- session backends bridging the SDK's sessions to AgentDeck's stores
- a loopback OpenAI-compatible server (Chat Completions and Responses, streaming and not, tool
  calls, usage) scripted by tests, so neither our tests nor yours need a model provider

AgentDeck finds it through the ``agentdeck`` entry-point group; nothing needs importing by hand.
"""

__version__ = "0.1.0"
