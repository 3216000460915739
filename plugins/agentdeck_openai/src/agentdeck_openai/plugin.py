"""Hook implementations of the `openai` plugin, loaded from the ``agentdeck`` entry-point group.

Registers its settings sections, the ``openai`` engine, and the conversation-session factories
(``local``, ``redis``, ``rediss``). Nothing is imported or built at registration: each factory
imports its module (and so the Agents SDK) only when a deck first builds one. The engine factory
also carries ``run_headless``, which ``Agent.run()`` looks for (:mod:`agentdeck_openai.headless`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import agentdeck
from agentdeck.plugins.hookspecs import RegisterNamed, RegisterScheme
from agentdeck.ports import BackendRequest, EngineRequest
from agentdeck.settings import SettingsSection
from agentdeck_openai.settings import OpenAISettings, RunnerSettings, SessionSettings

SESSION_FACTORIES: dict[str, tuple[str, str]] = {
    "local": ("LocalSessionFactory", "in-process SQLite session per session id (not durable)"),
    "redis": ("RedisSessionFactory", "Agents SDK RedisSession, shared by every worker"),
    "rediss": ("RedisSessionFactory", "Agents SDK RedisSession over TLS"),
}
"""scheme -> (class in ``agentdeck_openai.sessions``, description)."""


@agentdeck.hookimpl
def agentdeck_register_settings(register: Callable[[type[SettingsSection]], None]) -> None:
    register(OpenAISettings)
    register(RunnerSettings)
    register(SessionSettings)


def _engine(request: EngineRequest) -> Any:
    from agentdeck_openai.engine import OpenAIEngine

    return OpenAIEngine(request)


_engine.__qualname__ = "OpenAIEngine"


async def _run_headless(engine: Any, agent: Any, input: Any, *, session: Any = None) -> Any:
    from agentdeck_openai.headless import run_headless

    return await run_headless(engine, agent, input, session=session)


# Read by the core's Agent.run() from the registered factory, so finding it imports nothing.
_engine.run_headless = _run_headless  # type: ignore[attr-defined]


@agentdeck.hookimpl
def agentdeck_register_engines(register: RegisterNamed) -> None:
    register(
        "openai",
        _engine,
        description="Agents on the OpenAI Agents SDK (openai-agents)",
    )


def _session_factory(class_name: str) -> Callable[[BackendRequest], Any]:
    def build(request: BackendRequest) -> Any:
        factory = getattr(importlib.import_module("agentdeck_openai.sessions"), class_name)
        return factory.from_request(request)

    build.__qualname__ = f"{class_name}.from_request"
    return build


@agentdeck.hookimpl
def agentdeck_register_session_factories(register: RegisterScheme) -> None:
    for scheme, (class_name, description) in SESSION_FACTORIES.items():
        register(scheme, _session_factory(class_name), description=description)
