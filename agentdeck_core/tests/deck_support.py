"""Shared helpers for the Deck tests: a plugin host with the core's backends and the scripted
(model-free) engine, and a deck factory on a manual clock and ``memory://`` state. Loaded by
path (importlib mode)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import agentdeck
from agentdeck import Deck, ManualClock
from agentdeck.memory import plugin as memory_plugin
from agentdeck.plugins.hookspecs import RegisterEngine
from agentdeck.plugins.host import PluginHost
from agentdeck.settings import Settings
from agentdeck.sqlite import plugin as sqlite_plugin
from agentdeck.testing import ScriptedEngine


class ScriptedEnginePlugin:
    @agentdeck.hookimpl
    def agentdeck_register_engines(self, register: RegisterEngine) -> None:
        register(ScriptedEngine)


def host(*extra: object) -> PluginHost:
    """The core's backends (memory, and SQLite for a deck left on the default state) and the
    scripted engine."""
    return PluginHost.from_plugins(
        ("memory", memory_plugin),
        ("sqlite", sqlite_plugin),
        ("scripted", ScriptedEnginePlugin()),
        *extra,
    )


def deck(
    workflows: Iterable[object] = (),
    *,
    clock: ManualClock | None = None,
    env: dict[str, str] | None = None,
    **options: Any,
) -> Deck:
    return Deck(
        workflows=workflows,
        # The memory backends this host offers (tests of the default state file are their own).
        settings=Settings(env={"AGENTDECK_STATE": "memory://", **(env or {})}),
        plugins=options.pop("plugins", None) or host(),
        clock=clock or ManualClock(),
        observers=options.pop("observers", ()),
        **options,
    )
