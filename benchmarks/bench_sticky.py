"""Sticky continuation: what resuming a paused ``@workflow`` in the process that holds it costs,
as the steps it has done grow.

Each subject call resumes a run paused in ``ctx.sleep_until`` (a year ahead: only a resume wakes
it) and waits until it sleeps again: the body goes on from its sleep, in the same task, with
nothing replayed. The subject's run did ``STEPS_DONE`` steps before its first sleep, the
baseline's 4 -- on the same deck, in alternating batches, so both logs also grow alike with the
cycles themselves. Replaying from the top at every continuation re-executes every step done
against the journal: before sticky continuation this row measured 2.1x at 400 steps (6.9 ms vs
3.2 ms a cycle, on a loaded two-core machine), and now about 1.1x (the runtime still reads the
run's log once per resume, which is what is left of the growth).

A memory store: what is measured is the runtime and the engine, not a store's commit.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import sys
import warnings
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from agentdeck import Deck, RunSuspendedError, WorkflowCtx, workflow
from agentdeck.runtime.config import NonDurableStoreWarning
from agentdeck.settings import Settings
from benchmarks import Pair, bench

SMOKE = "--smoke" in sys.argv
STEPS_DONE = 40 if SMOKE else 400
_A_YEAR_ON = datetime.now(UTC) + timedelta(days=365)

# The runs park on the memory store on purpose.
warnings.filterwarnings("ignore", category=NonDurableStoreWarning)


def _value(i: int) -> int:
    return i


@workflow
async def naps_forever(ctx: WorkflowCtx[None], steps: int = 4) -> int:
    """Do ``steps`` steps, then sleep for a year again and again (each resume wakes it)."""
    total = 0
    for i in range(steps):
        total += await ctx.step("work", _value, i)
    while True:
        await ctx.sleep_until(_A_YEAR_ON)
        total += 1


class _Sleepers:
    """One open deck on its own event loop, and its runs of ``naps_forever``."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.deck = Deck(
            workflows=[naps_forever],
            observers=(),
            settings=Settings(env={"AGENTDECK_STATE": "memory://"}),
        )
        self.loop.run_until_complete(self.deck.open())
        atexit.register(self.close)

    def asleep(self, steps: int) -> Any:
        """A run that did ``steps`` steps and now sleeps."""

        async def start() -> Any:
            run = await self.deck.runs.start("naps_forever", {"steps": steps})
            with contextlib.suppress(RunSuspendedError):
                await run
            return run

        return self.loop.run_until_complete(start())

    def wake(self, run: Any) -> Callable[[], None]:
        async def resume_and_sleep_again() -> None:
            await run.resume()
            with contextlib.suppress(RunSuspendedError):
                await run

        return lambda: self.loop.run_until_complete(resume_and_sleep_again())

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.loop.run_until_complete(self.deck.aclose())
        self.loop.close()


@bench(f"core: @workflow resumed in-process, {STEPS_DONE} steps done vs 4, memory", budget=1.5)
def sticky_resume() -> Pair:
    """Resume a sleeping workflow and wait until it sleeps again: many steps done vs few."""
    sleepers = _Sleepers()
    subject, baseline = sleepers.asleep(STEPS_DONE), sleepers.asleep(4)
    return Pair(subject=sleepers.wake(subject), baseline=sleepers.wake(baseline))
