"""Ask the project's `support` agent one question and print the run as it happens.

    python main.py "Where is my order A-1003?"

The deck is built from the `.agentdeck/` directory beside this file and reads its settings from
the environment: `OPENAI_API_KEY` and `OPENAI_MODEL` for a real provider (`OPENAI_BASE_URL` for
any OpenAI-compatible endpoint), `AGENTDECK_STATE` for where the run's events are kept. With no
provider configured, the same code runs against a local scripted stand-in for the model.
"""

from __future__ import annotations

import asyncio
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
QUESTION = "Where is my order A-1003?"


def render(event: Event) -> str | None:
    """What a person watching wants to see of one event (None: nothing)."""
    match event.payload:
        case ToolCallStarted(tool=tool, args=args):
            return f"-> {tool} {args}\n"
        case ToolCallCompleted(result_preview=preview):
            return f"<- {preview}\n"
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
    """Play one turn of the `support` agent; return the run's id."""
    run_id = ""
    async with Deck.from_project(PROJECT) as deck:
        async for event in deck.stream("support", question):
            run_id = event.run_id
            shown = render(event)
            if shown is not None:
                print(shown, end="", flush=True)
    return run_id


def offline_script() -> Script:
    """The turns a model takes for QUESTION: look the order up, then answer."""
    from agentdeck_openai.testing import Script, reply, tool_call

    return Script(
        [
            tool_call("order_status", {"order_id": "A-1003"}),
            reply("Your order A-1003 has shipped with DHL and should arrive on Thursday."),
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
