"""Settings section of the Langfuse plugin: one place for the endpoint and trace attributes.

Each setting left unset defaults to the variable the Langfuse SDK itself reads, when that is set
(:func:`with_standard_defaults`): an application already configured for Langfuse needs nothing
AgentDeck-specific, and AgentDeck's own settings -- environment or the ``langfuse:`` section of
``config.yaml`` -- win wherever they are set.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field, ValidationError
from pydantic_settings import SettingsConfigDict

from agentdeck.errors import ConfigError
from agentdeck.observing.capture import DEFAULT_MAX_BYTES, MAX_MAX_BYTES
from agentdeck.settings import SettingsSection

__all__ = ["STANDARD_VARIABLES", "LangfuseSettings", "standard_source", "with_standard_defaults"]


class LangfuseSettings(SettingsSection):
    """Langfuse export configuration."""

    section: ClassVar[str] = "langfuse"
    model_config = SettingsConfigDict(env_prefix="AGENTDECK_LANGFUSE_")

    public_key: str = ""
    """Langfuse public key. The settings-configured observer starts only when both keys are
    set; naming `LangfuseObserver()` without them is refused when the deck opens. Unset:
    `LANGFUSE_PUBLIC_KEY`."""

    secret_key: str = ""
    """Langfuse secret key (see `public_key`). Unset: `LANGFUSE_SECRET_KEY`."""

    base_url: str = "http://localhost:3000"
    """Langfuse endpoint. Unset: `LANGFUSE_BASE_URL`, else the SDK's older `LANGFUSE_HOST`."""

    environment: str = "local"
    """Langfuse environment attached to every exported trace. Unset:
    `LANGFUSE_TRACING_ENVIRONMENT`."""

    debug: bool = False
    """Turn on the Langfuse SDK's own debug logging. Unset: `LANGFUSE_DEBUG`."""

    sample_rate: float = Field(default=1.0, ge=0.0, le=1.0)
    """Fraction of runs exported, from 0.0 to 1.0. A run is kept or dropped whole, by its trace
    id, so every process agrees on it. Unset: `LANGFUSE_SAMPLE_RATE`."""

    service_name: str = "agentdeck"
    """OpenTelemetry `service.name` of every exported span."""

    capture: Literal["off", "metadata", "full"] = "full"
    """What content traces carry: `full` (the default here, since a Langfuse project is where
    you read conversations) sends inputs, outputs, tool arguments and results, masked for
    credentials and cut to `max_bytes`; `metadata` sends names and timings but no text;
    `off` sends timings, outcomes, token counts and hashed ids only."""

    max_bytes: int = Field(default=DEFAULT_MAX_BYTES, ge=64, le=MAX_MAX_BYTES)
    """Cap, in bytes, on each captured input or output under `capture: full`."""


STANDARD_VARIABLES: Mapping[str, tuple[str, ...]] = {
    "public_key": ("LANGFUSE_PUBLIC_KEY",),
    "secret_key": ("LANGFUSE_SECRET_KEY",),
    "base_url": ("LANGFUSE_BASE_URL", "LANGFUSE_HOST"),
    "environment": ("LANGFUSE_TRACING_ENVIRONMENT",),
    "sample_rate": ("LANGFUSE_SAMPLE_RATE",),
    "debug": ("LANGFUSE_DEBUG",),
}
"""Field -> the variables the Langfuse SDK (5.x) reads for it, first found wins."""


def standard_source(field_name: str, env: Mapping[str, str]) -> str | None:
    """The standard variable ``field_name``'s value would come from (``None``: none is set)."""
    for variable in STANDARD_VARIABLES.get(field_name, ()):
        if env.get(variable, "").strip():
            return variable
    return None


def with_standard_defaults(section: LangfuseSettings, env: Mapping[str, str]) -> LangfuseSettings:
    """``section`` with every field it leaves unset taken from the standard variable the
    Langfuse SDK reads for it, when that is set in ``env``.

    :raises ConfigError: for a bad standard value, naming its variable.
    """
    taken: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for name in STANDARD_VARIABLES:
        if name in section.model_fields_set:
            continue
        variable = standard_source(name, env)
        if variable is not None:
            taken[name] = env[variable].strip()
            origins[name] = variable
    if not taken:
        return section
    merged = {**section.model_dump(include=section.model_fields_set), **taken}
    try:
        return LangfuseSettings.model_validate(merged)
    except ValidationError as error:
        field = str(error.errors()[0]["loc"][0]) if error.errors()[0]["loc"] else ""
        variable = origins.get(field, LangfuseSettings.env_var(field) if field else "")
        message = str(error.errors()[0]["msg"]).removeprefix("Value error, ")
        raise ConfigError(
            f"{variable} (the Langfuse SDK's own setting, read because "
            f"{LangfuseSettings.env_var(field)} is unset): {message[:1].lower()}{message[1:]}",
            setting=variable,
        ) from None
