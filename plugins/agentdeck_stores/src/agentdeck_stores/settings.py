"""Settings section of the stores plugin (`stores:` in `config.yaml`, `AGENTDECK_STORES_*`)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from agentdeck.settings import Settings, SettingsSection

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "StoresSettings", "connect_timeout"]

DEFAULT_CONNECT_TIMEOUT = 5.0


class StoresSettings(SettingsSection):
    """How the PostgreSQL and Redis stores wait for their server."""

    section: ClassVar[str] = "stores"
    model_config = SettingsConfigDict(env_prefix="AGENTDECK_STORES_")

    connect_timeout_seconds: float = Field(default=DEFAULT_CONNECT_TIMEOUT, gt=0, le=300)
    """Seconds a PostgreSQL or Redis call waits to connect to its server, or for a free pooled
    connection, before it fails with a retryable `StoreError` naming the backend. During an
    outage every call fails within this bound instead of hanging; one warning is logged when
    the server becomes unreachable and one line when it is back. Must be greater than 0 and at
    most 300."""


def connect_timeout(settings: Settings | None) -> float:
    """The configured timeout from a deck's settings (the default without any)."""
    if settings is None:
        return DEFAULT_CONNECT_TIMEOUT
    return float(settings.section(StoresSettings).connect_timeout_seconds)
