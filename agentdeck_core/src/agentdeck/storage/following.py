"""Following a run page by page: the loop of every store whose followers fetch what is new.

A store that wakes its followers itself (a notification, a condition) still hands them events
in pages it reads from its log. :func:`follow_pages` is the part every such store shares: ask
for the events from the next position, yield them, stop after the terminal event -- or when the
store says the run will have no more (it ended, or the store closed).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

from agentdeck.model.events import Event
from agentdeck.vocabulary import TERMINAL_KINDS

__all__ = ["NextEvents", "follow_pages"]

NextEvents = Callable[[int], Awaitable["list[Event] | None"]]
"""``next_events(position)``: the run's events from seq ``position`` once there are any (it
waits until then), or ``None`` when there will be none (the run is over, the store closed)."""


async def follow_pages(next_events: NextEvents, from_seq: int = 0) -> AsyncIterator[Event]:
    """Every event of the run from ``from_seq`` on, through its terminal event."""
    position = max(0, from_seq)
    while True:
        events = await next_events(position)
        if events is None:
            return
        for event in events:
            position = event.seq + 1
            yield event
            if event.kind in TERMINAL_KINDS:
                return
