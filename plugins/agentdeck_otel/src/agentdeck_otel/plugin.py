"""Hook implementations of the `otel` plugin, loaded from the ``agentdeck`` entry-point group.

Registers the ``otel`` settings section (``AGENTDECK_OTEL_*``) and the ``otel`` observer. The
registered factory is :class:`~agentdeck_otel.OTelObserver`, named by a
:class:`~agentdeck.plugins.deferred.Deferred` so that loading this module imports neither it nor
the OpenTelemetry SDK; its ``from_settings`` is what a deck calls, when ``observers=`` is
omitted, to start one only if an endpoint is configured.
"""

from __future__ import annotations

import agentdeck
from agentdeck.plugins.deferred import Deferred
from agentdeck.plugins.hookspecs import RegisterNamed, RegisterSettings
from agentdeck.ports import Observer
from agentdeck_otel.settings import OTelSettings


@agentdeck.hookimpl
def agentdeck_register_settings(register: RegisterSettings) -> None:
    register(OTelSettings)


@agentdeck.hookimpl
def agentdeck_register_observers(register: RegisterNamed[Observer]) -> None:
    register(
        "otel",
        # The observer and the OpenTelemetry SDK are imported when a deck first builds its
        # observers.
        Deferred("agentdeck_otel.observer:OTelObserver"),
        description="run traces and metrics over OTLP/HTTP (AGENTDECK_OTEL_*)",
    )
