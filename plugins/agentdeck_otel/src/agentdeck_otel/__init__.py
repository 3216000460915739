"""AgentDeck observer that exports run traces and metrics over OTLP/HTTP.

Installed, this distribution (agentdeck-otel) provides :class:`OTelObserver`, also reachable as
``agentdeck.observers.OTelObserver``, and the ``otel`` settings section (``AGENTDECK_OTEL_*``).
A deck given no ``observers=`` starts one by itself when ``AGENTDECK_OTEL_ENDPOINT`` (or the
standard ``OTEL_EXPORTER_OTLP_ENDPOINT``) is set; see :mod:`agentdeck_otel.environment`.

AgentDeck finds it through the ``agentdeck`` entry-point group; nothing needs importing by hand.
The OpenTelemetry SDK is imported only when an observer starts.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentdeck_otel.observer import OTelObserver
    from agentdeck_otel.settings import OTelSettings

__version__ = "0.1.0"

# Each public name resolves on first access (module ``__getattr__``): the plugin host imports
# this package whenever plugins load, and that must not import the observer.
_HOMES = {
    "OTelObserver": "agentdeck_otel.observer",
    "OTelSettings": "agentdeck_otel.settings",
}

__all__ = ["OTelObserver", "OTelSettings", "__version__"]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # resolved once; later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
