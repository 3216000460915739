"""What the runtime's per-run shortcuts must not change: run ids, payloads built without
re-validation, the shared lease renewer, batched dropping of finished runs' control requests,
handing a played run's ending to its caller, and resolving names once."""

from __future__ import annotations

import asyncio
import enum
import logging
import math
import os
import threading
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import ValidationError

from agentdeck import (
    DataBlock,
    Deck,
    ManualClock,
    NotFoundError,
    RunFailedError,
    RunStarted,
    RunStatus,
    TextBlock,
    WorkflowCtx,
    workflow,
)
from agentdeck.memory import MemoryControlPort, MemoryEventStore, MemoryLeasePort
from agentdeck.model import trusted
from agentdeck.model.content import is_plain_json_scalar
from agentdeck.model.payloads import RunCompleted, RunFailed
from agentdeck.native.channel import Finished, Mailbox, Wake
from agentdeck.ports import LeaseState
from agentdeck.runtime.ids import new_run_id
from agentdeck.runtime.runtime import Runtime
from agentdeck.settings import Settings
from agentdeck.vocabulary import ControlVerb, ErrorCode

# =========================================================================== run ids


def test_a_run_id_is_a_version_4_uuid_in_hex() -> None:
    ids = {new_run_id() for _ in range(1_000)}
    assert len(ids) == 1_000
    for run_id in list(ids)[:50]:
        parsed = uuid.UUID(hex=run_id)
        assert parsed.hex == run_id
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122


def test_run_ids_drawn_from_many_threads_at_once_are_all_distinct() -> None:
    drawn: list[list[str]] = [[] for _ in range(8)]

    def draw(into: list[str]) -> None:
        into.extend(new_run_id() for _ in range(2_000))  # several draws of the pool each

    threads = [threading.Thread(target=draw, args=(into,)) for into in drawn]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [run_id for into in drawn for run_id in into]
    assert len(set(every)) == len(every) == 16_000


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_does_not_hand_out_its_parents_next_run_ids() -> None:
    new_run_id()  # the parent holds a draw with ids still unused
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe and exits
        os.write(write, "".join(new_run_id() for _ in range(10)).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read) as pipe:
        child = pipe.read()
    children = {child[at : at + 32] for at in range(0, len(child), 32)}
    parents = {new_run_id() for _ in range(10)}
    assert len(children) == 10 and not children & parents


# =========================================================================== trusted builders


class Level(enum.IntEnum):
    LOW = 1


@pytest.mark.parametrize(
    ("value", "plain"),
    [
        (None, True),
        (True, True),
        (0, True),
        (2**80, True),
        (1.5, True),
        (math.inf, False),
        (math.nan, False),
        ("ascii", True),
        ("café", False),  # non-ASCII text goes through the round trip (it may hold surrogates)
        (Level.LOW, False),  # an IntEnum becomes a plain int in JSON
        ([1], False),
        ({"a": 1}, False),
    ],
)
def test_only_json_scalars_that_the_round_trip_keeps_are_plain(value: Any, plain: bool) -> None:
    assert is_plain_json_scalar(value) is plain


@pytest.mark.parametrize("value", [None, False, 7, -2.5, "text", 2**70])
def test_a_data_block_built_directly_is_the_validated_one(value: Any) -> None:
    fast, slow = trusted.data_block(value), DataBlock(data=value)
    assert fast == slow
    assert fast.model_dump_json() == slow.model_dump_json()
    assert fast.model_fields_set == slow.model_fields_set


def test_data_that_is_not_plain_is_validated_and_normalized() -> None:
    assert trusted.data_block({"a": (1, 2)}).data == {"a": [1, 2]}
    assert trusted.data_block(Level.LOW).data == 1
    with pytest.raises(ValidationError):
        trusted.data_block(math.nan)
    with pytest.raises(ValidationError):
        trusted.data_block(object())


