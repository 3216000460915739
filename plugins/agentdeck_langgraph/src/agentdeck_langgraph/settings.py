"""Settings section of the LangGraph plugin: where graph checkpoints live."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, field_validator
from pydantic_settings import SettingsConfigDict

from agentdeck.settings import SettingsSection

__all__ = ["CheckpointSettings"]


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
