"""Hook implementations of the `openai` plugin, loaded from the ``agentdeck`` entry-point group.

Registers its settings sections, the ``openai`` engine, and the conversation-session factories
(``local``, ``redis``, ``rediss``). Nothing of the Agents SDK is imported at registration: the
engine is registered as a lazy :class:`~agentdeck.ports.EngineRef` (declaring its name and that it
runs headless, which ``Agent.run()`` reads), resolved when a deck first builds, and each session
factory imports its module only when a deck first builds one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import agentdeck
from agentdeck.plugins.hookspecs import RegisterEngine, RegisterScheme, RegisterSettings
from agentdeck.ports import BackendRequest, EngineRef, SessionFactory
from agentdeck_openai.settings import OpenAISettings, RunnerSettings, SessionSettings

ENGINE = EngineRef(
    "agentdeck_openai.engine:OpenAIEngine",
    name="openai",
    headless=True,
    client="agentdeck_openai.client:OpenAIClientEngine",
)
"""The engine, by import path: importing it imports the Agents SDK; its client face (what a
deck that only admits runs for workers loads) does not."""

SESSION_FACTORIES: dict[str, tuple[str, str]] = {
    "local": ("LocalSessionFactory", "in-process SQLite session per session id (not durable)"),
    "sqlite": ("SqliteSessionFactory", "Agents SDK SQLiteSession in a file (one machine)"),
    "redis": ("RedisSessionFactory", "Agents SDK RedisSession, shared by every worker"),
    "rediss": ("RedisSessionFactory", "Agents SDK RedisSession over TLS"),
}
"""scheme -> (class in ``agentdeck_openai.sessions``, description)."""


@agentdeck.hookimpl
def agentdeck_register_settings(register: RegisterSettings) -> None:
    register(OpenAISettings)
    register(RunnerSettings)
    register(SessionSettings)


@agentdeck.hookimpl
def agentdeck_register_engines(register: RegisterEngine) -> None:
    register(ENGINE, description="Agents on the OpenAI Agents SDK (openai-agents)")


def _session_factory(class_name: str) -> Callable[[BackendRequest], SessionFactory]:
    def build(request: BackendRequest) -> SessionFactory:
        factory = getattr(importlib.import_module("agentdeck_openai.sessions"), class_name)
        built: SessionFactory = factory.from_request(request)
        return built

    build.__qualname__ = f"{class_name}.from_request"
    return build


@agentdeck.hookimpl
def agentdeck_register_session_factories(register: RegisterScheme[SessionFactory]) -> None:
    for scheme, (class_name, description) in SESSION_FACTORIES.items():
        register(scheme, _session_factory(class_name), description=description)
