"""The core's terminal binding, registered through the same hook as any plugin's binding.

Declared as the entry point ``bindings = "agentdeck.bindings.plugin"`` of agentdeck-core, so
``agentdeck plugins`` lists it and ``host.binding("terminal")`` builds it.
"""

from __future__ import annotations

from agentdeck.plugins.deferred import Deferred
from agentdeck.plugins.hookspecs import RegisterNamed, hookimpl
from agentdeck.ports import Binding


@hookimpl
def agentdeck_register_bindings(register: RegisterNamed[Binding]) -> None:
    register(
        "terminal",
        Deferred("agentdeck.bindings.terminal:Terminal"),
        description="a chat on the terminal: streamed replies, questions asked inline",
    )
