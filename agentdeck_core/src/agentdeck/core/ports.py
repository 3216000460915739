"""The 4.x observer port name (``from agentdeck.core.ports import EventSinkPort``).

Deprecated: subclass :class:`agentdeck.Observer` (``from agentdeck import Observer``).
``EventSinkPort`` is that same class. Importing this module emits a :class:`DeprecationWarning`
that names the 5.x import and points at the importing line.
"""

from __future__ import annotations

import warnings

from agentdeck.ports import Observer

warnings.warn(
    "agentdeck.core.ports is the 4.x import location of EventSinkPort; it is deprecated: "
    "use `from agentdeck import Observer` (EventSinkPort is that class)",
    DeprecationWarning,
    stacklevel=2,  # the warnings machinery skips the import system's frames: the importer's line
)

EventSinkPort = Observer

__all__ = ["EventSinkPort"]
