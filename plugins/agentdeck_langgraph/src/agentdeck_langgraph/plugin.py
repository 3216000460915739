"""Hook implementations of the ``langgraph`` plugin, loaded from the ``agentdeck`` entry-point
group: the settings sections, the checkpointers by scheme, and the engine.

Registration imports nothing of LangGraph: the engine is a lazy
:class:`~agentdeck.ports.EngineRef`, resolved when a deck first builds, and each checkpointer
factory imports :mod:`agentdeck_langgraph.checkpointers` when a deck first opens one. (This
module imports only the settings, which need pydantic alone.)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import agentdeck
from agentdeck.plugins.hookspecs import RegisterEngine, RegisterScheme, RegisterSettings
from agentdeck.ports import BackendRequest, CheckpointerFactory, EngineRef
from agentdeck_langgraph.settings import CheckpointSettings, LangGraphSettings

ENGINE = EngineRef(
    "agentdeck_langgraph.engine:LangGraphEngine",
    name="langgraph",
    client="agentdeck_langgraph.client:LangGraphClientEngine",
)
"""The engine, by import path: importing it imports LangGraph."""

CHECKPOINTERS: dict[str, tuple[str, str]] = {
    "memory": (
        "MemoryCheckpointers",
        "LangGraph InMemorySaver (this process only; parked runs die with it)",
    ),
    "sqlite": ("SqliteCheckpointers", "LangGraph AsyncSqliteSaver on one file (sqlite:///path)"),
    "postgresql": ("PostgresCheckpointers", "LangGraph AsyncPostgresSaver on a connection pool"),
    "postgres": ("PostgresCheckpointers", "LangGraph AsyncPostgresSaver on a connection pool"),
}
"""scheme -> (class in ``agentdeck_langgraph.checkpointers``, description)."""


@agentdeck.hookimpl
def agentdeck_register_settings(register: RegisterSettings) -> None:
    register(CheckpointSettings)
    register(LangGraphSettings)


@agentdeck.hookimpl
def agentdeck_register_checkpointers(register: RegisterScheme[CheckpointerFactory]) -> None:
    for scheme, (class_name, description) in CHECKPOINTERS.items():
        register(scheme, _checkpointers(class_name), description=description)


@agentdeck.hookimpl
def agentdeck_register_engines(register: RegisterEngine) -> None:
    register(ENGINE, description="runs agentdeck_langgraph.Workflow graphs on LangGraph")


def _checkpointers(class_name: str) -> Callable[[BackendRequest], CheckpointerFactory]:
    def build(request: BackendRequest) -> CheckpointerFactory:
        factory = getattr(importlib.import_module("agentdeck_langgraph.checkpointers"), class_name)
        built: CheckpointerFactory = factory.from_request(request)
        return built

    build.__qualname__ = f"{class_name}.from_request"
    return build
