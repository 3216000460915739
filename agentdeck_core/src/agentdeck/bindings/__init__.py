"""Bindings: the external protocols a deck is served over.

``Terminal`` (a chat on a terminal) lives in the core; ``Native`` (AgentDeck's own HTTP/SSE
protocol) belongs to the ``agentdeck-http`` plugin and is resolved from it when first named —
without the plugin, naming it raises :class:`~agentdeck.errors.PluginNotInstalledError` saying
what to install.
"""

from __future__ import annotations

import importlib
from typing import Any

from agentdeck.errors import PluginNotInstalledError

__all__ = ["Native", "Terminal"]

# name -> (module, attribute, distribution that provides it)
_PROVIDERS: dict[str, tuple[str, str, str]] = {
    "Terminal": ("agentdeck.bindings.terminal", "Terminal", "agentdeck-core"),
    "Native": ("agentdeck_http", "Native", "agentdeck-http"),
}


def __getattr__(name: str) -> Any:
    provider = _PROVIDERS.get(name)
    if provider is None:
        raise AttributeError(f"module 'agentdeck.bindings' has no attribute {name!r}")
    module_name, attribute, distribution = provider
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as missing:
        if missing.name is not None and module_name.startswith(missing.name):
            raise PluginNotInstalledError(
                attribute=name, module="agentdeck.bindings", distribution=distribution
            ) from None
        raise
    return getattr(module, attribute)
