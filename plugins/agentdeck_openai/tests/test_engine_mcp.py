"""MCP servers from the catalog: started when the engine opens, their tools offered, stopped on
close. The server is a real stdio MCP server (``mcp_echo_server.py``, mcp 2.x)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import engine_support as support  # loaded by conftest.py
import pytest

from agentdeck import Agent
from agentdeck.authoring.catalog import Catalog
from agentdeck.authoring.mcp import MCP, MCPServerSpec
from agentdeck.errors import ConfigError
from agentdeck.model.content import TextBlock
from agentdeck.model.payloads import ToolCallCompleted
from agentdeck.testing.engine_kit import (
    check_completed,
    check_interrupted,
    drive,
    make_invocation,
)
from agentdeck_openai.testing import LoopbackModelServer, reply, tool_call

ECHO = MCPServerSpec(
    name="echo",
    transport="stdio",
    command=sys.executable,
    args=(str(Path(__file__).with_name("mcp_echo_server.py")),),
)


async def test_a_catalog_mcp_server_is_started_on_open_and_its_tool_is_called(
    model_server: LoopbackModelServer,
) -> None:
    agent = Agent(name="Echoer", instructions="Shout.", mcp_servers=["echo"])
    engine = support.make_engine(model_server, catalog=Catalog(agents=[agent], mcp=MCP([ECHO])))
    invocable = engine.compile(agent)  # as a deck does: build, then open
    model_server.script.add(tool_call("shout", {"text": "hello"}, call_id="m1"), reply("HELLO!"))

    async with support.opened(engine):
        result = await drive(engine, make_invocation(engine, agent, "shout hello"))
        assert "shout" in model_server.model_requests[0].tool_names
        assert invocable.compiled.sdk_agent.mcp_servers  # attached while open

    assert check_completed(result) == [TextBlock(text="HELLO!")]
    [completed] = support.payloads(result, ToolCallCompleted)
    assert completed.tool == "shout"
    assert "HELLO" in support.tool_output_sent(model_server, "m1")
    assert invocable.compiled.sdk_agent.mcp_servers == []  # detached once closed


async def test_an_mcp_tool_in_interrupt_on_waits_for_approval(
    model_server: LoopbackModelServer,
) -> None:
    agent = Agent(name="Careful", instructions="x", mcp_servers=["echo"], interrupt_on=["shout"])
    engine = support.make_engine(model_server, catalog=Catalog(agents=[agent], mcp=MCP([ECHO])))
    model_server.script.add(tool_call("shout", {"text": "hey"}, call_id="m2"))

    async with support.opened(engine):
        parked = await drive(engine, make_invocation(engine, agent, "shout"))

    assert check_interrupted(parked) == "approval-m2"


async def test_a_server_that_cannot_start_refuses_the_open_naming_it(
    model_server: LoopbackModelServer, tmp_path: Path
) -> None:
    broken = MCPServerSpec(
        name="broken", transport="stdio", command=sys.executable, args=(str(tmp_path / "nope.py"),)
    )
    agent = Agent(name="B", instructions="x", mcp_servers=["broken"])
    engine = support.make_engine(model_server, catalog=Catalog(agents=[agent], mcp=MCP([broken])))
    engine.compile(agent)

    with pytest.raises(ConfigError, match="MCP server 'broken' could not be started"):
        await engine.open()
    await engine.close()


async def test_a_stdio_server_starts_while_stderr_is_a_stream_without_a_file_descriptor(
    model_server: LoopbackModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A notebook's or a test runner's capture replaces sys.stderr with such a stream; the child
    # process needs a real descriptor for its stderr, so the start must not take that stream.
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    agent = Agent(name="Echoer", instructions="Shout.", mcp_servers=["echo"])
    engine = support.make_engine(model_server, catalog=Catalog(agents=[agent], mcp=MCP([ECHO])))
    invocable = engine.compile(agent)

    async with support.opened(engine):
        assert invocable.compiled.sdk_agent.mcp_servers  # started and attached


def test_a_servers_stderr_is_this_processes_own_when_it_has_a_file_descriptor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentdeck_openai.mcp_servers import _server_errlog

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert _server_errlog() is sys.__stderr__
    monkeypatch.setattr(sys, "stderr", sys.__stderr__)
    assert _server_errlog() is sys.__stderr__
