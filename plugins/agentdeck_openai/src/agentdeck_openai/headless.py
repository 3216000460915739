"""The headless path: one agent turn on the Agents SDK's own ``Runner.run``, with no Deck.

What ``Agent.run()`` does with this plugin installed (the core finds it through the engine
factory's ``run_headless``, see :mod:`agentdeck_openai.plugin`). The agent is compiled exactly as
a deck compiles it, by the engine's own ``compile`` (:mod:`agentdeck_openai.compile`), its input
checked and converted as the engine does, and the SDK runs it with the ``OPENAI_*`` endpoint and
the ``AGENTDECK_RUNNER_*`` defaults of the settings given. What comes back is the SDK's own
``RunResult``.

Everything that makes a deck run a *run* is deliberately absent: no run id, no event log, no
observers, no safe points, no approval policy (an approval comes back as the SDK's own
``result.interruptions``), and no context. The agent's SDK objects (guardrails, tool-use
behaviour, ``run_hooks``) take part as they do on a deck. The SDK receives ``context=None``, so
every wrapper that would inject a ``ToolCtx`` finds no :class:`~agentdeck_openai.scope.RunScope`
and refuses: a tool's refusal reaches the model as the tool's output (the run goes on, as after
any failing tool); an instructions callable's or a hook's is raised here as the
:class:`~agentdeck.errors.ContextTypeError` it is, rather than inside the SDK's ``UserError``.
With no catalog, nothing can be looked up by name: handoffs and subagents must be ``Agent``
objects, and an agent naming MCP servers or skills is refused when it compiles.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
import weakref
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

import openai
from agents import RunConfig, Runner, RunResult
from agents.memory.session import Session
from agents.models.openai_provider import OpenAIProvider

from agentdeck.authoring.agents import Agent
from agentdeck.errors import ConfigError, ContextTypeError
from agentdeck_openai.compile import CompiledAgent
from agentdeck_openai.config import EngineConfig
from agentdeck_openai.engine import OpenAIEngine, _closing_turn
from agentdeck_openai.inputs import to_sdk_input
from agentdeck_openai.settings import OpenAISettings

__all__ = ["run_headless"]


async def run_headless(
    engine: OpenAIEngine, agent: Agent, input: Any, *, session: Any = None
) -> RunResult:
    """Run ``agent`` once on the SDK's ``Runner.run``, headless (see the module doc).

    ``engine`` is an unopened engine built for the caller's settings; only its compiler, its
    input check and its configuration are used, so nothing of it needs closing. ``session``
    is an Agents SDK ``Session`` whose conversation the turn continues, or ``None``.
    """
    if session is not None and not isinstance(session, Session):
        raise ConfigError(
            f"Agent.run(session=...) takes an Agents SDK Session (SQLiteSession, RedisSession, "
            f"...); got {type(session).__name__}",
            setting="session",
        )
    invocable = engine.compile(agent)
    compiled: CompiledAgent = invocable.compiled
    config = engine.config
    sdk_input = to_sdk_input(
        engine.prepare_input(invocable, input), use_responses=config.use_responses
    )
    client = await _client_for(config.openai)
    try:
        return await Runner.run(
            compiled.sdk_agent,
            sdk_input,
            context=None,
            max_turns=config.runner.max_turns,
            run_config=_run_config(config, client),
            session=session,
            hooks=compiled.run_hooks,
        )
    except Exception as failed:
        refusal = _context_refusal(failed)
        if refusal is None or refusal is failed:
            raise
        # The SDK wrapped our refusal in its own UserError; the refusal is what the caller must
        # see (typed, naming the tool), and the SDK's wrapper adds nothing to it.
        raise refusal from None


# --------------------------------------------------------------------------- clients, per loop

_ClientKey = tuple[str | None, str | None, str]
"""(API key, base URL, CA bundle): what makes two clients different."""


@dataclass(eq=False)
class _LoopClients:
    """The OpenAI clients the headless runs of one event loop share."""

    clients: dict[_ClientKey, openai.AsyncOpenAI] = field(default_factory=dict)
    closer: AsyncGenerator[None, None] | None = None


_per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopClients] = (
    weakref.WeakKeyDictionary()
)


async def _client_for(settings: OpenAISettings) -> openai.AsyncOpenAI:
    """The client for ``settings`` on the running loop: built on first use, then shared.

    A client per run would cost a TLS context (tens of milliseconds of CPU) and a new connection
    per call, several times what a run on the loopback server costs. One client for the whole
    process would not do either: its pooled connections belong to the loop that opened them, and
    a second ``asyncio.run`` would trip over them. So each loop has its own, closed when the loop
    shuts down (see :func:`_close_at_loop_shutdown`).
    """
    loop = asyncio.get_running_loop()
    for ended in [other for other in _per_loop if other.is_closed()]:
        _per_loop.pop(ended, None)  # closed without shutting down: all that is left is to let go
    shared = _per_loop.get(loop)
    if shared is None:
        shared = _per_loop[loop] = _LoopClients()
        shared.closer = _close_at_loop_shutdown(shared.clients)
        await anext(shared.closer)
    # Resolved here as the client would resolve them, so the key says which endpoint it is.
    api_key = settings.api_key or os.environ.get("OPENAI_API_KEY")
    base_url = settings.base_url or os.environ.get("OPENAI_BASE_URL")
    key = (api_key, base_url, settings.ca_bundle)
    client = shared.clients.get(key)
    if client is None:
        client = shared.clients[key] = _new_client(api_key, base_url, settings.ca_bundle)
    return client


async def _close_at_loop_shutdown(
    clients: dict[_ClientKey, openai.AsyncOpenAI],
) -> AsyncGenerator[None, None]:
    """Parked at its ``yield`` for the loop's whole life. ``asyncio.run`` and ``asyncio.Runner``
    (which pytest-asyncio uses too) close every open async generator when they shut a loop down,
    and that runs the ``finally`` below inside the loop, while the clients can still close."""
    try:
        yield
    finally:
        for client in clients.values():
            with contextlib.suppress(Exception):
                await client.close()
        clients.clear()


def _new_client(api_key: str | None, base_url: str | None, ca_bundle: str) -> openai.AsyncOpenAI:
    http_client = None
    if ca_bundle:
        try:
            trusted = ssl.create_default_context(cafile=ca_bundle)
        except (OSError, ssl.SSLError) as unreadable:
            raise ConfigError(
                f"OPENAI_CA_BUNDLE={ca_bundle!r} is not a readable PEM file of CA certificates: "
                f"{unreadable}",
                setting="OPENAI_CA_BUNDLE",
            ) from unreadable
        http_client = openai.DefaultAsyncHttpxClient(verify=trusted)
    try:
        return openai.AsyncOpenAI(api_key=api_key, base_url=base_url, http_client=http_client)
    except openai.OpenAIError as missing:
        raise ConfigError(
            "Agent.run() has no OpenAI API key: set OPENAI_API_KEY (in the environment, the "
            "'openai' section of config.yaml, or the settings= given)",
            setting="OPENAI_API_KEY",
        ) from missing


def _run_config(config: EngineConfig, client: openai.AsyncOpenAI) -> RunConfig:
    """The engine's run configuration, less what only a deck run has (its id, its session)."""
    runner = config.runner
    return RunConfig(
        model_provider=OpenAIProvider(openai_client=client, use_responses=config.use_responses),
        tracing_disabled=not runner.sdk_tracing,
        workflow_name=runner.workflow_name,
        tool_not_found_behavior="return_error_to_model",
        call_model_input_filter=(
            _closing_turn(runner.handoff_closing_turn) if runner.handoff_ends_on_user_turn else None
        ),
    )


def _context_refusal(error: BaseException) -> ContextTypeError | None:
    """The context refusal somewhere in ``error``'s chain of causes, if that is what it is."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, ContextTypeError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
