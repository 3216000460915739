"""Settings section of the Langfuse plugin: one place for the endpoint and trace attributes."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from agentdeck.observing.capture import DEFAULT_MAX_BYTES, MAX_MAX_BYTES
from agentdeck.settings import SettingsSection

__all__ = ["LangfuseSettings"]


class LangfuseSettings(SettingsSection):
    """Langfuse export configuration."""

    section: ClassVar[str] = "langfuse"
    model_config = SettingsConfigDict(env_prefix="AGENTDECK_LANGFUSE_")

    public_key: str = ""
    """Langfuse public key. The settings-configured observer starts only when both keys are
    set; naming `LangfuseObserver()` without them is refused when the deck opens."""

    secret_key: str = ""
    """Langfuse secret key (see `public_key`)."""

    base_url: str = "http://localhost:3000"
    """Langfuse endpoint."""

    environment: str = "local"
    """Langfuse environment attached to every exported trace."""

    debug: bool = False
    """Turn on the Langfuse SDK's own debug logging."""

    sample_rate: float = Field(default=1.0, ge=0.0, le=1.0)
    """Fraction of runs exported, from 0.0 to 1.0. A run is kept or dropped whole, by its trace
    id, so every process agrees on it."""

    service_name: str = "agentdeck"
    """OpenTelemetry `service.name` of every exported span."""

    capture: Literal["off", "metadata", "full"] = "full"
    """What content traces carry: `full` (the default here, since a Langfuse project is where
    you read conversations) sends inputs, outputs, tool arguments and results, masked for
    credentials and cut to `max_bytes`; `metadata` sends names and timings but no text;
    `off` sends timings, outcomes, token counts and hashed ids only."""

    max_bytes: int = Field(default=DEFAULT_MAX_BYTES, ge=64, le=MAX_MAX_BYTES)
    """Cap, in bytes, on each captured input or output under `capture: full`."""