def test_run_payloads_built_directly_are_the_validated_ones() -> None:
    blocks = [TextBlock(text="hi"), DataBlock(data={"a": 1})]
    fast = trusted.completed(blocks)
    slow = RunCompleted(output=blocks)
    assert fast == slow and fast.model_dump_json() == slow.model_dump_json()
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.output is not blocks  # a list of its own, as validation makes
    started = trusted.started(
        name="wf", invocable_kind="workflow", input=blocks, key="k", code_digest="d", deadline=None
    )
    expected = RunStarted(
        name="wf", invocable_kind="workflow", input=blocks, key="k", code_digest="d"
    )
    assert started == expected and started.model_dump_json() == expected.model_dump_json()
    assert started.model_fields_set == {
        "name",
        "invocable_kind",
        "input",
        "key",
        "code_digest",
        "deadline",
    }


def test_run_payloads_with_unusual_parts_are_validated() -> None:
    paris = timezone(timedelta(hours=2))
    started = trusted.started(
        name="wf",
        invocable_kind="workflow",
        input=[],
        key=None,
        code_digest=None,
        deadline=datetime(2026, 1, 1, 12, tzinfo=paris),
    )
    assert started.deadline == datetime(2026, 1, 1, 10, tzinfo=UTC)
    assert started.deadline is not None and started.deadline.tzinfo is UTC
    with pytest.raises(ValidationError):
        trusted.started(
            name="wf",
            invocable_kind="workflow",
            input=[],
            key=42,  # type: ignore[arg-type]
            code_digest=None,
            deadline=None,
        )
    with pytest.raises(ValidationError):
        trusted.completed(["not a block"])  # type: ignore[list-item]
    assert trusted.completed(({"type": "text", "text": "t"},)).output == [  # type: ignore[arg-type]
        TextBlock(text="t")
    ]


# =========================================================================== the mailbox


async def test_the_mailbox_hands_messages_over_in_order_and_waits_when_empty() -> None:
    mailbox = Mailbox()
    assert mailbox.poll() is None
    getter = asyncio.create_task(mailbox.get())
    await asyncio.sleep(0)
    assert not getter.done()
    first, second = Wake(), Finished(result=1)
    mailbox.put(first)
    mailbox.put(second)
    assert await getter is first
    assert mailbox.poll() is second
    assert mailbox.poll() is None


# =========================================================================== decks


class World:
    """A deck on a manual clock, with its backends at hand."""

    def __init__(self, *workflows: Any, **env: str) -> None:
        self.clock = ManualClock()
        self.store = MemoryEventStore(clock=self.clock)
        self.control = MemoryControlPort(clock=self.clock)
        self.leases = MemoryLeasePort(clock=self.clock)
        self.deck = Deck(
            workflows=list(workflows),
            settings=Settings(env=env),
            observers=(),
            events=self.store,
            control=self.control,
            leases=self.leases,
            clock=self.clock,
        )

    @property
    def runtime(self) -> Runtime:
        return self.deck.service.runtime


GATES: dict[str, asyncio.Event] = {}


@workflow
async def gated(name: str) -> str:
    """Waits (without a safe point) until the test opens its gate."""
    await GATES[name].wait()
    return name


@workflow
async def quick(x: int = 0) -> int:
    return x + 1


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def eventually(check: Any, *, within: float = 2.0) -> None:
    """Wait (in real time) until ``await check()`` is true: for what is tidied in batches."""
    for _ in range(int(within / 0.01)):
        if await check():
            return
        await asyncio.sleep(0.01)
    assert await check()


async def test_a_run_playing_for_longer_than_its_lease_keeps_it_renewed() -> None:
    world = World(gated, AGENTDECK_RUNTIME_LEASE_TTL_SECONDS="60")
    GATES["long"] = asyncio.Event()
    async with world.deck as deck:
        run = await deck.runs.start("gated", "long")
        await settle()
        assert await world.leases.state(run.id) is LeaseState.ALIVE
        for _ in range(12):  # two minutes: twice the TTL, a renewal every ten seconds
            world.clock.advance(10)
            await settle()
            assert await world.leases.state(run.id) is LeaseState.ALIVE
        GATES["long"].set()
        assert await run == "long"

        async def released() -> bool:
            return await world.leases.state(run.id) is LeaseState.NONE

        await eventually(released)


@workflow
async def asks(ctx: WorkflowCtx[None]) -> str:
    return str(await ctx.ask("ok?"))


