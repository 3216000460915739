"""Shared helpers for the Deck tests: a plugin host with the memory backends and the scripted
(model-free) engine, and a deck factory on a manual clock. Loaded by path (importlib mode)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import agentdeck
from agentdeck import Deck, ManualClock
from agentdeck.memory import plugin as memory_plugin
from agentdeck.plugins.hookspecs import RegisterEngine
from agentdeck.plugins.host import PluginHost
from agentdeck.settings import Settings
from agentdeck.testing import ScriptedEngine


class ScriptedEnginePlugin:
    @agentdeck.hookimpl
    def agentdeck_register_engines(self, register: RegisterEngine) -> None:
        register(ScriptedEngine)


def host(*extra: object) -> PluginHost:
    return PluginHost.from_plugins(
        ("memory", memory_plugin), ("scripted", ScriptedEnginePlugin()), *extra
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
        settings=Settings(env=env or {}),
        plugins=options.pop("plugins", None) or host(),
        clock=clock or ManualClock(),
        observers=options.pop("observers", ()),
        **options,
    )
