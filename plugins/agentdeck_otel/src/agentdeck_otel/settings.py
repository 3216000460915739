"""Settings section of the OpenTelemetry plugin (``AGENTDECK_OTEL_*``).

Each setting left unset defaults to its standard ``OTEL_*`` counterpart when that is set (see
:mod:`agentdeck_otel.environment`): an application already configured for OpenTelemetry needs
nothing AgentDeck-specific.
"""

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
    is kept). Plain `http://` only to loopback and cluster-local hosts (`localhost`,
    `127.0.0.0/8`, `::1`, `*.svc`, `*.svc.cluster.local`, `*.local`, single-label names such as
    `otel-collector`) unless `insecure` is set. A deck given no `observers=` starts the OTLP
    observer by itself when this is set. Unset: `OTEL_EXPORTER_OTLP_ENDPOINT` (or the
    per-signal `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `_METRICS_ENDPOINT`, full URLs); with
    neither, nothing is exported."""

    headers: SecretStr = SecretStr("")
    """Headers sent with every export, as `name=value` pairs separated by commas (values
    URL-encoded), e.g. `Authorization=Basic%20cGs6c2s=`. At most 8; `host`, `content-*`,
    `proxy-*` and other headers the exporter manages are refused. Treated as a secret: never
    printed. Unset: `OTEL_EXPORTER_OTLP_HEADERS` (or `OTEL_EXPORTER_OTLP_TRACES_HEADERS` /
    `_METRICS_HEADERS` for one signal)."""

    signals: str = "traces,metrics"
    """Which signals to export, comma-separated: `traces`, `metrics` or both. Langfuse ingests
    traces only. Unset with standard endpoints: the signals that have one, less those whose
    `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` is `none`, and less those whose
    `OTEL_EXPORTER_OTLP[_TRACES|_METRICS]_PROTOCOL` is not `http/protobuf` (the only protocol
    spoken; `grpc` is not, and the deck logs that it left the signal out)."""

    insecure: bool = False
    """Allow plain `http://` to any host, not only loopback and cluster-local ones. Unset:
    `OTEL_EXPORTER_OTLP_INSECURE`."""

    capture: Literal["off", "metadata", "full"] = "off"
    """What content spans carry: `off` (timings, outcomes, token counts and hashed ids only),
    `metadata` (adds agent, model and tool names and the session hash), or `full` (adds
    prompts, completions, tool arguments and results, masked for credentials and cut to
    `max_bytes`)."""

    max_bytes: int = Field(default=DEFAULT_MAX_BYTES, ge=64, le=MAX_MAX_BYTES)
    """Cap, in bytes, on each captured value under `capture: full`."""

    service_name: str = "agentdeck"
    """OpenTelemetry resource `service.name` of everything exported. Unset: `OTEL_SERVICE_NAME`,
    else the `service.name` in `OTEL_RESOURCE_ATTRIBUTES`, else `agentdeck`. The resource's other
    attributes come from `OTEL_RESOURCE_ATTRIBUTES`."""
