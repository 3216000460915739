"""The catalog's MCP servers, started when the engine opens and stopped when it closes.

Only servers some compiled agent names in ``mcp_servers=`` are started. ``${VAR}`` references in a
server's declaration are expanded from the process environment when it starts, so a secret never
sits in the catalog. Each server lives in a task of its own (MCP clients must be entered and
exited in one task); :meth:`MCPServers.open` waits until every server is connected and refuses the
open with a ``ConfigError`` naming the server that could not start.

A server's tools reach a model under their MCP names. ``interrupt_on`` works for them: the
server asks, per call, whether the calling agent lists the tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, TextIO

from agents.mcp import MCPServer, MCPServerSse, MCPServerStdio, MCPServerStreamableHttp
from agents.mcp.server import MCPStreamTransport
from mcp.client.stdio import stdio_client

from agentdeck.authoring.mcp import MCPServerSpec
from agentdeck.errors import ConfigError

__all__ = ["MCPServers"]

_CONNECT_TIMEOUT = 30.0
"""Seconds a server has to start and answer its handshake."""


def _server_errlog() -> TextIO:
    """Where a stdio MCP server's stderr goes: this process's stderr when it is a real file.

    The `mcp` client binds its default `errlog` to whatever ``sys.stderr`` was when it was first
    imported; if that was a replaced stream without a file descriptor (a test's or a notebook's
    capture), every later server start fails with ``UnsupportedOperation: fileno``. Resolving it
    per start, falling back to the interpreter's original stderr, keeps the server's messages
    visible and the start independent of import order.
    """
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (OSError, ValueError, AttributeError):
            continue
    return open(os.devnull, "w", encoding="utf-8")


class _StdioServer(MCPServerStdio):
    """The SDK's stdio server with its child's stderr chosen when it starts (`_server_errlog`)."""

    def create_streams(self) -> AbstractAsyncContextManager[MCPStreamTransport]:
        return stdio_client(self.params, errlog=_server_errlog())


class MCPServers:
    """Started MCP servers by name, each owned by one background task."""

    def __init__(self, interrupt_on: Mapping[str, frozenset[str]] | None = None) -> None:
        self._interrupt_on = dict(interrupt_on or {})
        self.servers: dict[str, MCPServer] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._stop = asyncio.Event()

    def set_interrupt_on(self, agent: str, tools: Iterable[str]) -> None:
        """Calls of ``tools`` by ``agent`` wait for approval."""
        self._interrupt_on[agent] = frozenset(tools)

    async def open(self, specs: Iterable[MCPServerSpec]) -> None:
        for spec in specs:
            server = self._server(spec.expanded())
            ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._tasks.append(
                asyncio.create_task(self._hold(server, ready), name=f"mcp:{spec.name}")
            )
            try:
                await asyncio.wait_for(asyncio.shield(ready), _CONNECT_TIMEOUT)
            except Exception as failed:
                await self.close()
                raise ConfigError(
                    f"MCP server '{spec.name}' could not be started "
                    f"({type(failed).__name__}); check its command or url in the MCP configuration",
                    setting="mcp",
                ) from failed
            self.servers[spec.name] = server

    async def _hold(self, server: MCPServer, ready: asyncio.Future[None]) -> None:
        try:
            await server.connect()  # type: ignore[no-untyped-call]  # untyped in the SDK
            try:
                ready.set_result(None)
                await self._stop.wait()
            finally:
                await server.cleanup()  # type: ignore[no-untyped-call]  # untyped in the SDK
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError())
            if not isinstance(exc, Exception):
                raise

    async def close(self) -> None:
        self._stop.set()
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(task, _CONNECT_TIMEOUT)
        self.servers.clear()
        self._stop = asyncio.Event()

    def _server(self, spec: MCPServerSpec) -> MCPServer:
        approval = self._requires_approval
        if spec.transport == "stdio":
            params: dict[str, Any] = {"command": spec.command, "args": list(spec.args)}
            if spec.env:
                params["env"] = {**os.environ, **spec.env}
            if spec.cwd:
                params["cwd"] = spec.cwd
            return _StdioServer(
                params=params,  # type: ignore[arg-type]
                name=spec.name,
                cache_tools_list=True,
                require_approval=approval,
            )
        remote: dict[str, Any] = {"url": spec.url}
        if spec.headers:
            remote["headers"] = dict(spec.headers)
        if spec.transport == "sse":
            return MCPServerSse(
                params=remote,  # type: ignore[arg-type]
                name=spec.name,
                cache_tools_list=True,
                require_approval=approval,
            )
        return MCPServerStreamableHttp(
            params=remote,  # type: ignore[arg-type]
            name=spec.name,
            cache_tools_list=True,
            require_approval=approval,
        )

    def _requires_approval(self, _context: Any, agent: Any, tool: Any) -> bool:
        listed = self._interrupt_on.get(getattr(agent, "name", ""), frozenset())
        return getattr(tool, "name", None) in listed
