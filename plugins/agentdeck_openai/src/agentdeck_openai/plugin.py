"""Hook implementations of the `openai` plugin, loaded from the ``agentdeck`` entry-point group.

So far the plugin registers its settings sections; the engine, the session factory and the
loopback model server land with the engine's issue.
"""

from __future__ import annotations

from collections.abc import Callable

import agentdeck
from agentdeck.settings import SettingsSection
from agentdeck_openai.settings import OpenAISettings, RunnerSettings, SessionSettings


@agentdeck.hookimpl
def agentdeck_register_settings(register: Callable[[type[SettingsSection]], None]) -> None:
    register(OpenAISettings)
    register(RunnerSettings)
    register(SessionSettings)
