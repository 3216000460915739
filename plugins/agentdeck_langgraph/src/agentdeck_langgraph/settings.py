"""Settings sections of the LangGraph plugin: where graph checkpoints live, and when chat-model
tokens are tapped."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator
from pydantic_settings import SettingsConfigDict

from agentdeck.settings import SettingsSection

__all__ = ["CheckpointSettings", "LangGraphSettings"]


class CheckpointSettings(SettingsSection):
    """The LangGraph checkpointer backend, as one scheme-shaped URL."""

    section: ClassVar[str] = "checkpoint"
    model_config = SettingsConfigDict(env_prefix="AGENTDECK_CHECKPOINT_")

    url: str | None = Field(default=None, validation_alias="AGENTDECK_CHECKPOINT")
    """Where graph checkpoints are kept: `memory://`, `sqlite:///path` or `postgresql://dsn`.
    Unset (the default) keeps them with the rest of the deck's state at `AGENTDECK_STATE` (in
    memory for `memory://`, the sibling file `<name>-checkpoints.db` for `sqlite:///<name>.db`,
    the same database for `postgresql://`), so checkpoints and the event log are durable
    together or not at all."""

    @field_validator("url")
    @classmethod
    def _scheme_shaped(cls, value: str | None) -> str | None:
        if value is not None and "://" not in value:
            raise ValueError("is not a scheme-shaped URL (memory://, sqlite:///…, postgresql://…)")
        return value


class LangGraphSettings(SettingsSection):
    """How the LangGraph engine plays graphs."""

    section: ClassVar[str] = "langgraph"
    model_config = SettingsConfigDict(env_prefix="AGENTDECK_LANGGRAPH_")

    deltas: Literal["when-asked", "always"] = "when-asked"
    """When chat-model tokens inside nodes are recorded as `text.delta`/`thought.delta`.
    `when-asked`: for runs that want deltas (`deck.stream`, run handles, the HTTP binding); a
    `Deck.run`, which returns only the result, installs no token tap (the reply is still in the
    node's `node.updated`). `always`: every run taps tokens, e.g. to follow `Deck.run` runs token
    by token from another process."""
