"""The `support` agent: answers questions about orders, looking them up with a tool.

`Deck.from_project()` imports this file and picks up every module-level `Agent`. Sibling
modules are imported relatively (`from .orders import ...`): a bundle is a package.
"""

from __future__ import annotations

from agentdeck import Agent, tool

from .orders import ORDERS


@tool
def order_status(order_id: str) -> dict[str, str]:
    """Look up an order's status, carrier and expected delivery day by its id (e.g. A-1003)."""
    order = ORDERS.get(order_id.strip().upper())
    if order is None:
        return {"error": f"no order {order_id!r}"}
    return {"order_id": order_id, **order}


support = Agent(
    name="support",
    description="Answers customers' questions about their orders.",
    instructions=(
        "You are the support desk of a small online shop. When a customer asks about an "
        "order, call order_status with its id and answer in one or two friendly sentences."
    ),
    tools=[order_status],
)
