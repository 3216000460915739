"""The ``temporal`` scheme of ``AGENTDECK_EXECUTION``, registered like any other backend.

Declared as the entry point ``temporal = "agentdeck_temporal.plugin"``. Registering imports
nothing of the Temporal SDK: the execution module (and ``temporalio``) loads the first time a
deck builds with ``temporal://``, so a deck that never selects it never pays for it.
"""

from __future__ import annotations

import agentdeck
from agentdeck.plugins.hookspecs import RegisterScheme
from agentdeck.ports import BackendRequest, Execution

SCHEME = "temporal"


def _temporal_execution(request: BackendRequest) -> Execution:
    from agentdeck_temporal.execution import TemporalExecution

    return TemporalExecution.from_request(request)


@agentdeck.hookimpl
def agentdeck_register_executions(register: RegisterScheme[Execution]) -> None:
    register(
        SCHEME,
        _temporal_execution,
        description="runs queued on a Temporal task queue and played by agentdeck worker",
    )
