"""Ask the `returns` agent a question; it loads the skill it needs, then answers.

    python main.py "I got my shoes 40 days ago and never wore them. Can I get my money back?"

The deck is built from `.agentdeck/` (the agent and its skills) and reads its settings from the
environment: `OPENAI_API_KEY` and `OPENAI_MODEL` for a real provider. With no provider
configured, the same code runs against a local scripted stand-in for the model.
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
QUESTION = "I got my shoes 40 days ago and never wore them. Can I get my money back?"


def render(event: Event) -> str | None:
    """What a person watching wants to see of one event (None: nothing)."""
    match event.payload:
        case ToolCallStarted(tool=tool, args=args):
            return f"-> {tool} {args}\n"
        case ToolCallCompleted(result_preview=preview, result_size=size):
            first_line = preview.splitlines()[0] if preview else ""
            return f"<- {first_line} ({size} characters)\n"
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
    """Play one turn of the `returns` agent; return the run's id."""
    run_id = ""
    async with Deck.from_project(PROJECT) as deck:
        async for event in deck.stream("returns", question):
            run_id = event.run_id
            shown = render(event)
            if shown is not None:
                print(shown, end="", flush=True)
    return run_id


def offline_script() -> Script:
    """The turns a model takes for QUESTION: load the refund policy, then answer by it."""
    from agentdeck_openai.testing import Script, reply, tool_call

    return Script(
        [
            tool_call("load_skill", {"name": "refund-policy"}),
            reply(
                "You are past the 30-day window, so a cash refund is not possible, but "
                "returns between 31 and 60 days get store credit: you have 20 days left."
            ),
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
