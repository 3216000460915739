"""An agent turn with a tool call, played by a real Deck on the OpenAI engine against the
loopback model server, traced by LangfuseObserver and captured as the Langfuse SDK exports it."""

from __future__ import annotations

import importlib.util
import json
import sys
import uuid
from pathlib import Path
from typing import Any

from agentdeck import Agent, Deck
from agentdeck.settings import Settings
from agentdeck.testing.otlp import OTLPReceiver
from agentdeck_langfuse import LangfuseObserver
from agentdeck_openai.testing import LoopbackModelServer, Script, reply, tool_call


def _trees() -> Any:
    path = Path(__file__).parents[1] / "plugins/agentdeck_langfuse/tests/otlp_trees.py"
    spec = importlib.util.spec_from_file_location("langfuse_otlp_trees", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id} is in transit"


async def test_an_agent_turn_with_a_tool_call_is_one_trace_with_a_generation_and_a_tool() -> None:
    script = Script([tool_call("lookup_order", {"order_id": "A-1"}), reply("It is in transit.")])
    with LoopbackModelServer(script) as model, OTLPReceiver() as receiver:
        settings = Settings(
            env={
                **model.env(),
                "AGENTDECK_LANGFUSE_PUBLIC_KEY": f"pk-lf-{uuid.uuid4().hex[:12]}",
                "AGENTDECK_LANGFUSE_SECRET_KEY": "sk-lf-test",
                "AGENTDECK_LANGFUSE_BASE_URL": receiver.url,
            }
        )
        bot = Agent(name="bot", instructions="Help.", tools=[lookup_order])
        async with Deck(agents=[bot], settings=settings, observers=[LangfuseObserver()]) as deck:
            result = await deck.run("bot", "where is A-1?", session_id="chat-1")
        assert result.output == "It is in transit."
        spans = _trees().exported_spans(receiver, "/api/public/otel/v1/traces")

    [root] = [s for s in spans if s.parent_span_id is None]
    assert root.name == "bot"
    assert root.attributes["langfuse.observation.type"] == "agent"
    assert root.attributes["session.id"] == "chat-1"
    children = [s for s in spans if s.parent_span_id == root.span_id]
    kinds = sorted(str(s.attributes["langfuse.observation.type"]) for s in children)
    assert kinds.count("generation") == 2  # one per model call
    [tool] = [s for s in children if s.attributes["langfuse.observation.type"] == "tool"]
    assert tool.name == "lookup_order"
    assert json.loads(str(tool.attributes["langfuse.observation.input"])) == {"order_id": "A-1"}
    generations = [s for s in children if s.attributes["langfuse.observation.type"] == "generation"]
    usage = [
        json.loads(str(g.attributes["langfuse.observation.usage_details"])) for g in generations
    ]
    assert all(u["input"] == 10 and u["output"] == 5 for u in usage)
