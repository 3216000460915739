"""The 4.x observer port name (``from agentdeck.core.ports import EventSinkPort``).

Deprecated: subclass :class:`agentdeck.Observer`. ``EventSinkPort`` is that same class.
"""

from __future__ import annotations

from agentdeck.ports import Observer

EventSinkPort = Observer

__all__ = ["EventSinkPort"]
