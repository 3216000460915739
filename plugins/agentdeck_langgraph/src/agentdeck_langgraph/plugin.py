"""Hook implementations of the ``langgraph`` plugin, loaded from the ``agentdeck`` entry-point
group: the settings section, the checkpointers by scheme, and the engine.

Registration builds nothing: each factory runs when a deck builds (the engine) or opens (its
checkpointer).
"""

from __future__ import annotations

from collections.abc import Callable

import agentdeck
from agentdeck.plugins.hookspecs import RegisterNamed, RegisterScheme
from agentdeck.ports import EngineRequest
from agentdeck.settings import SettingsSection
from agentdeck_langgraph.checkpointers import (
    MemoryCheckpointers,
    PostgresCheckpointers,
    SqliteCheckpointers,
)
from agentdeck_langgraph.engine import LangGraphEngine
from agentdeck_langgraph.settings import CheckpointSettings, LangGraphSettings


@agentdeck.hookimpl
def agentdeck_register_settings(register: Callable[[type[SettingsSection]], None]) -> None:
    register(CheckpointSettings)
    register(LangGraphSettings)


@agentdeck.hookimpl
def agentdeck_register_checkpointers(register: RegisterScheme) -> None:
    register(
        "memory",
        MemoryCheckpointers.from_request,
        description="LangGraph InMemorySaver (this process only; parked runs die with it)",
    )
    register(
        "sqlite",
        SqliteCheckpointers.from_request,
        description="LangGraph AsyncSqliteSaver on one file (sqlite:///path)",
    )
    for scheme in ("postgresql", "postgres"):
        register(
            scheme,
            PostgresCheckpointers.from_request,
            description="LangGraph AsyncPostgresSaver on a connection pool",
        )


@agentdeck.hookimpl
def agentdeck_register_engines(register: RegisterNamed) -> None:
    register(
        LangGraphEngine.name,
        _engine,
        description="runs agentdeck_langgraph.Workflow graphs on LangGraph",
    )


def _engine(request: EngineRequest | None = None) -> LangGraphEngine:
    return LangGraphEngine(request)
