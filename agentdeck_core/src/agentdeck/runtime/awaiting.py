"""What a caller awaiting a run (``await run``, ``Run.result()``) takes as the run's end.

A run's play ends at each terminal or suspending event, and most suspensions wait on someone --
an answer, a resume -- so they end the await (``RunSuspendedError``). One kind does not: a parent
paused on its child runs (``run.paused(waiting_on="child_runs")``) goes on by itself once they
end. On an execution that queues runs for workers a parent parks like that while its children
merely play (rather than hold a worker's slot while it waits, see
:meth:`~agentdeck.runtime.children.Children.outcome`), and a caller awaiting it must not see a
stop there. So the await follows such a parent past its pause -- unless one of the children it
waits on itself stops on someone (read the same way, so a grandchild's question counts too):
then the parent's pause is the ending the caller gets, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

from agentdeck.errors import AgentDeckError
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunPaused
from agentdeck.runtime.recording import Recorder, closing
from agentdeck.vocabulary import ENDING_KINDS, TERMINAL_KINDS, WaitKind

__all__ = ["awaited_ending"]


async def awaited_ending(recorder: Recorder, run_id: str) -> Event:
    """The ending of ``run_id`` a caller awaiting it gets (see the module doc)."""
    ending = await recorder.played_ending(run_id)
    if ending is None:
        ending = await recorder.logged_ending(run_id, await recorder.record(run_id))
    while (
        isinstance(ending.payload, RunPaused) and ending.payload.waiting_on == WaitKind.CHILD_RUNS
    ):
        after = asyncio.ensure_future(_next_ending(recorder, run_id, after=ending.seq))
        children = [
            asyncio.ensure_future(awaited_ending(recorder, child))
            for child in ending.payload.waiting_for
        ]
        try:
            if await _a_child_stops_on_someone(after, children):
                return ending
        finally:
            waits = [after, *children]
            for wait in waits:
                wait.cancel()
            await asyncio.gather(*waits, return_exceptions=True)
        ending = after.result()
    return ending


def _waits_on_children(ending: Event) -> bool:
    payload = ending.payload
    return isinstance(payload, RunPaused) and payload.waiting_on == WaitKind.CHILD_RUNS


async def _a_child_stops_on_someone(
    parent: asyncio.Future[Event], children: Sequence[asyncio.Future[Event]]
) -> bool:
    """Whether a child stops without ending before the parent records its next ending."""
    pending: set[asyncio.Future[Event]] = {parent, *children}
    while parent in pending:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for child in done - {parent}:
            with contextlib.suppress(AgentDeckError):  # a child gone from the store waits on none
                if child.result().kind not in TERMINAL_KINDS:
                    return True
    return False


async def _next_ending(recorder: Recorder, run_id: str, *, after: int) -> Event:
    """The first ending the run's log records after ``seq`` ``after`` (waiting for it)."""
    async with closing(recorder.store.follow(run_id, from_seq=after + 1)) as log:
        async for event in log:
            if event.kind in ENDING_KINDS:
                return event
    return await recorder.logged_ending(run_id, await recorder.record(run_id))
