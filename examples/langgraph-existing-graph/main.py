"""Run an existing, compiled LangGraph graph as an AgentDeck workflow, unchanged.

    python main.py "My parcel arrived damaged, what now?"            # asks you: send or discard
    python main.py --answer send "My parcel arrived damaged, what now?"

`support_graph.py` is the application's graph as it was; `Workflow.from_graph()` wraps it. The
deck records every node's update, parks the run where the graph calls `interrupt()`, and
resumes the graph with the answer. With no `OPENAI_API_KEY` set, a local scripted stand-in for
the model writes the draft.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import warnings
from typing import TYPE_CHECKING, Any

from support_graph import graph

from agentdeck import Deck, Event, NodeUpdated, RunCompleted, RunInterrupted
from agentdeck.runtime.config import NonDurableStoreWarning
from agentdeck_langgraph import Workflow

if TYPE_CHECKING:  # the stand-in model is only imported when it is used
    from agentdeck_openai.testing import Script

EMAIL = "Hi, my parcel A-1003 arrived with a broken mug inside. What can you do? -- Sam"

support_reply = Workflow.from_graph(
    "support_reply", graph, description="Draft a reply, have a person approve it, send it."
)


def render(event: Event) -> str | None:
    """One line for the events worth watching (None: nothing)."""
    match event.payload:
        case NodeUpdated(node=node, update=update):
            return f"node {node}: {update}"
        case RunInterrupted(payload=payload):
            return f"waiting: {payload['question']}"
        case RunCompleted():
            return "completed"
        case _:
            return None


async def _show(events: Any) -> int:
    """Print the events as they come; return the last seq seen."""
    last = -1
    async for event in events:
        last = event.seq
        line = render(event)
        if line is not None:
            print(line)
    return last


async def main(email: str = EMAIL, answer: str | None = None) -> dict[str, Any]:
    """Play the graph on a deck, ask for the review's answer, and return the final state."""
    async with Deck(workflows=[support_reply]) as deck:
        run = await deck.runs.start("support_reply", {"email": email})
        last = await _show(run.events(follow=True))
        question = await run.pending()
        if question is not None:
            verdict = answer or input("send or discard? ").strip()
            print(f"answer: {verdict}")
            await run.answer(verdict)
            await _show(run.events(from_seq=last + 1, follow=True))
        final: dict[str, Any] = await run
        print(f"final state: sent={final.get('sent', False)}")
        return final


def offline_script() -> Script:
    """What the stand-in model drafts."""
    from agentdeck_openai.testing import Script, reply

    return Script(
        [reply("Sorry about the mug, Sam! A replacement is on its way at no cost to you.")]
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Run the support graph on a deck.")
    parser.add_argument("email", nargs="?", default=EMAIL)
    parser.add_argument("--answer", choices=["send", "discard"])
    args = parser.parse_args()
    # The run parks in memory on purpose here (set AGENTDECK_STATE to keep it); no need to warn.
    warnings.simplefilter("ignore", NonDurableStoreWarning)
    if os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
        asyncio.run(main(args.email, args.answer))
    else:
        from agentdeck_openai.testing import LoopbackModelServer

        print("(no OPENAI_API_KEY: a scripted local model drafts)", file=sys.stderr)
        with LoopbackModelServer(offline_script()) as server:
            os.environ.update(server.env())
            asyncio.run(main(args.email, args.answer))
