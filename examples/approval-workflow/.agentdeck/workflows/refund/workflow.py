"""The `refund` workflow: look an order up, ask a person, and refund only if they approve.

It runs on the core's native engine. While it waits for the answer nothing of it is kept in
memory: the deck that continues it -- in this process or another one -- replays the body from
its log, and every step already recorded returns its recorded result instead of running again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agentdeck import WorkflowCtx, workflow

ORDERS: dict[str, dict[str, Any]] = {
    "A-1003": {"amount": 120.0, "customer": "Sagi"},
    "A-1004": {"amount": 35.5, "customer": "Ada"},
}


def look_up(order_id: str) -> dict[str, Any]:
    """Read the order (a database query in a real shop)."""
    return ORDERS[order_id]


def issue_refund(order_id: str, amount: float) -> str:
    """The side effect: append one line to the refund ledger and return its receipt.

    It runs inside a step, so it runs once per run however many times the body is replayed.
    """
    ledger = Path(os.environ.get("REFUND_LEDGER", ".state/refunds.jsonl"))
    ledger.parent.mkdir(parents=True, exist_ok=True)
    with ledger.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"order_id": order_id, "amount": amount}) + "\n")
    return f"R-{order_id}"


@workflow
async def refund(order_id: str, ctx: WorkflowCtx[Any]) -> dict[str, Any]:
    """Refund an order once a person approves it."""
    order = await ctx.step("look up order", look_up, order_id)
    await ctx.report("order found", amount=order["amount"])
    decision = await ctx.ask(
        f"Refund {order['amount']:.2f} EUR to {order['customer']} for {order_id}?",
        options=["approve", "reject"],
    )
    if decision != "approve":
        return {"order_id": order_id, "refunded": False}
    receipt = await ctx.step("issue refund", issue_refund, order_id, order["amount"])
    return {"order_id": order_id, "refunded": True, "receipt": receipt}
