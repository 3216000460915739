"""Ask the `stock` agent a question; it answers with the tools of an MCP server.

    python main.py "Do we still have two-person tents?"

Run it from this directory: the deck is built from `.agentdeck/`, reads `.mcp.json` beside it,
and starts the MCP server that file declares (`python mcp_server/inventory.py`) when it opens.
Settings come from the environment: `OPENAI_API_KEY` and `OPENAI_MODEL` for a real provider.
With no provider configured, the same code runs against a local scripted stand-in for the model
(the MCP server is real either way).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agentdeck import (
    Deck,
    Event,
    MessageCompleted,
    RunCompleted,
    RunFailed,
    TextDelta,
    ToolCallCompleted,
    ToolCallStarted,
)

if TYPE_CHECKING:  # the stand-in model is only imported when it is used
    from agentdeck_openai.testing import Script

PROJECT = Path(__file__).resolve().parent / ".agentdeck"
QUESTION = "Do we still have two-person tents?"


def compact(preview: str) -> str:
    """An MCP tool's result reaches the model as content parts whose text is the tool's JSON;
    show those on one line."""
    try:
        return ", ".join(json.dumps(json.loads(part["text"])) for part in json.loads(preview))
    except (ValueError, TypeError, KeyError):
        return preview


def render(event: Event) -> str | None:
    """What a person watching wants to see of one event (None: nothing)."""
    match event.payload:
        case ToolCallStarted(tool=tool, args=args):
            return f"-> {tool} {args}\n"
        case ToolCallCompleted(result_preview=preview):
            return f"<- {compact(preview)}\n"
        case TextDelta(text=text):
            return text
        case MessageCompleted():
            return "\n"
        case RunCompleted(usage=usage):
            return f"[completed: {usage.requests} model calls]\n"
        case RunFailed(error_code=code, message=message):
            return f"[failed: {code} {message}]\n"
        case _:
            return None


async def main(question: str = QUESTION) -> str:
    """Play one turn of the `stock` agent; return the run's id."""
    run_id = ""
    async with Deck.from_project(PROJECT) as deck:
        async for event in deck.stream("stock", question):
            run_id = event.run_id
            shown = render(event)
            if shown is not None:
                print(shown, end="", flush=True)
    return run_id


def offline_script() -> Script:
    """The turns a model takes for QUESTION: find the SKU, check its stock, answer."""
    from agentdeck_openai.testing import Script, reply, tool_call

    return Script(
        [
            tool_call("list_products", {}),
            tool_call("stock_level", {"sku": "TENT-2P"}),
            reply("Yes: 14 two-person tents (TENT-2P) are in stock in Leipzig."),
        ]
    )


if __name__ == "__main__":
    question = " ".join(sys.argv[1:]) or QUESTION
    if os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
        asyncio.run(main(question))
    else:
        from agentdeck_openai.testing import LoopbackModelServer

        print("(no OPENAI_API_KEY: a scripted local model answers)", file=sys.stderr)
        with LoopbackModelServer(offline_script()) as server:
            os.environ.update(server.env())
            asyncio.run(main(question))
