"""Hook implementations of the `langfuse` plugin, loaded from the ``agentdeck`` entry-point group.

Registers the ``langfuse`` settings section and the ``langfuse`` observer. The registered factory
is :class:`~agentdeck_langfuse.LangfuseObserver`, named by a
:class:`~agentdeck.plugins.deferred.Deferred` so that loading this module imports neither it nor
the Langfuse SDK; its ``from_settings`` is what a deck calls, when ``observers=`` is omitted, to
start one only if both keys are configured.
"""

from __future__ import annotations

import agentdeck
from agentdeck.plugins.deferred import Deferred
from agentdeck.plugins.hookspecs import RegisterNamed, RegisterSettings
from agentdeck.ports import Observer
from agentdeck_langfuse.settings import LangfuseSettings


@agentdeck.hookimpl
def agentdeck_register_settings(register: RegisterSettings) -> None:
    register(LangfuseSettings)


@agentdeck.hookimpl
def agentdeck_register_observers(register: RegisterNamed[Observer]) -> None:
    register(
        "langfuse",
        # The observer and its exporter are imported when a deck first builds its observers.
        Deferred("agentdeck_langfuse.observer:LangfuseObserver"),
        description="each run as one Langfuse trace (AGENTDECK_LANGFUSE_*)",
    )
