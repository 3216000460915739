"""Where and what the OTLP observer exports, checked where the values enter.

Every check raises :class:`~agentdeck.errors.ConfigError` naming the bad value (never a header's
value: those are usually credentials) and what would be accepted.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from agentdeck.errors import ConfigError
from agentdeck.observing.capture import ContentPolicy

__all__ = ["MAX_HEADERS", "SIGNALS", "ExportConfig", "parse_headers"]

MAX_HEADERS = 8
SIGNALS = ("traces", "metrics")

_MANAGED_HEADERS = frozenset(
    {
        "host",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "user-agent",
        "accept-encoding",
        "expect",
    }
)
_MANAGED_PREFIXES = ("content-", "proxy-")


@dataclass(frozen=True, slots=True)
class ExportConfig:
    """A validated export target: base URL, headers, signals, content policy, service name."""

    endpoint: str
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    signals: frozenset[str] = frozenset(SIGNALS)
    policy: ContentPolicy = field(default_factory=ContentPolicy)
    service_name: str = "agentdeck"

    @classmethod
    def build(
        cls,
        endpoint: str,
        *,
        headers: Mapping[str, str] | None = None,
        signals: Collection[str] = SIGNALS,
        policy: ContentPolicy,
        service_name: str,
    ) -> ExportConfig:
        return cls(
            endpoint=_check_endpoint(endpoint),
            headers=_check_headers(headers or {}),
            signals=_check_signals(signals),
            policy=policy,
            service_name=_check_service_name(service_name),
        )

    def url(self, signal: str) -> str:
        """The full URL of one signal's endpoint (``<base>/v1/traces``)."""
        return f"{self.endpoint}/v1/{signal}"


def parse_headers(text: str) -> dict[str, str]:
    """``name=value,name2=value2`` (values URL-encoded, as ``OTEL_EXPORTER_OTLP_HEADERS``)."""
    headers: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(
                f"header entry {name.strip()[:40]!r} has no '='; write headers as "
                "name=value pairs separated by commas",
                setting="AGENTDECK_OTEL_HEADERS",
            )
        headers[name.strip()] = unquote(value.strip())
    return headers


def _check_endpoint(endpoint: str) -> str:
    if not isinstance(endpoint, str) or not endpoint.strip():
        raise ConfigError(
            "OTelObserver needs an endpoint: the base URL of an OTLP/HTTP receiver, such as "
            "http://127.0.0.1:4318 (a local collector or Datadog agent) or "
            "https://cloud.langfuse.com/api/public/otel",
            setting="endpoint",
        )
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"OTLP endpoint {endpoint!r} is not an http(s) URL with a host; use e.g. "
            "https://collector.example.com or http://127.0.0.1:4318",
            setting="endpoint",
        )
    if parts.scheme == "http" and not _is_loopback(parts.hostname):
        raise ConfigError(
            f"OTLP endpoint {endpoint!r} is plain http to a host that is not loopback; telemetry "
            "carries credentials and may carry content, so use https (or a collector on "
            "127.0.0.1)",
            setting="endpoint",
        )
    if parts.query or parts.fragment:
        raise ConfigError(
            f"OTLP endpoint {endpoint!r} has a query or fragment; give the base URL only "
            "(/v1/traces and /v1/metrics are appended)",
            setting="endpoint",
        )
    base = endpoint.strip().rstrip("/")
    for signal in SIGNALS:
        if base.endswith(f"/v1/{signal}"):
            base = base[: -len(f"/v1/{signal}")]
    return base


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_headers(headers: Mapping[str, str]) -> dict[str, str]:
    if len(headers) > MAX_HEADERS:
        raise ConfigError(
            f"{len(headers)} export headers given; at most {MAX_HEADERS} are accepted",
            setting="headers",
        )
    checked: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise ConfigError("export header names and values must be strings", setting="headers")
        lowered = name.strip().lower()
        if not lowered or any(c in lowered for c in " \t\r\n:"):
            raise ConfigError(f"{name!r} is not a valid header name", setting="headers")
        if lowered in _MANAGED_HEADERS or lowered.startswith(_MANAGED_PREFIXES):
            raise ConfigError(
                f"header {name!r} is managed by the exporter and cannot be set; set "
                "authentication headers such as Authorization or x-api-key instead",
                setting="headers",
            )
        if any(c in value for c in "\r\n"):
            raise ConfigError(
                f"the value of header {name!r} contains a line break", setting="headers"
            )
        checked[name.strip()] = value
    return checked


def _check_signals(signals: Collection[str]) -> frozenset[str]:
    if isinstance(signals, str):
        signals = signals.split(",")
    chosen = frozenset(s.strip() for s in signals if s.strip())
    unknown = sorted(chosen - set(SIGNALS))
    if unknown or not chosen:
        raise ConfigError(
            f"unknown export signal(s) {unknown}; choose from {', '.join(SIGNALS)}"
            if unknown
            else f"no export signal chosen; choose from {', '.join(SIGNALS)}",
            setting="signals",
            accepted=SIGNALS,
        )
    return chosen


def _check_service_name(service_name: str) -> str:
    if not isinstance(service_name, str) or not service_name.strip():
        raise ConfigError("service_name must be a non-empty string", setting="service_name")
    return service_name.strip()
