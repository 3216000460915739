"""AgentDeck observer that exports run traces and metrics over OTLP/HTTP.

Installed, this distribution (agentdeck-otel) provides :class:`OTelObserver`, also reachable as
``agentdeck.observers.OTelObserver``, and the ``otel`` settings section (``AGENTDECK_OTEL_*``).
A deck given no ``observers=`` starts one by itself when ``AGENTDECK_OTEL_ENDPOINT`` (or the
standard ``OTEL_EXPORTER_OTLP_ENDPOINT``) is set; see :mod:`agentdeck_otel.environment`.

AgentDeck finds it through the ``agentdeck`` entry-point group; nothing needs importing by hand.
The OpenTelemetry SDK is imported only when an observer starts.
"""

from __future__ import annotations

from agentdeck_otel.observer import OTelObserver
from agentdeck_otel.settings import OTelSettings

__version__ = "0.1.0"

__all__ = ["OTelObserver", "OTelSettings", "__version__"]
