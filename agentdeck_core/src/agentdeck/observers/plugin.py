"""The core's plain observers, registered through the same hook as any plugin's.

``agentdeck plugins`` lists them, and a name in settings or on the command line (``console``,
``file``) builds them.
"""

from __future__ import annotations

from agentdeck.plugins.deferred import Deferred
from agentdeck.plugins.hookspecs import RegisterNamed, hookimpl
from agentdeck.ports import Observer


@hookimpl
def agentdeck_register_observers(register: RegisterNamed[Observer]) -> None:
    register(
        "console",
        Deferred("agentdeck.observers.console:ConsoleObserver"),
        description="one readable line per event",
    )
    register(
        "file",
        Deferred("agentdeck.observers.file:FileObserver"),
        description="one JSON line per event, appended to a file",
    )
