"""Test without a model provider: a loopback OpenAI-compatible server scripted by the test.

::

    from agentdeck_openai.testing import LoopbackModelServer, Script, reply, tool_call

    script = Script([tool_call("get_weather", {"city": "Paris"}), reply("It is sunny")])
    with LoopbackModelServer(script) as server:
        ...  # point AsyncOpenAI(base_url=server.base_url, api_key="sk-loopback") at it

``agentdeck_openai.pytest_plugin`` wraps it in fixtures, which pytest loads by itself wherever this
distribution is installed (the ``pytest11`` entry point).
"""

from __future__ import annotations

from agentdeck_openai.testing.script import (
    DEFAULT_USAGE,
    HTTPError,
    ModelRequest,
    Rule,
    Script,
    ToolCall,
    Turn,
    Usage,
    call,
    handoff,
    handoff_tool_name,
    http_error,
    rate_limited,
    reply,
    server_error,
    structured,
    tool_call,
    tool_calls,
)
from agentdeck_openai.testing.server import API_KEY, MODEL, LoopbackModelServer

__all__ = [
    "API_KEY",
    "DEFAULT_USAGE",
    "MODEL",
    "HTTPError",
    "LoopbackModelServer",
    "ModelRequest",
    "Rule",
    "Script",
    "ToolCall",
    "Turn",
    "Usage",
    "call",
    "handoff",
    "handoff_tool_name",
    "http_error",
    "rate_limited",
    "reply",
    "server_error",
    "structured",
    "tool_call",
    "tool_calls",
]