async def test_a_finished_runs_lease_is_released_soon_and_a_parked_runs_at_once() -> None:
    world = World(quick, asks)
    released: list[str] = []
    release = world.leases.release

    async def counting(run_id: str, owner: str) -> None:
        released.append(run_id)
        await release(run_id, owner)

    world.leases.release = counting  # type: ignore[method-assign]
    async with world.deck as deck:
        parked = await deck.run("asks")
        await settle()
        assert released == [parked.run_id]  # parked: it may be continued any moment
        assert await world.leases.state(parked.run_id) is LeaseState.NONE
        runs = await asyncio.gather(*(deck.runs.start("quick", n) for n in range(10)))
        for run in runs:
            await run

        async def all_released() -> bool:
            states = [await world.leases.state(run.id) for run in runs]
            return all(state is LeaseState.NONE for state in states)

        await eventually(all_released)
        assert sorted(released[1:]) == sorted(run.id for run in runs)


async def test_one_renewer_serves_every_playing_run_and_stops_when_none_is_left() -> None:
    world = World(gated, AGENTDECK_RUNTIME_LEASE_TTL_SECONDS="60")
    names = [f"many-{n}" for n in range(5)]
    for name in names:
        GATES[name] = asyncio.Event()
    async with world.deck as deck:
        runs = [await deck.runs.start("gated", name) for name in names]
        await settle()
        renewer = world.runtime.liveness._renewer
        assert renewer is not None and not renewer.done()
        world.clock.advance(50)  # past the first renewal: a lease taken at 0 would lapse at 60
        await settle()
        world.clock.advance(20)
        await settle()
        for run in runs:
            assert await world.leases.state(run.id) is LeaseState.ALIVE
        assert world.runtime.liveness._renewer is renewer  # still the one task
        for name in names:
            GATES[name].set()
        for run in runs:
            await run
        world.clock.advance(10)  # its next round finds nothing to renew
        await settle()
        assert renewer.done()


async def test_a_lease_lost_to_another_worker_is_reported_and_not_renewed_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    world = World(gated, AGENTDECK_RUNTIME_LEASE_TTL_SECONDS="60")
    GATES["lost"] = asyncio.Event()
    async with world.deck as deck:
        run = await deck.runs.start("gated", "lost")
        await settle()
        world.clock.advance(61)  # the lease lapsed (the loop was "blocked"), and ...
        assert await world.leases.acquire(run.id, "another-worker", 600)  # ... was taken
        with caplog.at_level(logging.WARNING, logger="agentdeck.runtime"):
            world.clock.advance(10)
            await settle()
        assert any("lost its lease" in r.getMessage() for r in caplog.records)
        assert run.id not in world.runtime.liveness.leased
        GATES["lost"].set()
        await run


async def test_a_finished_runs_leftover_control_requests_are_dropped() -> None:
    world = World(gated)
    GATES["leftover"] = asyncio.Event()
    async with world.deck as deck:
        run = await deck.runs.start("gated", "leftover")
        await settle()
        # A pause the body never meets a safe point for: it finishes with the pause pending.
        assert await world.control.request(run.id, ControlVerb.PAUSE, "too late")
        GATES["leftover"].set()
        assert await run == "leftover"
        assert await world.control.pending(run.id) != ()  # not yet: dropped in a batch, soon

        async def dropped() -> bool:
            return await world.control.pending(run.id) == ()

        await eventually(dropped)


async def test_runs_ending_together_have_their_control_requests_dropped_in_one_call() -> None:
    world = World(quick)
    calls: list[list[str]] = []
    forget = world.control.forget

    async def counting(run_ids: Any) -> None:
        calls.append(list(run_ids))
        await forget(run_ids)

    world.control.forget = counting  # type: ignore[method-assign]
    async with world.deck as deck:
        runs = await asyncio.gather(*(deck.runs.start("quick", n) for n in range(20)))
        assert [await run for run in runs] == list(range(1, 21))
    assert sorted(run_id for call in calls for run_id in call) == sorted(r.id for r in runs)
    assert len(calls) == 1  # the closing deck dropped them all at once, if not done before


