"""``TemporalExecution``: a deck's runs admitted to a Temporal task queue, and played by workers.

A client deck (an embedded caller, ``agentdeck serve``, the CLI) admits each run the store just
recorded as ``queued`` by starting one Temporal workflow for it, keyed by the run id, whose
input is a :class:`~agentdeck_temporal.workflow.RunTicket` -- ids only. A worker deck
(``agentdeck worker``, :meth:`TemporalExecution.work`) polls the task queue
and plays each run's activity on its own engines, through its runtime's
:meth:`~agentdeck.ports.RecordedRuns.play_admitted`.

The Temporal client connects when the deck opens, so a deck that only builds (``agentdeck
build``) never touches the network.
"""

from __future__ import annotations

from typing import ClassVar

from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import Worker

from agentdeck.errors import ConfigError, StoreError
from agentdeck.ports import Admission, BackendRequest, Execution, RecordedRuns
from agentdeck_temporal.activities import PlayActivity
from agentdeck_temporal.address import SCHEME, SETTING, TemporalAddress
from agentdeck_temporal.workflow import WAKE_SIGNAL, RunTicket, RunWorkflow, workflow_id

__all__ = ["SCHEME", "TemporalExecution"]


class TemporalExecution(Execution):
    """Runs queued on a Temporal task queue (``temporal://HOST:PORT/NAMESPACE?task_queue=Q``)."""

    queues: ClassVar[bool] = True

    def __init__(self, url: str) -> None:
        self.url = url
        self.address = TemporalAddress.parse(url)
        self._client: Client | None = None

    @classmethod
    def from_request(cls, request: BackendRequest) -> TemporalExecution:
        """The factory the ``temporal`` scheme registers."""
        return cls(request.url)

    @property
    def client(self) -> Client:
        """The connected Temporal client; ``ConfigError`` before the deck opened."""
        if self._client is None:
            raise ConfigError(
                f"the Temporal execution at {self.url!r} is not open: open the deck first",
                setting=SETTING,
            )
        return self._client

    async def open(self) -> None:
        if self._client is not None:
            return
        address = self.address
        try:
            self._client = await Client.connect(address.target, namespace=address.namespace)
        except RuntimeError as unreachable:  # how the SDK's core reports a failed connection
            raise StoreError(
                f"namespace {address.namespace!r} could not be reached: {unreachable}",
                backend="temporal",
                url=f"temporal://{address.target}",
                retryable=True,
            ) from unreachable

    async def close(self) -> None:
        self._client = None  # the SDK's client holds no resource that needs releasing

    async def admit(self, admission: Admission) -> None:
        address = self.address
        await self.client.start_workflow(
            RunWorkflow.run,
            RunTicket(
                run_id=admission.run_id,
                namespace=admission.namespace,
                heartbeat_seconds=address.heartbeat_seconds,
            ),
            id=workflow_id(admission.run_id),
            task_queue=address.task_queue,
            # A run is admitted once: a second workflow for the same run would play it twice.
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
        )

    async def wake(self, run_id: str) -> None:
        try:
            await self.client.get_workflow_handle(workflow_id(run_id)).signal(WAKE_SIGNAL)
        except RPCError as gone:
            if gone.status is not RPCStatusCode.NOT_FOUND:
                raise
            # Its workflow already ended (the run with it): nothing is left to wake.

    async def work(self, runs: RecordedRuns, *, concurrency: int) -> None:
        if concurrency < 1:
            raise ConfigError(
                f"a worker plays at least one run at a time, not {concurrency}",
                setting="--concurrency",
            )
        activity = PlayActivity(runs, heartbeat_seconds=self.address.heartbeat_seconds)
        worker = Worker(
            self.client,
            task_queue=self.address.task_queue,
            workflows=[RunWorkflow],
            activities=[activity.play_run],
            max_concurrent_activities=concurrency,
        )
        await worker.run()
