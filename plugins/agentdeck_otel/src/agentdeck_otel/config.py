"""Where and what the OTLP observer exports, checked where the values enter.

An :class:`ExportConfig` holds one URL and one set of headers per signal (a base endpoint with
``/v1/traces`` and ``/v1/metrics`` appended, or a signal's own full URL, as
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` gives one), the content policy, and the resource the
telemetry is attributed to.

Plain ``http://`` is accepted only where telemetry cannot cross an untrusted network by
accident: loopback (``localhost``, ``127.0.0.0/8``, ``::1``), cluster-local names (``*.svc``,
``*.svc.cluster.local``, ``*.local``) and single-label hostnames such as ``otel-collector`` (a
Kubernetes service or Compose container in the same namespace) -- or anywhere when the caller
says so (``insecure=True``, ``AGENTDECK_OTEL_INSECURE``, ``OTEL_EXPORTER_OTLP_INSECURE``).

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

__all__ = [
    "MAX_HEADERS",
    "SIGNALS",
    "ExportConfig",
    "is_private_host",
    "parse_headers",
    "parse_resource_attributes",
]

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
_CLUSTER_SUFFIXES = (".svc", ".svc.cluster.local", ".local", ".localhost")


@dataclass(frozen=True, slots=True)
class ExportConfig:
    """A validated export target: one URL and header set per signal, the content policy and
    the resource attributes (``service.name`` among them)."""

    urls: Mapping[str, str]
    """Signal -> the full URL its exports are posted to; only the signals exported."""
    headers: Mapping[str, Mapping[str, str]] = field(default_factory=dict, repr=False)
    """Signal -> the headers sent with its exports."""
    policy: ContentPolicy = field(default_factory=ContentPolicy)
    service_name: str = "agentdeck"
    resource_attributes: Mapping[str, str] = field(default_factory=dict)
    """Further resource attributes (``deployment.environment.name=prod``...)."""

    @classmethod
    def build(
        cls,
        endpoint: str | None,
        *,
        headers: Mapping[str, str] | None = None,
        signals: Collection[str] = SIGNALS,
        policy: ContentPolicy,
        service_name: str,
        insecure: bool = False,
        signal_endpoints: Mapping[str, str] | None = None,
        signal_headers: Mapping[str, Mapping[str, str]] | None = None,
        resource_attributes: Mapping[str, str] | None = None,
    ) -> ExportConfig:
        """Check everything and resolve each chosen signal's URL and headers.

        ``signal_endpoints`` are full URLs used as they are (``<base>/v1/<signal>`` is what
        ``endpoint`` gives); ``signal_headers`` replace ``headers`` for their signal.
        """
        chosen = _check_signals(signals)
        own = dict(signal_endpoints or {})
        unknown = sorted(set(own) - set(SIGNALS))
        if unknown:
            raise ConfigError(
                f"no such export signal {unknown}; choose from {', '.join(SIGNALS)}",
                setting="signals",
                accepted=SIGNALS,
            )
        base = (
            _check_endpoint(endpoint, insecure=insecure, setting="endpoint", base=True)
            if endpoint is not None and (endpoint.strip() or not own)
            else None
        )
        urls: dict[str, str] = {}
        for signal in SIGNALS:
            if signal not in chosen:
                continue
            if signal in own:
                urls[signal] = _check_endpoint(
                    own[signal], insecure=insecure, setting=f"{signal}_endpoint", base=False
                )
            elif base is not None:
                urls[signal] = f"{base}/v1/{signal}"
        if not urls:
            raise ConfigError(
                "OTelObserver needs an endpoint: the base URL of an OTLP/HTTP receiver, such as "
                "http://127.0.0.1:4318 (a local collector or Datadog agent) or "
                "https://cloud.langfuse.com/api/public/otel, or a full URL per signal",
                setting="endpoint",
            )
        general = _check_headers(headers or {})
        per_signal = dict(signal_headers or {})
        return cls(
            urls=urls,
            headers={
                signal: _check_headers(per_signal[signal]) if signal in per_signal else general
                for signal in urls
            },
            policy=policy,
            service_name=_check_service_name(service_name),
            resource_attributes=_check_resource_attributes(resource_attributes or {}),
        )

    @property
    def signals(self) -> frozenset[str]:
        """The signals exported."""
        return frozenset(self.urls)

    @property
    def endpoint(self) -> str:
        """The base URL the signals share, or the first signal's URL when they do not."""
        bases = {url.removesuffix(f"/v1/{signal}") for signal, url in self.urls.items()}
        if len(bases) == 1 and all(url.endswith(f"/v1/{s}") for s, url in self.urls.items()):
            return next(iter(bases))
        return next(iter(self.urls.values()))

    def url(self, signal: str) -> str:
        """The full URL of one signal's endpoint (``<base>/v1/traces``)."""
        return self.urls[signal]

    def headers_for(self, signal: str) -> dict[str, str]:
        """The headers one signal's exports carry."""
        return dict(self.headers.get(signal, {}))


