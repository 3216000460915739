"""Settings section of the OpenTelemetry plugin (``AGENTDECK_OTEL_*``)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from agentdeck.observing.capture import DEFAULT_MAX_BYTES, MAX_MAX_BYTES
from agentdeck.settings import SettingsSection

__all__ = ["OTelSettings"]


class OTelSettings(SettingsSection):
    """OTLP/HTTP export of run traces and metrics."""

    section: ClassVar[str] = "otel"
    model_config = SettingsConfigDict(env_prefix="AGENTDECK_OTEL_")

    endpoint: str = ""
    """Base URL of an OTLP/HTTP receiver; `/v1/traces` and `/v1/metrics` are appended (a base
    path such as Langfuse's `https://cloud.langfuse.com/api/public/otel` or Grafana's `/otlp`
    is kept). HTTPS unless the host is loopback. A deck given no `observers=` starts the OTLP
    observer by itself when this is set; empty (the default) exports nothing."""

    headers: SecretStr = SecretStr("")
    """Headers sent with every export, as `name=value` pairs separated by commas (values
    URL-encoded), e.g. `Authorization=Basic%20cGs6c2s=`. At most 8; `host`, `content-*`,
    `proxy-*` and other headers the exporter manages are refused. Treated as a secret: never
    printed."""

    signals: str = "traces,metrics"
    """Which signals to export, comma-separated: `traces`, `metrics` or both. Langfuse ingests
    traces only."""

    capture: Literal["off", "metadata", "full"] = "off"
    """What content spans carry: `off` (timings, outcomes, token counts and hashed ids only),
    `metadata` (adds agent, model and tool names and the session hash), or `full` (adds
    prompts, completions, tool arguments and results, masked for credentials and cut to
    `max_bytes`)."""

    max_bytes: int = Field(default=DEFAULT_MAX_BYTES, ge=64, le=MAX_MAX_BYTES)
    """Cap, in bytes, on each captured value under `capture: full`."""

    service_name: str = "agentdeck"
    """OpenTelemetry resource `service.name` of everything exported."""