async def test_the_caller_gets_the_ending_from_the_play_without_following_the_log() -> None:
    world = World(quick)
    followed: list[str] = []
    follow = world.store.follow

    def counting(run_id: str, **options: Any) -> Any:
        followed.append(run_id)
        return follow(run_id, **options)

    world.store.follow = counting  # type: ignore[method-assign]
    async with world.deck as deck:
        assert await deck.run("quick", 1) == 2
        run = await deck.runs.start("quick", 2)
        assert await run == 3
        assert await run == 3  # again, once the play is over: read from the log
    assert followed == []


async def test_a_run_ended_by_another_writer_while_playing_is_reported_from_the_log() -> None:
    world = World(gated)
    GATES["taken"] = asyncio.Event()
    async with world.deck as deck:
        run = await deck.runs.start("gated", "taken")
        await settle()
        # Another process closes the run in its own name (a takeover) while this one plays it.
        await world.store.append(
            run.id,
            [RunFailed(error_code=ErrorCode.LEASE_EXPIRED, message="taken over", retryable=True)],
        )
        GATES["taken"].set()  # the play's own ending is then refused
        with pytest.raises(RunFailedError) as failed:
            await run
        assert failed.value.error_code == "lease_expired"
        assert await run.status() is RunStatus.FAILED


# =========================================================================== resolving names


@workflow(name="Mixed_Case")
async def mixed() -> str:
    return "mixed"


async def test_a_name_resolves_once_and_the_same_way_each_time() -> None:
    async with Deck(workflows=[mixed, quick], settings=Settings(), observers=()) as deck:
        assert await deck.run("mixed_case") == "mixed"  # by case, when only one entry matches
        assert await deck.run("mixed_case") == "mixed"
        assert deck._resolved["mixed_case"] is deck.invocables["Mixed_Case"]
        for _ in range(2):
            with pytest.raises(NotFoundError):
                await deck.run("nope")
        assert "nope" not in deck._resolved


# =========================================================================== the native engine

SLOW_STEPS: list[str] = []


async def _slow(label: str) -> str:
    for _ in range(3):
        await asyncio.sleep(0)
    SLOW_STEPS.append(label)
    return label


@workflow
async def asks_while_a_step_runs(ctx: WorkflowCtx[None]) -> list[Any]:
    async def step_a_little_later() -> Any:
        await asyncio.sleep(0)  # the play is settling on the parked question by then
        await asyncio.sleep(0)
        return await ctx.step("slow", _slow, "done")

    return list(await asyncio.gather(ctx.ask("go?"), step_a_little_later()))


async def test_a_play_waits_for_a_step_in_flight_before_parking_on_a_question() -> None:
    SLOW_STEPS.clear()
    async with Deck(workflows=[asks_while_a_step_runs], settings=Settings(), observers=()) as deck:
        parked = await deck.run("asks_while_a_step_runs")
        run = await deck.runs.get(parked.run_id)
        kinds = [event.kind async for event in run.events()]
        assert kinds[-2:] == ["step.completed", "run.interrupted"]
        await run.answer("yes")
        assert await run == ["yes", "done"]
        assert SLOW_STEPS == ["done"]  # journaled: the replay did not run the step again


async def test_a_finished_run_leaves_nothing_for_the_cyclic_garbage_collector() -> None:
    """Every run's objects are freed by reference counting when its play ends: per-run cycles
    would leave them to full collections, whose cost grows with everything the process holds."""
    import gc

    @workflow
    async def trivial(ctx: WorkflowCtx) -> int:
        return 1

    async with Deck(workflows=[trivial], settings=Settings(env={}), observers=()) as deck:
        for _ in range(5):
            await deck.run("trivial")
        await asyncio.sleep(0)
        gc.collect()
        # Everything alive now is held until the check is done, so only objects the 50 runs made
        # can turn up as garbage: an earlier test's deck and event loop, freed late by a thread
        # that let go of them, is not this test's subject (it failed the lowest-versions run).
        existing = gc.get_objects()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            for _ in range(50):
                await deck.run("trivial")
            await asyncio.sleep(0.05)
            gc.collect()
            leaked = [type(o).__qualname__ for o in gc.garbage]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            del existing
    assert leaked == []
