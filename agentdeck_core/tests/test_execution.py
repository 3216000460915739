"""Where runs execute: the execution hook, its in-process default, and what a deck refuses.

The in-process execution is the core's own plugin; an execution that queues runs for workers
(here a small in-test one, as a third-party plugin would register) needs a durable store every
worker shares, and a deck says so when it is built on one that is not.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

import agentdeck
from agentdeck import Deck, WorkflowCtx, workflow
from agentdeck.errors import ConfigError
from agentdeck.memory import plugin as memory_plugin
from agentdeck.native import plugin as native_plugin
from agentdeck.plugins.hookspecs import RegisterScheme
from agentdeck.plugins.host import EXECUTIONS, PluginHost, default_host
from agentdeck.ports import Admission, BackendRequest, Execution
from agentdeck.runtime import in_process
from agentdeck.runtime.in_process import InProcessExecution
from agentdeck.settings import Settings


class QueueingExecution(Execution):
    """An execution that queues, as a plugin such as agentdeck-temporal registers one."""

    queues: ClassVar[bool] = True

    def __init__(self, url: str) -> None:
        self.url = url
        self.admitted: list[str] = []

    async def admit(self, admission: Admission) -> None:
        self.admitted.append(admission.run_id)


class QueueingPlugin:
    @agentdeck.hookimpl
    def agentdeck_register_executions(self, register: RegisterScheme[Execution]) -> None:
        register("queue", lambda request: QueueingExecution(request.url), description="a queue")


def a_deck(*plugins: Any, env: dict[str, str] | None = None) -> Deck:
    host = PluginHost.from_plugins(("memory", memory_plugin), ("native", native_plugin), *plugins)
    return Deck(
        workflows=[echo],
        settings=Settings(env={"AGENTDECK_STATE": "memory://", **(env or {})}),
        plugins=host,
    )


@workflow
async def echo(ctx: WorkflowCtx, text: str) -> str:
    return text


def test_the_in_process_execution_is_registered_by_the_core_like_its_other_defaults() -> None:
    registration = default_host().registrations(EXECUTIONS.key)
    by_scheme = {r.name: r for r in registration}
    assert by_scheme["inprocess"].distribution == "agentdeck-core"
    built = default_host().execution(BackendRequest("inprocess://"))
    assert isinstance(built, InProcessExecution) and not built.queues


async def test_with_execution_unset_a_run_plays_in_the_process_that_started_it() -> None:
    deck = a_deck()
    async with deck:
        assert isinstance(deck.service.runtime.execution, InProcessExecution)
        assert await deck.run("echo", {"text": "here"}) == "here"


async def test_naming_the_in_process_execution_explicitly_plays_runs_the_same_way() -> None:
    deck = a_deck(("execution", in_process), env={"AGENTDECK_EXECUTION": "inprocess://"})
    async with deck:
        assert await deck.run("echo", {"text": "named"}) == "named"


def test_an_execution_that_queues_refuses_a_memory_store_saying_why() -> None:
    deck = a_deck(("queue", QueueingPlugin()), env={"AGENTDECK_EXECUTION": "queue://workers"})
    with pytest.raises(ConfigError) as refused:
        deck.build()
    message = str(refused.value)
    assert refused.value.setting == "AGENTDECK_EXECUTION"
    assert "queue://workers" in message
    assert "memory://" in message and "not durable" in message
    assert "postgresql://" in message  # what would be accepted


def test_a_temporal_execution_without_its_plugin_names_the_distribution_to_install() -> None:
    deck = a_deck(env={"AGENTDECK_EXECUTION": "temporal://127.0.0.1:7233/default?task_queue=q"})
    with pytest.raises(ConfigError) as refused:
        deck.build()
    assert "agentdeck-temporal" in str(refused.value)
    assert refused.value.setting == "AGENTDECK_EXECUTION"


def test_an_execution_url_must_be_scheme_shaped() -> None:
    with pytest.raises(ConfigError) as refused:
        a_deck(env={"AGENTDECK_EXECUTION": "127.0.0.1:7233"}).build()
    assert "AGENTDECK_EXECUTION" in str(refused.value)


async def test_an_in_process_deck_has_no_runs_for_a_worker() -> None:
    with pytest.raises(ConfigError) as refused:
        await InProcessExecution().work(runs=None, concurrency=1)  # type: ignore[arg-type]
    assert "AGENTDECK_EXECUTION" in str(refused.value)
    assert "temporal://" in str(refused.value)
