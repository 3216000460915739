"""An existing LangGraph application, written without AgentDeck in mind.

It drafts a reply to a customer's e-mail with a model, has a person review the draft
(`interrupt()`), and sends it only if they say so. It is compiled with its own checkpointer and
runs on its own (`await graph.ainvoke(...)`); `main.py` wraps it, unchanged, as an AgentDeck
workflow.

The model is reached with the `openai` client, which reads `OPENAI_API_KEY` and
`OPENAI_BASE_URL` from the environment like any other application would.
"""

from __future__ import annotations

import os
from typing import Any, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from openai import AsyncOpenAI


class Ticket(TypedDict, total=False):
    email: str
    draft: str
    verdict: str
    sent: bool


async def draft(state: Ticket) -> dict[str, Any]:
    """Ask the model for a short, friendly reply."""
    async with AsyncOpenAI() as client:
        completion = await client.chat.completions.create(
            model=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini"),
            messages=[
                {"role": "system", "content": "Draft a two-sentence reply to this customer."},
                {"role": "user", "content": state["email"]},
            ],
        )
    return {"draft": completion.choices[0].message.content or ""}


def review(state: Ticket) -> dict[str, Any]:
    """A person reads the draft and answers "send" or "discard"."""
    verdict = interrupt({"question": "Send this reply?", "draft": state["draft"]})
    return {"verdict": verdict}


def send(state: Ticket) -> dict[str, Any]:
    """Send the reply (a real application would call its mail service here)."""
    return {"sent": True}


def route(state: Ticket) -> str:
    return "send" if state.get("verdict") == "send" else END


builder = StateGraph(Ticket)
builder.add_node("draft", draft)
builder.add_node("review", review)
builder.add_node("send", send)
builder.add_edge(START, "draft")
builder.add_edge("draft", "review")
builder.add_conditional_edges("review", route, ["send", END])
builder.add_edge("send", END)

graph = builder.compile(checkpointer=InMemorySaver())
