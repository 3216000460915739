"""Runs admitted to an execution that queues them, and claimed by a worker's deck.

A client deck and a worker deck share one SQLite state file and nothing else; the execution is
a small in-test plugin that keeps the ids it is handed (what a queue such as Temporal's gets),
so these tests hold the core to what any queueing execution relies on: the run is recorded
``queued`` before the execution hears of it, only its id travels, exactly one worker claims it,
the client reads the output from the store, a queued run is cancelled at once, and a run the
execution would not take ends saying so instead of waiting for good.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

import agentdeck
from agentdeck import Deck, RunStatus, WorkflowCtx, workflow
from agentdeck.errors import RunStateError
from agentdeck.memory import plugin as memory_plugin
from agentdeck.native import plugin as native_plugin
from agentdeck.plugins.hookspecs import RegisterScheme
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import Admission, Execution
from agentdeck.settings import Settings
from agentdeck.sqlite import plugin as sqlite_plugin
from agentdeck_stores import plugin as stores_plugin

ADMITTED: list[Admission] = []


class ListExecution(Execution):
    """Keeps what it is handed, as a queue would; ``queue://refuse`` refuses everything."""

    queues: ClassVar[bool] = True

    def __init__(self, url: str) -> None:
        self.url = url

    async def admit(self, admission: Admission) -> None:
        if self.url == "queue://refuse":
            raise ConnectionError("the queue is down")
        ADMITTED.append(admission)


class ListExecutionPlugin:
    @agentdeck.hookimpl
    def agentdeck_register_executions(self, register: RegisterScheme[Execution]) -> None:
        register("queue", lambda request: ListExecution(request.url), description="a list")


@workflow
async def shout(ctx: WorkflowCtx, text: str) -> str:
    loud = await ctx.step("loud", str.upper, text)
    return f"{loud}!"


def a_deck(state: Path, execution: str = "queue://list") -> Deck:
    host = PluginHost.from_plugins(
        ("memory", memory_plugin),
        ("native", native_plugin),
        ("sqlite", sqlite_plugin),
        ("stores", stores_plugin),
        ("queue", ListExecutionPlugin()),
    )
    env = {"AGENTDECK_STATE": f"sqlite:///{state}", "AGENTDECK_EXECUTION": execution}
    return Deck(workflows=[shout], settings=Settings(env=env), plugins=host)


@pytest.fixture
async def decks(tmp_path: Path) -> AsyncIterator[tuple[Deck, Deck]]:
    ADMITTED.clear()
    state = tmp_path / "state.db"
    async with a_deck(state) as client, a_deck(state) as worker:
        yield client, worker


async def test_an_admitted_run_is_recorded_queued_and_only_its_id_is_handed_on(
    decks: tuple[Deck, Deck],
) -> None:
    client, _worker = decks
    run = await client.runs.start("shout", {"text": "secret input"})

    assert await run.status() is RunStatus.QUEUED
    kinds = [event.kind async for event in run.events()]
    assert kinds == ["run.started", "run.queued"]
    [admission] = ADMITTED
    assert (admission.run_id, admission.name) == (run.id, "shout")
    assert "secret input" not in repr((admission.run_id, admission.name, admission.namespace))


async def test_a_worker_claims_and_plays_the_run_and_the_client_reads_its_output(
    decks: tuple[Deck, Deck],
) -> None:
    client, worker = decks
    run = await client.runs.start("shout", {"text": "hello"})

    record = await worker.service.runtime.play_admitted(run.id)

    assert record.status is RunStatus.COMPLETED
    assert await run == "HELLO!"
    kinds = [event.kind async for event in run.events()]
    assert kinds[:3] == ["run.started", "run.queued", "run.claimed"]
    assert kinds[-1] == "run.completed"


async def test_a_run_is_claimed_once_a_second_worker_is_refused(
    decks: tuple[Deck, Deck], tmp_path: Path
) -> None:
    client, worker = decks
    run = await client.runs.start("shout", {"text": "once"})
    await worker.service.runtime.play_admitted(run.id)

    async with a_deck(tmp_path / "state.db") as second:
        with pytest.raises(RunStateError) as refused:
            await second.service.runtime.play_admitted(run.id)
    assert refused.value.status is RunStatus.COMPLETED
    claims = [e async for e in run.events() if e.kind == "run.claimed"]
    assert len(claims) == 1


async def test_cancelling_a_queued_run_ends_it_at_once_and_no_worker_plays_it(
    decks: tuple[Deck, Deck],
) -> None:
    client, worker = decks
    run = await client.runs.start("shout", {"text": "never"})

    await run.cancel("changed my mind")

    assert await run.status() is RunStatus.CANCELLED
    with pytest.raises(RunStateError) as refused:
        await worker.service.runtime.play_admitted(run.id)
    assert refused.value.status is RunStatus.CANCELLED


async def test_a_run_the_execution_would_not_take_fails_saying_so(tmp_path: Path) -> None:
    async with a_deck(tmp_path / "state.db", "queue://refuse") as client:
        with pytest.raises(ConnectionError):
            await client.runs.start("shout", {"text": "lost?"})
        [run] = await client.runs.list()
        assert await run.status() is RunStatus.FAILED
        events: list[Any] = [e async for e in run.events()]
    assert events[-1].payload.error_code == "not_admitted"


async def test_a_deck_on_an_execution_that_queues_runs_no_sweep(decks: tuple[Deck, Deck]) -> None:
    client, _worker = decks
    assert client._sweeper is None  # leases and timers of its runs are the execution's job
