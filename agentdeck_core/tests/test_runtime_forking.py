"""Retrying and forking runs on a deck: a new run, linked to its origin in ``run.started``,
that reuses what the origin's log recorded (a native ``@workflow``'s journal) instead of
executing it again."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

import agentdeck
from agentdeck import (
    Deck,
    ForkUnsupportedError,
    InvalidInputError,
    RunFailedError,
    RunStateError,
    RunStatus,
    RunSuspendedError,
    WorkflowCtx,
    workflow,
)
from agentdeck.memory import plugin as memory_plugin
from agentdeck.model.payloads import ForkOrigin, RunStarted, StepCompleted
from agentdeck.native import plugin as native_plugin
from agentdeck.plugins.hookspecs import RegisterEngine
from agentdeck.plugins.host import PluginHost
from agentdeck.settings import Settings
from agentdeck.testing import ScriptedEngine
from agentdeck.testing.engine_kit import Raise, Script

executed: Counter[str] = Counter()
"""How many times each step body really executed (reset per test)."""
failing: set[str] = set()
"""Step bodies that raise while named here."""


def _body(name: str) -> Any:
    def run(value: int) -> int:
        executed[name] += 1
        if name in failing:
            raise RuntimeError(f"{name} is down")
        return value + 1

    return run


@workflow
async def five_steps(ctx: WorkflowCtx[Any]) -> list[int]:
    value, seen = 0, []
    for n in range(1, 6):
        value = await ctx.step(f"step{n}", _body(f"step{n}"), value)
        seen.append(value)
    return seen


@workflow
async def ask_after_two(ctx: WorkflowCtx[Any]) -> Any:
    first = await ctx.step("one", _body("one"), 0)
    second = await ctx.step("two", _body("two"), first)
    return {"second": second, "answer": await ctx.ask("go on?")}


BROKEN = Script("broken", [Raise(message="provider down")], kind="agent")


class _ScriptedPlugin:
    @agentdeck.hookimpl
    def agentdeck_register_engines(self, register: RegisterEngine) -> None:
        register(ScriptedEngine)


@pytest.fixture(autouse=True)
def _reset() -> None:
    executed.clear()
    failing.clear()


@pytest.fixture
async def deck() -> Any:
    host = PluginHost.from_plugins(
        ("memory", memory_plugin), ("native", native_plugin), ("scripted", _ScriptedPlugin())
    )
    async with Deck(
        workflows=[five_steps, ask_after_two, BROKEN],
        settings=Settings(env={"AGENTDECK_STATE": "memory://"}),
        plugins=host,
        observers=(),
    ) as opened:
        yield opened


async def _started(run: Any) -> RunStarted:
    async for event in run.events():
        assert isinstance(event.payload, RunStarted)
        return event.payload
    raise AssertionError(f"run {run.id} has no log")


async def _failed_at_step3(deck: Deck) -> Any:
    failing.add("step3")
    run = await deck.runs.start("five_steps")
    with pytest.raises(RunFailedError):
        await run
    assert executed == Counter(step1=1, step2=1, step3=1)
    return run


async def test_a_run_failed_at_step_3_of_5_retried_completes_without_running_steps_1_and_2_again(
    deck: Deck,
) -> None:
    failed = await _failed_at_step3(deck)
    failing.clear()  # the outage is over

    retry = await deck.runs.retry(failed.id)

    assert await retry == [1, 2, 3, 4, 5]
    assert retry.id != failed.id
    assert executed == Counter(step1=1, step2=1, step3=2, step4=1, step5=1)
    started = await _started(retry)
    assert started.retry_of == failed.id and started.forked_from is None
    reused = [e.payload for e in [e async for e in retry.events()][1:3]]
    assert [(p.index, p.name) for p in reused if isinstance(p, StepCompleted)] == [
        (0, "step1"),
        (1, "step2"),
    ]
    assert await failed.status() is RunStatus.FAILED  # the origin is left as it ended


async def test_a_fork_reuses_the_journal_before_its_point_and_executes_the_rest(
    deck: Deck,
) -> None:
    done = await deck.runs.start("five_steps")
    assert await done == [1, 2, 3, 4, 5]
    executed.clear()

    fork = await done.fork(at=3)

    assert await fork == [1, 2, 3, 4, 5]
    assert executed == Counter(step4=1, step5=1)
    assert (await _started(fork)).forked_from == ForkOrigin(run_id=done.id, at=3)


async def test_a_fork_from_the_start_executes_every_step(deck: Deck) -> None:
    done = await deck.runs.start("five_steps")
    await done
    executed.clear()
    assert await (await deck.runs.fork(done.id, at=0)) == [1, 2, 3, 4, 5]
    assert executed == Counter(step1=1, step2=1, step3=1, step4=1, step5=1)


async def test_a_fork_past_what_the_journal_holds_is_refused_naming_the_point(
    deck: Deck,
) -> None:
    failed = await _failed_at_step3(deck)
    with pytest.raises(InvalidInputError) as refused:
        await deck.runs.fork(failed.id, at=3)
    assert refused.value.field == "at"
    assert "0 to 2" in str(refused.value)
    with pytest.raises(InvalidInputError):
        await deck.runs.fork(failed.id, at="2")  # type: ignore[arg-type]


async def test_a_fork_of_a_parked_run_asks_again_after_the_reused_steps(deck: Deck) -> None:
    parked = await deck.runs.start("ask_after_two")
    with pytest.raises(RunSuspendedError):
        await parked
    fork = await deck.runs.fork(parked.id, at=2)
    with pytest.raises(RunSuspendedError):
        await fork
    await fork.answer("yes")
    assert await fork == {"second": 2, "answer": "yes"}
    assert executed == Counter(one=1, two=1)
    assert await parked.status() is RunStatus.WAITING_ANSWER


async def test_only_a_failed_or_cancelled_run_is_retried(deck: Deck) -> None:
    done = await deck.runs.start("five_steps")
    await done
    with pytest.raises(RunStateError) as refused:
        await deck.runs.retry(done.id)
    assert refused.value.status is RunStatus.COMPLETED
    assert refused.value.accepted == (RunStatus.FAILED, RunStatus.CANCELLED)
    assert refused.value.hint == "fork"


async def test_a_cancelled_run_is_retried_from_where_it_stopped(deck: Deck) -> None:
    parked = await deck.runs.start("ask_after_two")
    with pytest.raises(RunSuspendedError):
        await parked
    await parked.cancel()
    assert await parked.status() is RunStatus.CANCELLED
    retry = await parked.retry()
    with pytest.raises(RunSuspendedError):
        await retry
    assert executed == Counter(one=1, two=1)
    assert (await _started(retry)).retry_of == parked.id


async def test_an_engine_that_cannot_fork_retries_by_starting_again_and_refuses_a_fork(
    deck: Deck,
) -> None:
    run = await deck.runs.start("broken", "refund A-1")
    with pytest.raises(RunFailedError):
        await run
    with pytest.raises(ForkUnsupportedError) as refused:
        await deck.runs.fork(run.id, at=0)
    assert refused.value.engine == "scripted"

    retry = await deck.runs.retry(run.id)

    with pytest.raises(RunFailedError):
        await retry  # the same script again: it fails again, as a run of its own
    started, origin = await _started(retry), await _started(run)
    assert started.retry_of == run.id and started.input == origin.input
