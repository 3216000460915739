"""The ``workflow`` engine: the core's native executor for ``@workflow`` bodies, registered like
any other plugin.

Declared as the entry point ``native = "agentdeck.native.plugin"`` of agentdeck-core, so the
host loads it through the same path (and the same allow/block switch) as a third-party engine.
The class is registered by reference (an :class:`~agentdeck.ports.EngineRef`), so loading the
plugin imports nothing: the engine, pydantic's validators and jsonschema load when a deck that
has workflows builds, not when ``agentdeck runs list`` discovers plugins.
"""

from __future__ import annotations

from agentdeck.plugins.hookspecs import RegisterEngine, hookimpl
from agentdeck.ports.engines import EngineRef


@hookimpl
def agentdeck_register_engines(register: RegisterEngine) -> None:
    register(
        EngineRef("agentdeck.native.engine:NativeWorkflowEngine", name="workflow"),
        description="imperative @workflow bodies; durable replay from the run's log",
    )
