"""A tiny stdio MCP server for the engine's MCP test: one tool, ``shout``."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

app = MCPServer("echo")


@app.tool()
def shout(text: str) -> str:
    """Repeat the text in capitals."""
    return text.upper()


if __name__ == "__main__":
    app.run()
