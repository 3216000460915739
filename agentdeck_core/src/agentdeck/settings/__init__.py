"""Layered settings: an environment variable wins over ``config.yaml``, which wins over defaults.

Settings belong to a deck, never to the process: a :class:`Settings` object holds the
environment mapping it was loaded from and the parsed ``config.yaml``, so two decks in one
process can point at different stores, and a test passes a plain ``dict`` instead of patching
``os.environ``. Each group of settings is a :class:`SettingsSection` (a pydantic-settings
``BaseSettings``) with a ``config.yaml`` key and an env-var prefix; the core owns
:class:`CoreSettings` and :class:`RuntimeSettings`, and each plugin registers its own sections
through the ``agentdeck_register_settings`` hook.

For every setting, the first of these that has a value is used:

1. a keyword passed in code (``Settings(overrides={"runtime": {...}})``),
2. the environment variable (``AGENTDECK_RUNTIME_LEASE_TTL_SECONDS``); an empty value counts as
   unset,
3. the key in the section's block of ``config.yaml`` (``runtime: {lease_ttl_seconds: 30}``),
4. the default.

A bad value is a :class:`~agentdeck.errors.ConfigError` raised when the section is loaded, whose
``setting`` is the environment variable's name and whose message says where the value came
from, what is wrong with it and what would be accepted.

Defaults that don't trap
------------------------
With nothing configured, every piece of state (the event log, control requests, leases) lives in
memory, in one consistent place: nothing claims to be durable while it isn't, and no part of the
state outlives another across a restart. One variable, ``AGENTDECK_STATE``, moves all of it
(``AGENTDECK_STATE=sqlite:///var/lib/agentdeck/state.db``); ``AGENTDECK_EVENTS`` and
``AGENTDECK_CONTROL`` exist only to split one part off on purpose.

One import path
---------------
``from agentdeck.settings import Settings, SettingsSection, ...`` is the one documented import
path for everything here, in the core, in plugins and in users' code: this package re-exports
the public names of its modules, which split the job in layers —
:mod:`~agentdeck.settings.section` (a section, and loading one from the layers),
:mod:`~agentdeck.settings.core` (the core's own sections), :mod:`~agentdeck.settings.config_file`
(finding and reading ``config.yaml``), :mod:`~agentdeck.settings.container` (the
:class:`Settings` of one deck) and :mod:`~agentdeck.settings.reference` (describing sections for
the generated settings reference). The core's sections report this package as their module, so
the reference page and error messages name them by that path.
"""

from __future__ import annotations

from agentdeck.settings.config_file import CONFIG_ENV_VAR, DEFAULT_CONFIG_FILE
from agentdeck.settings.container import Settings
from agentdeck.settings.core import CORE_SECTIONS, CoreSettings, RuntimeSettings
from agentdeck.settings.reference import (
    SectionDoc,
    SettingRow,
    describe_sections,
    field_description,
)
from agentdeck.settings.section import SettingsSection

__all__ = [
    "CONFIG_ENV_VAR",
    "CORE_SECTIONS",
    "DEFAULT_CONFIG_FILE",
    "CoreSettings",
    "RuntimeSettings",
    "SectionDoc",
    "SettingRow",
    "Settings",
    "SettingsSection",
    "describe_sections",
    "field_description",
]

# Named by the documented path, not the module that happens to define them (see above).
CoreSettings.__module__ = RuntimeSettings.__module__ = __name__
