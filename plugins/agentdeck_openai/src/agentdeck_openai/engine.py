"""``OpenAIEngine``: AgentDeck agents, executed by the OpenAI Agents SDK's own runner.

The engine owns execution; AgentDeck owns the record. ``compile`` turns an
:class:`~agentdeck.authoring.agents.Agent` into an SDK agent (:mod:`agentdeck_openai.compile`) with
no network; ``open`` builds the OpenAI client and starts the MCP servers agents use; ``play`` runs
one turn with ``Runner.run_streamed`` and yields canonical payloads (:mod:`agentdeck_openai.play`).

Per run the SDK receives:

* our :class:`~agentdeck_openai.scope.RunScope` as its run context (the application's context
  reaches tools, instructions and hooks through it, and never the model or the log);
* the conversation session ``request.session_factory.session_for(key)`` when the run has a
  ``session_id`` (``key`` is the session id, or ``"<namespace>:<session id>"`` in a namespace, so
  two tenants never share a conversation); without a factory the engine keeps an in-process SQLite
  session per key for its own life;
* ``max_turns`` from ``AGENTDECK_RUNNER_MAX_TURNS``, a ``RunConfig`` with the model provider,
  ``AGENTDECK_RUNNER_WORKFLOW_NAME``, and the SDK's own trace export switched off unless
  ``AGENTDECK_RUNNER_SDK_TRACING`` is true.

**Two ways to play, one record.** A run that asks for deltas (``deck.stream``, run handles, the
HTTP binding) plays on ``Runner.run_streamed``, its model calls streamed token by token. A
``Deck.run()`` asks for none (it returns only the result): unless
``AGENTDECK_RUNNER_DELTAS=always``, it plays *quietly* on the SDK's ``Runner.run``, its events
taken from run hooks (:mod:`agentdeck_openai.quiet`), because the streamed runner's task, queue
and per-item events, and the ``openai`` client's validation of every SSE event, are pure cost
when nobody reads the tokens. Both record the same message, tool, handoff, usage and approval
events (a quiet run has no ``text.delta``/``thought.delta``) and share approvals, child runs,
failures and the saved state; they differ in where a pause or cancel can land (the README's
"Run control" and "What a turn costs").
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from functools import partial
from typing import Any, ClassVar

import openai
from agents import RunConfig, RunResult
from agents.models.interface import ModelProvider
from agents.models.openai_provider import OpenAIProvider
from agents.run_config import CallModelData, ModelInputData

from agentdeck.authoring.agents import Agent
from agentdeck.errors import ConfigError
from agentdeck.model.content import ContentBlock
from agentdeck.model.payloads import Payload
from agentdeck.ports import (
    EngineCapabilities,
    EngineRequest,
    HeadlessEngine,
    Invocable,
    Invocation,
)
from agentdeck_openai.client import CAPABILITIES, checked_agent
from agentdeck_openai.compile import CompiledAgent, Compiler
from agentdeck_openai.config import EngineConfig
from agentdeck_openai.inputs import check_blocks, turn_blocks
from agentdeck_openai.mcp_servers import MCPServers
from agentdeck_openai.play import Play

__all__ = ["OpenAIEngine"]


class OpenAIEngine(HeadlessEngine):
    """Runs :class:`~agentdeck.authoring.agents.Agent` declarations on the OpenAI Agents SDK.

    Built by the plugin registry with the deck's :class:`~agentdeck.ports.EngineRequest`; pass a
    ``model_provider`` to send model calls through any Agents SDK provider instead of the
    ``OPENAI_*``-configured OpenAI client (the provider is then the caller's to close).

    A :class:`~agentdeck.ports.HeadlessEngine`: ``Agent.run()`` runs an agent on it without a
    deck (:meth:`run_headless`, :mod:`agentdeck_openai.headless`).
    """

    name: ClassVar[str] = "openai"
    capabilities: ClassVar[EngineCapabilities] = CAPABILITIES

    def __init__(
        self,
        request: EngineRequest | None = None,
        *,
        model_provider: ModelProvider | None = None,
    ) -> None:
        super().__init__(request)
        self.config = EngineConfig.from_request(self.request)
        self._compiler = Compiler(self.config, self.request.catalog)
        self._compiled: dict[int, Invocable] = {}
        self._given_provider = model_provider
        self._provider: ModelProvider | None = model_provider
        self._client: openai.AsyncOpenAI | None = None
        self._mcp = MCPServers()
        self._mcp_starting = asyncio.Lock()
        self._opened = False
        self._own_sessions: dict[str, Any] = {}
        self._run_config_template: RunConfig | None = None

    # ------------------------------------------------------------------ headless

    async def run_headless(
        self, definition: object, input: Any, *, session: Any = None
    ) -> RunResult:
        """One turn of ``definition`` (an ``Agent``) on the SDK's own ``Runner.run``, with no
        deck: what ``Agent.run()`` returns (see :mod:`agentdeck_openai.headless`)."""
        from agentdeck_openai.headless import run_headless  # it imports this module

        definition = checked_agent(definition)
        return await run_headless(self, definition, input, session=session)

    # ------------------------------------------------------------------ build

    def accepts(self, definition: object) -> bool:
        return isinstance(definition, Agent)

    def compile(self, definition: object) -> Invocable:
        definition = checked_agent(definition)
        known = self._compiled.get(id(definition))
        if known is not None and known.definition is definition:
            return known
        compiled = self._compiler.compile(definition)
        for member in compiled.graph.values():
            if member.mcp_servers and member.declaration.interrupt_on:
                self._mcp.set_interrupt_on(member.declaration.name, member.declaration.interrupt_on)
        invocable = Invocable(
            name=definition.name,
            kind="agent",
            engine=self.name,
            definition=definition,
            compiled=compiled,
            description=definition.description,
            code_digest=compiled.code_digest,
        )
        self._compiled[id(definition)] = invocable
        return invocable

    def prepare_input(self, invocable: Invocable, value: Any) -> list[ContentBlock]:
        """A string or content blocks, refusing (``ConfigError``) a block this engine cannot
        send before the run is opened; see :mod:`agentdeck_openai.inputs`."""
        return turn_blocks(value, use_responses=self.config.use_responses)

    # ------------------------------------------------------------------ lifecycle

    async def open(self) -> None:
        """Build the OpenAI client and start the MCP servers compiled agents use.

        A missing API key does not refuse the open (a deck may hold no agent that runs); the
        first agent run then fails with a ``ConfigError`` naming ``OPENAI_API_KEY``.
        """
        self._opened = True
        with contextlib.suppress(ConfigError):
            self._model_provider()
        needed = {name for inv in self._compiled.values() for name in _servers(inv)}
        await self._start_mcp(needed)

    async def close(self) -> None:
        self._opened = False
        await self._mcp.close()
        self._attach_mcp()
        for session in self._own_sessions.values():
            with contextlib.suppress(Exception):
                session.close()
        self._own_sessions.clear()
        if self._client is not None:
            client, self._client = self._client, None
            self._provider = self._given_provider
            with contextlib.suppress(Exception):
                await client.close()

    def _model_provider(self) -> ModelProvider:
        if self._provider is not None:
            return self._provider
        settings = self.config.openai
        http_client = None
        if settings.ca_bundle:
            http_client = openai.DefaultAsyncHttpxClient(verify=settings.ca_bundle)
        try:
            client = openai.AsyncOpenAI(
                api_key=settings.api_key or None,
                base_url=settings.base_url or None,
                http_client=http_client,
            )
        except openai.OpenAIError as missing:
            raise ConfigError(
                "the openai engine has no API key: set OPENAI_API_KEY (in the deck's environment "
                "or the 'openai' section of config.yaml)",
                setting="OPENAI_API_KEY",
            ) from missing
        self._client = client
        self._provider = OpenAIProvider(openai_client=client, use_responses=settings.use_responses)
        return self._provider

    async def _start_mcp(self, names: set[str]) -> None:
        """Start the named servers not started yet (a deck may compile after opening)."""
        if names <= set(self._mcp.servers):
            return
        async with self._mcp_starting:
            missing = sorted(names - set(self._mcp.servers))
            if missing:
                await self._mcp.open(self.request.catalog.mcp[name] for name in missing)
                self._attach_mcp()

    def _attach_mcp(self) -> None:
        """Give every compiled agent the started servers it names (none once closed)."""
        for invocable in self._compiled.values():
            compiled: CompiledAgent = invocable.compiled
            for member in compiled.graph.values():
                member.sdk_agent.mcp_servers = [
                    self._mcp.servers[name]
                    for name in member.mcp_servers
                    if name in self._mcp.servers
                ]

    # ------------------------------------------------------------------ play

    def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
        """The play's own async generator, handed to the runtime as it is.

        Not a generator iterating it here: every payload of a turn would pass one more
        generator, and the runtime closes this one itself when it stops reading. What is checked
        before the play starts still fails its first step, not this call (see
        :func:`_raising`), as when this method was a generator.
        """
        try:
            play = self._new_play(invocation)
        except Exception as error:
            return _raising(error)
        return play.run()

    def _new_play(self, invocation: Invocation) -> Play:
        if not self._opened:
            raise ConfigError("the openai engine plays runs only while it is open (call open())")
        compiled = invocation.invocable.compiled
        if not isinstance(compiled, CompiledAgent):
            raise ConfigError(
                f"invocable '{invocation.invocable.name}' was not compiled by the openai engine"
            )
        check_blocks(invocation.input, use_responses=self.config.use_responses)
        provider = self._model_provider()
        servers = _servers(invocation.invocable)
        return Play(
            invocation,
            compiled,
            run_config=self._run_config(provider, invocation),
            session=self._session(invocation),
            max_turns=self.config.runner.max_turns,
            use_responses=self.config.use_responses,
            quiet=not invocation.deltas and self.config.runner.deltas == "when-asked",
            prepare=partial(self._start_mcp, set(servers)) if servers else None,
        )

    def _run_config(self, provider: ModelProvider, invocation: Invocation) -> RunConfig:
        """The play's ``RunConfig``: a copy of one built per provider, with the run's own
        fields set (building one runs the SDK's defaults and checks again, on every play)."""
        template = self._run_config_template
        if template is None or template.model_provider is not provider:
            runner = self.config.runner
            template = self._run_config_template = RunConfig(
                model_provider=provider,
                tracing_disabled=not runner.sdk_tracing,
                workflow_name=runner.workflow_name,
                tool_not_found_behavior="return_error_to_model",
                call_model_input_filter=(
                    _closing_turn(runner.handoff_closing_turn)
                    if runner.handoff_ends_on_user_turn
                    else None
                ),
            )
        # A shallow copy, as copy.copy makes of a dataclass, without its generic machinery.
        config: RunConfig = object.__new__(RunConfig)
        config.__dict__.update(template.__dict__)
        config.group_id = invocation.session_id
        config.trace_metadata = {"agentdeck_run_id": invocation.run_id}
        return config

    def _session(self, invocation: Invocation) -> Any:
        if not invocation.session_id:
            return None
        key = (
            f"{invocation.namespace}:{invocation.session_id}"
            if invocation.namespace
            else invocation.session_id
        )
        factory = self.request.session_factory
        if factory is not None:
            return factory.session_for(key)
        session = self._own_sessions.get(key)
        if session is None:
            from agents import SQLiteSession

            session = self._own_sessions[key] = SQLiteSession(key)
        return session


async def _raising(error: Exception) -> AsyncIterator[Payload]:
    """A play that fails at its first step with ``error`` (found before it could start)."""
    raise error
    yield  # pragma: no cover - unreachable; makes this an async generator


def _servers(invocable: Invocable) -> list[str]:
    compiled = invocable.compiled
    if not isinstance(compiled, CompiledAgent):
        return []
    return [name for member in compiled.graph.values() for name in member.mcp_servers]


def _closing_turn(text: str) -> Any:
    """A model-input filter appending a user turn after a handoff (see
    ``AGENTDECK_RUNNER_HANDOFF_ENDS_ON_USER_TURN``): only the request changes, not the history."""
    handoff_prefix = "transfer_to_"

    def ends_on_user_turn(data: CallModelData[Any]) -> ModelInputData:
        items = list(data.model_data.input)
        last = items[-1] if items else None
        if isinstance(last, dict) and last.get("type") == "function_call_output":
            calls = {
                item.get("call_id"): item.get("name")
                for item in items
                if isinstance(item, dict) and item.get("type") == "function_call"
            }
            name = calls.get(last.get("call_id"))
            if isinstance(name, str) and name.startswith(handoff_prefix):
                items.append({"role": "user", "content": text})
        return ModelInputData(input=items, instructions=data.model_data.instructions)

    return ends_on_user_turn
