"""What a caller waiting on a run this process plays is handed when the play parks the run.

A play hands its parking to the waiters here only once it has stopped, and the parking is in
the store before that: another process can answer the run and finish it in between. The waiter
must then learn how the run stands now (finished), not be told it is suspended.

Each test writes the run's log by hand around one registered play, so the interleaving is
exactly the one described, not left to scheduling.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from agentdeck import Deck, RunSuspendedError, TextBlock, workflow
from agentdeck.model.payloads import (
    AnswerRecorded,
    RunCompleted,
    RunInterrupted,
    RunResumed,
    RunStarted,
)
from agentdeck.ports import NewRun
from agentdeck.runtime.held import Playing
from agentdeck.runtime.ids import new_run_id


@workflow
async def approval() -> str:
    return "approved"


@pytest.fixture
async def deck() -> AsyncIterator[Deck]:
    async with Deck(workflows=[approval], observers=()) as opened:
        yield opened


async def _played_here(deck: Deck) -> tuple[str, Playing]:
    """A run opened in the store and registered as playing in this process."""
    runtime = deck.service.runtime
    invocable = runtime.invocables["approval"]
    run_id = new_run_id()
    started = RunStarted(
        name="approval", invocable_kind=invocable.kind, input=[], code_digest=invocable.code_digest
    )
    await runtime.store.open_run(NewRun(run_id=run_id, started=started))
    playing = Playing(context=None)
    runtime.held.playing[run_id] = playing
    return run_id, playing


async def test_a_parking_another_process_already_ended_is_not_handed_over(deck: Deck) -> None:
    runtime = deck.service.runtime
    run_id, playing = await _played_here(deck)
    run = await deck.runs.get(run_id)
    waiting = asyncio.create_task(run.result())
    await asyncio.sleep(0.01)  # the caller now waits on the play
    (parked,) = await runtime.store.append(run_id, [RunInterrupted(interrupt_id="q")])
    # Elsewhere: the question is answered and the run plays to its end ...
    await runtime.store.append(run_id, [AnswerRecorded(interrupt_id="q", value="yes")])
    await runtime.store.append(run_id, [RunResumed(interrupt_id="q")])
    await runtime.store.append(run_id, [RunCompleted(output=[TextBlock(text="approved")])])
    # ... before this process's play has stopped and handed its parking over.
    playing.end(parked)
    runtime.held.playing.pop(run_id)
    assert await asyncio.wait_for(waiting, 5) == [TextBlock(text="approved")]


async def test_a_parking_that_still_stands_is_handed_over(deck: Deck) -> None:
    runtime = deck.service.runtime
    run_id, playing = await _played_here(deck)
    run = await deck.runs.get(run_id)
    waiting = asyncio.create_task(run.result())
    await asyncio.sleep(0.01)
    (first,) = await runtime.store.append(run_id, [RunInterrupted(interrupt_id="q1")])
    await runtime.store.append(run_id, [RunInterrupted(interrupt_id="q2")])
    playing.end(first)
    runtime.held.playing.pop(run_id)
    with pytest.raises(RunSuspendedError) as suspended:
        await asyncio.wait_for(waiting, 5)
    # Parked on two questions: the caller hears of the first, as the play recorded it.
    assert suspended.value.pending is not None
    assert suspended.value.pending.interrupt_id == "q1"
