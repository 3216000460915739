"""Serve a deck over HTTP/SSE with API keys: each key is a tenant's, scoped to its namespace.

    python server.py --port 8000

Every route but `/health` and the OpenAPI document needs `Authorization: Bearer <key>` (or
`X-API-Key`); a key sees only its own namespace's runs. The keys come from `ACME_API_KEY` and
`GLOBEX_API_KEY` (development defaults below -- set real ones in production). With no
`OPENAI_API_KEY` set, a local scripted stand-in answers for the model.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentdeck import Agent, Deck, tool
from agentdeck.bindings import Native

if TYPE_CHECKING:  # the stand-in model is only imported when it is used
    from agentdeck_openai.testing import Script

ORDERS = {"A-1003": "shipped with DHL, arriving Thursday", "A-1004": "being packed"}

API_KEYS: dict[str, Sequence[str | None]] = {
    os.environ.get("ACME_API_KEY", "acme-dev-key"): ["acme"],
    os.environ.get("GLOBEX_API_KEY", "globex-dev-key"): ["globex"],
}

# What a public stream sends: lifecycle, tool calls and the text -- not tool results, whose
# previews are a tool's output verbatim.
PUBLIC_KINDS = ["run.*", "tool.call.started", "text.delta", "message.completed"]


@tool
def order_status(order_id: str) -> str:
    """Look up an order's status by its id (e.g. A-1003)."""
    return ORDERS.get(order_id.strip().upper(), f"no order {order_id}")


support = Agent(
    name="support",
    instructions="Answer questions about orders in one sentence; look them up with order_status.",
    tools=[order_status],
)


def build_deck() -> Deck:
    """The deck this server serves; settings (model, state store) come from the environment."""
    return Deck(agents=[support])


def serve(port: int, host: str = "127.0.0.1") -> None:
    """Serve until SIGTERM or Ctrl-C; live runs are drained (parked) before the server stops."""
    binding = Native.http(api_keys=API_KEYS, public_kinds=PUBLIC_KINDS)
    build_deck().serve(binding, host=host, port=port, log_level="warning")


def offline_script() -> Script:
    """A stand-in model for any number of runs: look the order up, then answer from it."""
    from agentdeck_openai.testing import ModelRequest, Script, reply, tool_call

    def fresh(request: ModelRequest) -> bool:
        return not request.tool_outputs

    def has_result(request: ModelRequest) -> bool:
        return bool(request.tool_outputs)

    return Script(
        [
            tool_call("order_status", {"order_id": "A-1003"}, when=fresh, times=None),
            reply("A-1003 has shipped with DHL and arrives Thursday.", when=has_result, times=None),
        ]
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Serve the support deck over HTTP with API keys.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
        serve(args.port, args.host)
    else:
        from agentdeck_openai.testing import LoopbackModelServer

        print("(no OPENAI_API_KEY: a scripted local model answers)", file=sys.stderr)
        with LoopbackModelServer(offline_script()) as model:
            os.environ.update(model.env())
            serve(args.port, args.host)
