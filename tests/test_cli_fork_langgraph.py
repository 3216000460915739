"""`agentdeck runs show` of a forked LangGraph run (on SQLite, so the command reads what the
deck wrote): it names where the fork came from, and the fork's own, different answer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph

from agentdeck import Deck, Settings
from agentdeck.cli import main
from agentdeck_langgraph import Workflow

replies: Iterator[AIMessage] = iter(())


class Chat(TypedDict, total=False):
    question: str
    plan: str
    draft: str
    answer: str


def plan(state: Chat) -> dict[str, Any]:
    return {"plan": f"look up {state['question']}"}


async def draft(state: Chat) -> dict[str, Any]:
    reply = await GenericFakeChatModel(messages=replies).ainvoke(state["plan"])
    return {"draft": str(reply.content)}


def finish(state: Chat) -> dict[str, Any]:
    return {"answer": state["draft"].upper()}


def chat_graph() -> StateGraph[Any, Any, Any, Any]:
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(Chat)
    builder.add_node("plan", plan)
    builder.add_node("draft", draft)
    builder.add_node("finish", finish)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "draft")
    builder.add_edge("draft", "finish")
    builder.add_edge("finish", END)
    return builder


async def test_runs_show_prints_where_a_fork_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    global replies
    replies = iter([AIMessage(content="first answer"), AIMessage(content="second answer")])
    url = f"sqlite:///{tmp_path / 'state.db'}"
    monkeypatch.setenv("AGENTDECK_STATE", url)
    monkeypatch.delenv("NO_COLOR", raising=False)
    settings = Settings(env={"AGENTDECK_STATE": url})
    async with Deck(workflows=[Workflow("chat", chat_graph())], settings=settings) as deck:
        original = await deck.runs.start("chat", {"question": "refunds"})
        assert (await original)["answer"] == "FIRST ANSWER"
        fork = await deck.runs.fork(original.id, at=1)  # after `plan`: `draft` asks again
        await fork

    status = await asyncio.to_thread(main, ["runs", "show", fork.id])

    out = capsys.readouterr().out
    assert status == 0
    assert f"forked from run {original.id} at step 1" in out
    assert "SECOND ANSWER" in out
