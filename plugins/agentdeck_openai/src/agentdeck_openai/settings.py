"""Settings sections of the OpenAI engine plugin: the endpoint, the runner, conversation memory.

Read through the deck's :class:`agentdeck.Settings` (environment, then ``config.yaml`` section,
then these defaults), so two decks in one process can talk to different endpoints.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from agentdeck.settings import SettingsSection

__all__ = ["OpenAISettings", "RunnerSettings", "SessionSettings"]


class OpenAISettings(SettingsSection):
    """The OpenAI-compatible endpoint agents are sent to."""

    section: ClassVar[str] = "openai"
    model_config = SettingsConfigDict(env_prefix="OPENAI_")

    model: str = ""
    """Model for agents that do not name one with `Agent(model=...)`. Unset, the Agents SDK's
    own `OPENAI_DEFAULT_MODEL` is used when that is set; with neither, every agent must name its
    own model and building a deck with one that does not is refused."""

    api_key: str = ""
    """API key sent to the endpoint. Empty leaves the OpenAI client to its own lookup."""

    base_url: str = ""
    """Base URL of an OpenAI-compatible endpoint (e.g. the loopback test server). Empty uses the
    client's default."""

    ca_bundle: str = ""
    """Path to a CA bundle for verifying the endpoint's TLS certificate. Empty uses the system
    trust store."""

    use_responses: bool = True
    """Send model calls through the Responses API (true) or Chat Completions (false). Audio
    input needs Chat Completions."""


class RunnerSettings(SettingsSection):
    """Defaults for the Agents SDK runner that executes every agent turn."""

    section: ClassVar[str] = "runner"
    model_config = SettingsConfigDict(env_prefix="AGENTDECK_RUNNER_")

    workflow_name: str = "agentdeck"
    """Name recorded on the SDK run (its `workflow_name`), identifying AgentDeck in SDK traces."""

    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature. Unset leaves the model's own default."""

    max_turns: int = Field(default=30, gt=0)
    """Most model turns one agent run may take before it fails."""

    max_tokens: int | None = Field(default=None, gt=0)
    """Cap on tokens per model response. Unset means the model's own limit."""

    sdk_tracing: bool = False
    """Let the Agents SDK export its own traces. Off by default: AgentDeck traces runs from its
    event log, and nothing should try to reach a tracing backend unasked."""

    handoff_ends_on_user_turn: bool = False
    """After a handoff, append a synthetic user turn so the new agent's request ends on a user
    message. Some OpenAI-compatible endpoints require it; it changes what every model sees on
    every handoff, so it is off by default."""

    handoff_closing_turn: str = "Please continue."
    """Text of that synthetic user turn; set it in your conversations' own language."""

    deltas: Literal["when-asked", "always"] = "when-asked"
    """When runs stream token by token. `when-asked`: runs that want `text.delta` and
    `thought.delta` events (`deck.stream`, run handles, the HTTP binding) play on the SDK's
    `Runner.run_streamed`; a `Deck.run`, which returns only the result, plays quietly on
    `Runner.run` instead (the same message, tool, handoff, approval and usage events), and a pause
    or cancel then waits for the next tool dispatch or the final reply. `always`: every run
    streams, e.g. to follow `Deck.run` runs token by token from another process."""


class SessionSettings(SettingsSection):
    """How conversations kept in Redis are stored. *Where* they live is the core's
    `AGENTDECK_SESSION` (`session:` in config.yaml): the deck picks the session plugin by its
    scheme before any plugin section is read."""

    section: ClassVar[str] = "session"
    model_config = SettingsConfigDict(env_prefix="AGENTDECK_SESSION_")

    redis_key_prefix: str = "agents:session"
    """Key prefix of conversations stored in Redis."""

    redis_ttl: int | None = Field(default=None, gt=0)
    """Seconds a Redis-stored conversation lives after its last write. Unset keeps it forever."""
