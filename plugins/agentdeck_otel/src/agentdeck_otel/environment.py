"""The observer a deck starts by itself: ``AGENTDECK_OTEL_*``, defaulting to the standard
``OTEL_*`` variables.

An application already configured for OpenTelemetry has its exporter in the standard variables;
AgentDeck reads them as the defaults of its own settings, which win whenever they are set
(environment or the ``otel:`` section of ``config.yaml``):

===========================================  ==========================================
AgentDeck's own                              standard default
===========================================  ==========================================
``AGENTDECK_OTEL_ENDPOINT``                  ``OTEL_EXPORTER_OTLP_ENDPOINT`` (base URL), or
                                             ``OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT``
                                             (full URLs; only those signals are exported)
``AGENTDECK_OTEL_HEADERS``                   ``OTEL_EXPORTER_OTLP_HEADERS``, or per signal
                                             ``OTEL_EXPORTER_OTLP_{TRACES,METRICS}_HEADERS``
``AGENTDECK_OTEL_SIGNALS``                   the signals with an endpoint, less those whose
                                             ``OTEL_{TRACES,METRICS}_EXPORTER`` is ``none``
``AGENTDECK_OTEL_SERVICE_NAME``              ``OTEL_SERVICE_NAME``, else ``service.name`` of
                                             ``OTEL_RESOURCE_ATTRIBUTES``
``AGENTDECK_OTEL_INSECURE``                  ``OTEL_EXPORTER_OTLP_INSECURE``
(resource attributes)                        ``OTEL_RESOURCE_ATTRIBUTES``
===========================================  ==========================================

``OTEL_SDK_DISABLED=true`` turns the automatic observer off. The exporter speaks OTLP over HTTP
(``http/protobuf``) only: a signal whose ``OTEL_EXPORTER_OTLP[_SIGNAL]_PROTOCOL`` is ``grpc`` or
``http/json`` is not exported, and the deck says so. When the standard variables are present but
do not add up to an export (headers without an endpoint, every signal on gRPC), the deck logs one
line naming the observer and why it did not start, rather than tracing nothing quietly.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentdeck.settings import Settings
from agentdeck_otel.config import SIGNALS, parse_headers, parse_resource_attributes
from agentdeck_otel.settings import OTelSettings

__all__ = ["Resolution", "resolve"]

log = logging.getLogger("agentdeck.otel")

SUPPORTED_PROTOCOL = "http/protobuf"
_TRUE = frozenset({"true", "1", "yes", "on"})


@dataclass(frozen=True, slots=True)
class Resolution:
    """What the settings ask for: the observer's arguments (``None``: no observer), the
    variable each argument came from (to name it in an error), and one line to log."""

    arguments: dict[str, Any] | None
    origins: Mapping[str, str] = field(default_factory=dict)
    note: str | None = None
    """Why the observer does not start, or what it leaves out; logged once by the deck."""
    note_level: int = logging.WARNING


def resolve(settings: Settings) -> Resolution:
    """The automatic observer ``settings`` describe, if any (see the module docstring)."""
    env = settings.env
    section = settings.section(OTelSettings)
    own = section.model_fields_set

    def standard(name: str) -> str | None:
        value = env.get(name, "").strip()
        return value or None

    origins: dict[str, str] = {
        "capture": OTelSettings.env_var("capture"),
        "max_bytes": OTelSettings.env_var("max_bytes"),
        "signals": OTelSettings.env_var("signals"),
    }
    arguments: dict[str, Any] = {"capture": section.capture, "max_bytes": section.max_bytes}
    notes: list[str] = []

    # ---------------------------------------------------------------- where
    signal_endpoints: dict[str, str] = {}
    if section.endpoint:
        endpoint: str | None = section.endpoint
        origins["endpoint"] = OTelSettings.env_var("endpoint")
        from_standard = False
    else:
        endpoint = standard("OTEL_EXPORTER_OTLP_ENDPOINT")
        origins["endpoint"] = "OTEL_EXPORTER_OTLP_ENDPOINT"
        for signal in SIGNALS:
            variable = f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT"
            value = standard(variable)
            if value is not None:
                signal_endpoints[signal] = value
                origins[f"{signal}_endpoint"] = variable
        from_standard = True
    if endpoint is None and not signal_endpoints:
        present = sorted(
            name
            for name, value in env.items()
            if value.strip() and name.startswith("OTEL_EXPORTER_OTLP_")
        )
        if section.headers.get_secret_value():
            present.insert(0, OTelSettings.env_var("headers"))
        if not present:
            return Resolution(None)
        return Resolution(
            None,
            note=(
                f"OTel observer not started: {', '.join(present)} "
                f"{'is' if len(present) == 1 else 'are'} set but no endpoint is; set "
                "AGENTDECK_OTEL_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT (the base URL of an "
                "OTLP/HTTP receiver, such as http://otel-collector:4318)"
            ),
        )
    if (standard("OTEL_SDK_DISABLED") or "").lower() == "true":
        return Resolution(
            None,
            note="OTel observer not started: OTEL_SDK_DISABLED=true turns OpenTelemetry off",
            note_level=logging.INFO,
        )
    arguments["endpoint"] = endpoint or ""
    if signal_endpoints:
        arguments["signal_endpoints"] = signal_endpoints

    # ---------------------------------------------------------------- which signals
    if "signals" in own:
        signals = [s.strip() for s in section.signals.split(",") if s.strip()]
    elif from_standard and endpoint is None:
        signals = [s for s in SIGNALS if s in signal_endpoints]
    else:
        signals = list(SIGNALS)
    if "signals" not in own:
        signals = [s for s in signals if standard(f"OTEL_{s.upper()}_EXPORTER") != "none"]
    if from_standard:
        for signal in list(signals):
            variable = f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL"
            protocol = standard(variable)
            if protocol is None:
                variable = "OTEL_EXPORTER_OTLP_PROTOCOL"
                protocol = standard(variable)
            if protocol is not None and protocol != SUPPORTED_PROTOCOL:
                signals.remove(signal)
                notes.append(f"{signal} are not exported: {variable}={protocol}")
    if not signals:
        reason = "; ".join(notes) or "every signal is turned off (OTEL_*_EXPORTER=none)"
        return Resolution(
            None,
            note=(
                f"OTel observer not started: {reason}. agentdeck-otel exports OTLP over HTTP "
                f"({SUPPORTED_PROTOCOL}) only: set the protocol to {SUPPORTED_PROTOCOL} and the "
                "endpoint to the collector's OTLP/HTTP port (4318), or set "
                "AGENTDECK_OTEL_ENDPOINT"
                if notes
                else f"OTel observer not started: {reason}"
            ),
        )
    arguments["signals"] = signals
    if from_standard and "signals" not in own:
        origins["signals"] = "OTEL_EXPORTER_OTLP_ENDPOINT"

    # ---------------------------------------------------------------- headers and security
    own_headers = section.headers.get_secret_value()
    if own_headers:
        arguments["headers"] = parse_headers(own_headers)
        origins["headers"] = OTelSettings.env_var("headers")
    else:
        general = standard("OTEL_EXPORTER_OTLP_HEADERS")
        if general is not None:
            arguments["headers"] = parse_headers(general, setting="OTEL_EXPORTER_OTLP_HEADERS")
            origins["headers"] = "OTEL_EXPORTER_OTLP_HEADERS"
        signal_headers: dict[str, dict[str, str]] = {}
        for signal in signals:
            variable = f"OTEL_EXPORTER_OTLP_{signal.upper()}_HEADERS"
            value = standard(variable)
            if value is not None:
                signal_headers[signal] = parse_headers(value, setting=variable)
                origins.setdefault("headers", variable)
        if signal_headers:
            arguments["signal_headers"] = signal_headers
    if "insecure" in own:
        arguments["insecure"] = section.insecure
    else:
        arguments["insecure"] = (standard("OTEL_EXPORTER_OTLP_INSECURE") or "").lower() in _TRUE

    # ---------------------------------------------------------------- whose telemetry
    resource: dict[str, str] = {}
    text = standard("OTEL_RESOURCE_ATTRIBUTES")
    if text is not None:
        resource = parse_resource_attributes(text)
        origins["resource_attributes"] = "OTEL_RESOURCE_ATTRIBUTES"
    from_resource = resource.pop("service.name", None)
    if "service_name" in own:
        arguments["service_name"] = section.service_name
        origins["service_name"] = OTelSettings.env_var("service_name")
    elif standard("OTEL_SERVICE_NAME") is not None:
        arguments["service_name"] = standard("OTEL_SERVICE_NAME")
        origins["service_name"] = "OTEL_SERVICE_NAME"
    elif from_resource:
        arguments["service_name"] = from_resource
        origins["service_name"] = "OTEL_RESOURCE_ATTRIBUTES"
    else:
        arguments["service_name"] = section.service_name
        origins["service_name"] = OTelSettings.env_var("service_name")
    if resource:
        arguments["resource_attributes"] = resource

    note = None
    if notes:
        note = (
            f"OTel observer exports {', '.join(signals)} only: {'; '.join(notes)} "
            f"(agentdeck-otel speaks OTLP over HTTP, {SUPPORTED_PROTOCOL}, only)"
        )
    return Resolution(arguments, origins=origins, note=note)
