"""Hook implementations of the `langgraph` plugin, loaded from the ``agentdeck`` entry-point group.

So far the plugin registers its settings section; the engine and checkpointers land with the
engine's issue.
"""

from __future__ import annotations

from collections.abc import Callable

import agentdeck
from agentdeck.settings import SettingsSection
from agentdeck_langgraph.settings import CheckpointSettings


@agentdeck.hookimpl
def agentdeck_register_settings(register: Callable[[type[SettingsSection]], None]) -> None:
    register(CheckpointSettings)
