"""Jack end to end through the Deck: the real engine, the real tools, the loopback model."""

from __future__ import annotations

from typing import Any

import pytest
from agentdeck import (
    Budget,
    Deck,
    Event,
    RunCompleted,
    RunFailed,
    RunFailedError,
    TextBlock,
    ToolCallCompleted,
    ToolCallStarted,
)
from agentdeck_openai.testing import LoopbackModelServer, Usage, reply, tool_call

from jack.agent import AGENT
from jack.corpus import DocsCorpus

PAUSING = "docs/runs-and-control#pausing-and-resuming-a-run"


async def _ask(deck: Deck, corpus: DocsCorpus, question: str, **options: Any) -> list[Event]:
    return [event async for event in deck.stream(AGENT, question, context=corpus, **options)]


async def test_an_answer_searches_reads_and_records_each_tool_call(
    deck: Deck, corpus: DocsCorpus, model_server: LoopbackModelServer
) -> None:
    model_server.script.add(
        tool_call("search_docs", {"query": "pause run"}),
        tool_call("read_doc", {"slug": PAUSING}),
        reply("Call `await run.pause()`; `await run.resume()` continues it."),
    )
    events = await _ask(deck, corpus, "How do I pause a run?")

    tools = [
        e.payload for e in events if isinstance(e.payload, ToolCallStarted | ToolCallCompleted)
    ]
    assert [(p.kind, p.tool) for p in tools] == [
        ("tool.call.started", "search_docs"),
        ("tool.call.completed", "search_docs"),
        ("tool.call.started", "read_doc"),
        ("tool.call.completed", "read_doc"),
    ]
    started, searched, _, read = tools
    assert isinstance(started, ToolCallStarted) and started.args == {"query": "pause run"}
    assert isinstance(searched, ToolCallCompleted) and searched.error is None
    assert searched.result_preview.startswith(f"1. {PAUSING} ")
    assert isinstance(read, ToolCallCompleted)
    assert read.result_preview == corpus.read(PAUSING)
    ending = events[-1].payload
    assert isinstance(ending, RunCompleted)
    assert ending.output == [
        TextBlock(text="Call `await run.pause()`; `await run.resume()` continues it.")
    ]

    first, second, third = model_server.model_requests
    # The model is offered the query and the slug, never the corpus the tools receive.
    tool_schemas = {tool["name"]: tool["parameters"] for tool in first.body["tools"]}
    assert {name: sorted(schema["properties"]) for name, schema in tool_schemas.items()} == {
        "search_docs": ["query"],
        "read_doc": ["slug"],
    }
    assert second.tool_outputs[started.call_id] == searched.result_preview
    assert corpus.read(PAUSING) in third.tool_outputs.values()


async def test_a_follow_up_in_the_same_session_sees_turn_one(
    deck: Deck, corpus: DocsCorpus, model_server: LoopbackModelServer
) -> None:
    model_server.script.add(
        reply("Use `await run.pause()`."),
        reply("Then `await run.resume()` continues it."),
    )
    await _ask(deck, corpus, "How do I pause a run?", session_id="conversation-1")
    await _ask(deck, corpus, "And how do I continue it?", session_id="conversation-1")

    follow_up = model_server.model_requests[-1]
    assert follow_up.user_texts == ["How do I pause a run?", "And how do I continue it?"]
    assert "Use `await run.pause()`." in str(follow_up.items)


async def test_another_session_starts_from_nothing(
    deck: Deck, corpus: DocsCorpus, model_server: LoopbackModelServer
) -> None:
    model_server.script.add(reply("One."), reply("Two."))
    await _ask(deck, corpus, "First question?", session_id="a")
    await _ask(deck, corpus, "Second question?", session_id="b")
    assert model_server.model_requests[-1].user_texts == ["Second question?"]


async def test_a_turn_over_its_token_ceiling_ends_budget_exceeded(
    deck: Deck, corpus: DocsCorpus, model_server: LoopbackModelServer
) -> None:
    costly = Usage(input_tokens=100, output_tokens=10)
    model_server.script.add(
        tool_call("search_docs", {"query": "pause"}, usage=costly),
        tool_call("read_doc", {"slug": PAUSING}, usage=costly),  # crosses 200 here
        reply("never reached", usage=costly),
    )
    events = await _ask(deck, corpus, "How do I pause a run?", budget=Budget(max_total_tokens=200))

    ending = events[-1].payload
    assert isinstance(ending, RunFailed)
    assert ending.error_code == "budget_exceeded"
    assert ending.message == "total tokens: 220 used, budget 200"
    # It ended at the model call that crossed the ceiling: the read it asked for never ran.
    assert [e.payload.tool for e in events if isinstance(e.payload, ToolCallStarted)] == [
        "search_docs"
    ]
    run = await deck.runs.get(events[-1].run_id)
    assert await run.status() == "failed"
    with pytest.raises(RunFailedError) as failed:
        await run
    assert failed.value.error_code == "budget_exceeded"
