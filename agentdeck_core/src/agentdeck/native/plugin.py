"""The ``workflow`` engine: the core's native executor for ``@workflow`` bodies, registered like
any other plugin.

Declared as the entry point ``native = "agentdeck.native.plugin"`` of agentdeck-core, so the
host loads it through the same path (and the same allow/block switch) as a third-party engine.
The class is registered as it is: it imports nothing a plugin load should not pay for.
"""

from __future__ import annotations

from agentdeck.native.engine import NativeWorkflowEngine
from agentdeck.plugins.hookspecs import RegisterEngine, hookimpl


@hookimpl
def agentdeck_register_engines(register: RegisterEngine) -> None:
    register(
        NativeWorkflowEngine,
        description="imperative @workflow bodies; durable replay from the run's log",
    )