def parse_headers(text: str, *, setting: str = "AGENTDECK_OTEL_HEADERS") -> dict[str, str]:
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
                setting=setting,
            )
        headers[name.strip()] = unquote(value.strip())
    return headers


def parse_resource_attributes(
    text: str, *, setting: str = "OTEL_RESOURCE_ATTRIBUTES"
) -> dict[str, str]:
    """``key=value,key2=value2`` (values URL-encoded), as ``OTEL_RESOURCE_ATTRIBUTES``."""
    attributes: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"resource attribute entry {item.strip()[:60]!r} is not key=value; write "
                "resource attributes as key=value pairs separated by commas",
                setting=setting,
            )
        attributes[key.strip()] = unquote(value.strip())
    return attributes


def is_private_host(host: str) -> bool:
    """Whether plain http to ``host`` stays on this machine or inside a cluster: loopback
    addresses, ``localhost``, ``*.svc``, ``*.svc.cluster.local``, ``*.local`` and single-label
    hostnames (``otel-collector``)."""
    name = host.strip().rstrip(".").lower()
    if not name:
        return False
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        pass
    if name == "localhost" or name.endswith(_CLUSTER_SUFFIXES):
        return True
    return "." not in name


def _check_endpoint(endpoint: str, *, insecure: bool, setting: str, base: bool) -> str:
    if not isinstance(endpoint, str) or not endpoint.strip():
        raise ConfigError(
            "OTelObserver needs an endpoint: the base URL of an OTLP/HTTP receiver, such as "
            "http://127.0.0.1:4318 (a local collector or Datadog agent) or "
            "https://cloud.langfuse.com/api/public/otel",
            setting=setting,
        )
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"OTLP endpoint {endpoint!r} is not an http(s) URL with a host; use e.g. "
            "https://collector.example.com or http://127.0.0.1:4318",
            setting=setting,
        )
    if parts.scheme == "http" and not insecure and not is_private_host(parts.hostname):
        raise ConfigError(
            f"OTLP endpoint {endpoint!r} is plain http to {parts.hostname!r}, which is neither "
            "loopback nor a cluster-local name (*.svc, *.svc.cluster.local, *.local, or a "
            "single-label host such as otel-collector); telemetry carries credentials and may "
            "carry content, so use https -- or, if the network in between is yours, allow it "
            "with AGENTDECK_OTEL_INSECURE=true (or OTEL_EXPORTER_OTLP_INSECURE=true, or "
            "OTelObserver(..., insecure=True))",
            setting=setting,
        )
    if parts.query or parts.fragment:
        raise ConfigError(
            f"OTLP endpoint {endpoint!r} has a query or fragment; give the URL without one",
            setting=setting,
        )
    url = endpoint.strip().rstrip("/")
    if base:  # a signal path given by mistake on a base URL is taken off
        for signal in SIGNALS:
            url = url.removesuffix(f"/v1/{signal}")
    return url


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


def _check_resource_attributes(attributes: Mapping[str, str]) -> dict[str, str]:
    checked: dict[str, str] = {}
    for key, value in attributes.items():
        if not isinstance(key, str) or not key.strip() or not isinstance(value, str):
            raise ConfigError(
                "resource attributes are non-empty string keys with string values",
                setting="resource_attributes",
            )
        checked[key.strip()] = value
    return checked
