"""Hook implementations: an event store for ``thirdparty://``, one settings section, and an engine
registered by reference (``adk_thirdparty.engine`` is imported only when a deck builds).

Written only against AgentDeck's public plugin surface (``agentdeck.hookimpl``, the ports, the
settings base class), as an outside author would.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic_settings import SettingsConfigDict

import agentdeck
from agentdeck.memory import MemoryEventStore
from agentdeck.plugins.hookspecs import RegisterEngine, RegisterScheme, RegisterSettings
from agentdeck.ports import BackendRequest, EngineRef, EventStore
from agentdeck.settings import SettingsSection

SCHEME = "thirdparty"


class ThirdPartyEventStore(MemoryEventStore):
    """The core's in-memory store, under this plugin's own scheme and class."""

    def __init__(self, request: BackendRequest) -> None:
        super().__init__(clock=request.clock, url=request.url)
        self.request = request


class ThirdPartySettings(SettingsSection):
    """Settings of the third-party fixture plugin."""

    section: ClassVar[str] = "thirdparty"
    model_config = SettingsConfigDict(env_prefix="ADK_THIRDPARTY_")

    label: str = "thirdparty"
    """A label, to prove a plugin's own section is read from the deck's environment."""


@agentdeck.hookimpl
def agentdeck_register_event_stores(register: RegisterScheme[EventStore]) -> None:
    register(SCHEME, ThirdPartyEventStore, description="third-party fixture store (in memory)")


@agentdeck.hookimpl
def agentdeck_register_settings(register: RegisterSettings) -> None:
    register(ThirdPartySettings)


@agentdeck.hookimpl
def agentdeck_register_engines(register: RegisterEngine) -> None:
    register(
        EngineRef("adk_thirdparty.engine:ThirdPartyEngine", name="thirdparty-echo"),
        description="third-party fixture engine (echoes its input)",
    )
