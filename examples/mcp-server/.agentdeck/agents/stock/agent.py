"""The `stock` agent: answers questions about what is in stock, through an MCP server.

It has no tools of its own. `mcp_servers=["inventory"]` names a server declared in the project's
`.mcp.json` (next to `.agentdeck/`); the deck starts it when it opens, and the server's tools
(`list_products`, `stock_level`) are offered to the model under their MCP names.
"""

from __future__ import annotations

from agentdeck import Agent

stock = Agent(
    name="stock",
    description="Answers questions about stock levels.",
    instructions=(
        "You help the shop's staff with stock questions. Use the inventory tools; never guess "
        "a number. Answer in one sentence."
    ),
    mcp_servers=["inventory"],
)
