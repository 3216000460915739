"""The in-process execution: the default answer to *where runs execute*, registered as a plugin.

A run plays in the process whose deck opened it, in a task of that deck's runtime, from the
moment it is recorded; leases and the deck's sweep hand a dead process's runs on. Declared as
the entry point ``execution = "agentdeck.runtime.in_process"`` of agentdeck-core, so
``AGENTDECK_EXECUTION`` picks it (or leaves it picked, unset) through the same path and the same
allow/block switch as a third-party execution such as ``temporal://``.
"""

from __future__ import annotations

from typing import ClassVar

from agentdeck.plugins.hookspecs import RegisterScheme, hookimpl
from agentdeck.ports import Admission, BackendRequest, Execution

__all__ = ["IN_PROCESS_URL", "SCHEME", "InProcessExecution"]

SCHEME = "inprocess"
IN_PROCESS_URL = f"{SCHEME}://"
"""What an unset ``AGENTDECK_EXECUTION`` means."""


class InProcessExecution(Execution):
    """Plays every admitted run at once, here: the runtime as it has always worked."""

    queues: ClassVar[bool] = False

    def __init__(self, url: str = IN_PROCESS_URL) -> None:
        self.url = url

    @classmethod
    def from_request(cls, request: BackendRequest) -> InProcessExecution:
        return cls(request.url)

    async def admit(self, admission: Admission) -> None:
        admission.play_here()


@hookimpl
def agentdeck_register_executions(register: RegisterScheme[Execution]) -> None:
    register(
        SCHEME,
        InProcessExecution.from_request,
        description="runs play in the process that opens them (the default)",
    )
