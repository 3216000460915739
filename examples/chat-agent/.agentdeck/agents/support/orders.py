"""The shop's order book. A real project would query its database here."""

from __future__ import annotations

ORDERS: dict[str, dict[str, str]] = {
    "A-1003": {"status": "shipped", "carrier": "DHL", "eta": "Thursday"},
    "A-1004": {"status": "packing", "carrier": "-", "eta": "next week"},
}
