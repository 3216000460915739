"""A small MCP server over stdio: the warehouse's stock, as two tools.

It is an ordinary MCP server, written with the `mcp` package and nothing from AgentDeck; any MCP
client can use it. The deck starts it (the command in `../.mcp.json`) when it opens and stops it
when it closes.

    python mcp_server/inventory.py      # speaks MCP on stdin/stdout
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

STOCK: dict[str, dict[str, object]] = {
    "TENT-2P": {"name": "Two-person tent", "in_stock": 14, "warehouse": "Leipzig"},
    "STOVE-GAS": {"name": "Gas camping stove", "in_stock": 0, "warehouse": "Leipzig"},
    "MAT-XL": {"name": "Sleeping mat XL", "in_stock": 3, "warehouse": "Porto"},
}

server = MCPServer("inventory")


@server.tool()
def list_products() -> list[dict[str, object]]:
    """Every product the warehouse carries, with its SKU."""
    return [{"sku": sku, "name": item["name"]} for sku, item in STOCK.items()]


@server.tool()
def stock_level(sku: str) -> dict[str, object]:
    """How many units of a product (by SKU, e.g. TENT-2P) are in stock, and where."""
    item = STOCK.get(sku.upper())
    if item is None:
        return {"sku": sku, "error": "unknown SKU; call list_products for the SKUs"}
    return {"sku": sku.upper(), **item}


if __name__ == "__main__":
    server.run()
