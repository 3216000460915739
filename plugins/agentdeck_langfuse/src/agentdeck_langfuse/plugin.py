"""Hook implementations of the `langfuse` plugin, loaded from the ``agentdeck`` entry-point group.

So far the plugin registers its settings section; the observer lands with the observers' issue.
"""

from __future__ import annotations

from collections.abc import Callable

import agentdeck
from agentdeck.settings import SettingsSection
from agentdeck_langfuse.settings import LangfuseSettings


@agentdeck.hookimpl
def agentdeck_register_settings(register: Callable[[type[SettingsSection]], None]) -> None:
    register(LangfuseSettings)
