"""The observers AgentDeck ships, and the ones its plugins provide.

Two deliberately plain ones for local development live in the core:

* :class:`ConsoleObserver` prints one readable line per event,
* :class:`FileObserver` appends one JSON line per event (``FileObserver.read`` reads them back).

Neither takes formatting or rotation options: reach for your own
:class:`~agentdeck.ports.Observer` once you need one.

``LangfuseObserver`` (and its 4.x name ``Langfuse``) and ``OTelObserver`` belong to plugins and
are resolved from the installed plugin when first named; without it, naming one raises
:class:`~agentdeck.errors.PluginNotInstalledError` (an ``ImportError``) saying what to install.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from agentdeck.errors import PluginNotInstalledError

if TYPE_CHECKING:
    from agentdeck.observers.console import ConsoleObserver
    from agentdeck.observers.file import FileObserver
    from agentdeck.ports import Observer

__all__ = [
    "ConsoleObserver",
    "FileObserver",
    "Langfuse",
    "LangfuseObserver",
    "OTelObserver",
    "Observer",
]

# The core's own names resolve on first access too: the plugin host imports this package
# (through agentdeck.observers.plugin) whenever plugins load.
_HOMES = {
    "ConsoleObserver": "agentdeck.observers.console",
    "FileObserver": "agentdeck.observers.file",
    "Observer": "agentdeck.ports",
}

# name -> (plugin package, attribute, distribution that provides it)
_FROM_PLUGINS: dict[str, tuple[str, str, str]] = {
    "LangfuseObserver": ("agentdeck_langfuse", "LangfuseObserver", "agentdeck-langfuse"),
    "Langfuse": ("agentdeck_langfuse", "LangfuseObserver", "agentdeck-langfuse"),
    "OTelObserver": ("agentdeck_otel", "OTelObserver", "agentdeck-otel"),
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value  # resolved once; later lookups skip this function
        return value
    try:
        package, attribute, distribution = _FROM_PLUGINS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    if name == "Langfuse":
        warnings.warn(
            "agentdeck.observers.Langfuse is the 4.x name of LangfuseObserver; "
            "import LangfuseObserver instead",
            DeprecationWarning,
            stacklevel=2,
        )
    try:
        module = importlib.import_module(package)
    except ModuleNotFoundError as missing:
        if missing.name != package:
            raise  # the plugin is installed but broken: its own error says more
        raise PluginNotInstalledError(
            attribute=name, module=__name__, distribution=distribution
        ) from None
    return getattr(module, attribute)
