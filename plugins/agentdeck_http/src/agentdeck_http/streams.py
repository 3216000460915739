"""A run's canonical events as Server-Sent Events.

Each event is one frame: ``id: <seq>``, ``event: <kind>``, ``data: <the event's JSON>`` — the
same JSON ``Event.to_json()`` writes, with no translation. Because ``id`` is the store-assigned
seq, a client that reconnects with ``Last-Event-ID: n`` (what a browser's ``EventSource`` sends
by itself) receives exactly the events after ``n``: none lost, none twice. An idle stream sends a
comment line every heartbeat so proxies keep it open.

A followed stream ends where ``run.events(follow=True)`` does — at a terminal event or a
suspension — and also when the server drains (the client reconnects, to another worker if need
be, and resumes from its last id).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from sse_starlette import EventSourceResponse, ServerSentEvent

from agentdeck.deck.runs import Run
from agentdeck.deck.serving import Exposure
from agentdeck.model.events import Event
from agentdeck_http.binding import KindFilter

__all__ = ["SEPARATOR", "event_frame", "follow_until_closing", "run_event_frames", "sse_response"]

SEPARATOR = "\n"


def event_frame(event: Event) -> ServerSentEvent:
    return ServerSentEvent(data=event.to_json(), event=event.kind, id=str(event.seq), sep=SEPARATOR)


def data_frame(data: Any, *, event: str | None = None) -> ServerSentEvent:
    return ServerSentEvent(data=json.dumps(data), event=event, sep=SEPARATOR)


async def follow_until_closing(
    exposure: Exposure, events: AsyncIterator[Event]
) -> AsyncIterator[Event]:
    """``events`` until they end or the exposure tells open streams to close (a drain).

    Whatever way the stream stops — the events end, the drain, or the client going away (which
    cancels the consumer) — the pending read is cancelled and the source iterator closed.
    """
    if exposure.streams_closing:
        return
    closing = asyncio.ensure_future(exposure.wait_streams_closing())
    iterator = aiter(events)
    following: asyncio.Future[Event] | None = None
    try:
        while True:
            following = asyncio.ensure_future(anext(iterator))
            done, _ = await asyncio.wait({following, closing}, return_when=asyncio.FIRST_COMPLETED)
            if following not in done:
                return
            try:
                event = following.result()
            except StopAsyncIteration:
                return
            following = None
            yield event
    finally:
        closing.cancel()
        if following is not None and not following.done():
            following.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await following
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()


async def run_event_frames(
    exposure: Exposure, run: Run, *, from_seq: int, follow: bool, kinds: KindFilter
) -> AsyncIterator[ServerSentEvent]:
    """The frames of ``run``'s events from ``from_seq`` on (allowlisted kinds only)."""
    events = run.events(from_seq=from_seq, follow=follow)
    if follow:
        events = follow_until_closing(exposure, events)
    async for event in events:
        if kinds(event.kind):
            yield event_frame(event)


def sse_response(
    frames: AsyncIterator[ServerSentEvent], *, heartbeat: float
) -> EventSourceResponse:
    return EventSourceResponse(
        frames,
        ping=heartbeat,
        sep=SEPARATOR,
        headers={"Cache-Control": "no-store"},
    )
