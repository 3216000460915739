"""A settings section of the plugin's own: a deck's settings read it from the environment."""

from types import ModuleType
from typing import ClassVar

from pydantic_settings import SettingsConfigDict

import agentdeck
from agentdeck.plugins.hookspecs import RegisterSettings
from agentdeck.plugins.host import PluginHost
from agentdeck.settings import Settings, SettingsSection


class GreeterSettings(SettingsSection):
    """How the greeter greets."""

    section: ClassVar[str] = "greeter"  # its key in config.yaml
    model_config = SettingsConfigDict(env_prefix="GREETER_")

    greeting: str = "hello"
    """What the greeter says first (GREETER_GREETING)."""


greeter_plugin = ModuleType("greeter.plugin")


@agentdeck.hookimpl
def agentdeck_register_settings(register: RegisterSettings) -> None:
    register(GreeterSettings)


greeter_plugin.agentdeck_register_settings = agentdeck_register_settings

host = PluginHost.from_plugins(greeter_plugin)
settings = Settings(env={"GREETER_GREETING": "bonjour"}, sections=host.settings_sections())
print(settings.section(GreeterSettings).greeting)  # bonjour
