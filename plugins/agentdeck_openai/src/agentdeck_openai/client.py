"""``OpenAIClientEngine``: what a deck that only admits agent runs for workers needs of the engine.

On ``AGENTDECK_EXECUTION=temporal://...`` an embedded caller, ``agentdeck serve`` or the CLI
records a run and hands it to a worker; the worker's :class:`~agentdeck_openai.engine.OpenAIEngine`
plays it. Recording it takes the agent's name, kind and ``code_digest``
(:mod:`agentdeck_openai.digest`) and the engine's input check (:mod:`agentdeck_openai.inputs`),
none of which needs the Agents SDK -- so a client process never imports it. What a build on the
full engine would also refuse (an agent with no model, a tool the SDK cannot take) is refused by
the workers, which compile every agent when they start.
"""

from __future__ import annotations

from typing import Any, ClassVar

from agentdeck.authoring.agents import Agent
from agentdeck.errors import ConfigError
from agentdeck.model.content import ContentBlock
from agentdeck.ports import ClientEngine, EngineCapabilities, EngineRequest, Invocable
from agentdeck.vocabulary import SafePoint
from agentdeck_openai.config import EngineConfig
from agentdeck_openai.digest import agent_digest
from agentdeck_openai.inputs import turn_blocks

__all__ = ["CAPABILITIES", "OpenAIClientEngine", "checked_agent"]

CAPABILITIES = EngineCapabilities(
    safe_points=frozenset({SafePoint.STREAM_ITEM, SafePoint.TOOL_DISPATCH}),
    interrupts=True,
    durable_suspend=True,
)
"""The openai engine's capabilities, declared once for the engine and its client face."""


def checked_agent(definition: object) -> Agent:
    """``definition`` as the ``Agent`` the openai engine and its face take, or the
    ``ConfigError`` both give for anything else."""
    if not isinstance(definition, Agent):
        raise ConfigError(
            f"the openai engine runs Agent declarations, not {type(definition).__name__}"
        )
    return definition


class OpenAIClientEngine(ClientEngine):
    """The ``openai`` engine as a client deck loads it: describes agents, checks inputs."""

    name: ClassVar[str] = "openai"
    capabilities: ClassVar[EngineCapabilities] = CAPABILITIES

    def __init__(self, request: EngineRequest | None = None) -> None:
        super().__init__(request)
        self.config = EngineConfig.from_request(self.request)

    def accepts(self, definition: object) -> bool:
        return isinstance(definition, Agent)

    def compile(self, definition: object) -> Invocable:
        agent = checked_agent(definition)
        return Invocable(
            name=agent.name,
            kind="agent",
            engine=self.name,
            definition=agent,
            description=agent.description,
            code_digest=agent_digest(agent),
        )

    def prepare_input(self, invocable: Invocable, value: Any) -> list[ContentBlock]:
        """As the full engine: a string or content blocks, refusing what it cannot send."""
        return turn_blocks(value, use_responses=self.config.use_responses)
