"""Cross-run routes: ``GET /runs/changes`` (a namespace's run changes, as Server-Sent Events)
and ``GET /inbox`` (every open question and tool approval, oldest first).

They exist for a person watching many runs at once -- the operator console's live list and
inbox -- and read through the deck's run service like every other route.
"""

# No ``from __future__ import annotations``: FastAPI reads these signatures at runtime.

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from sse_starlette import EventSourceResponse, ServerSentEvent

from agentdeck.ports import RunQuery
from agentdeck.vocabulary import RunStatus
from agentdeck_http.security import Principal
from agentdeck_http.served import NamespaceQuery, Served, errors
from agentdeck_http.streams import SEPARATOR, sse_response
from agentdeck_http.watch import run_changes
from agentdeck_http.wire import InboxItemView, InboxPageView, InterruptView, RunView

__all__ = ["feed_router"]

WATCH_INTERVAL = 0.2
"""Seconds between the server's looks at the run index for ``/runs/changes``: short enough that
a new run shows in the console within a second, long enough that an idle stream costs little
(the store port has no cross-run feed to follow instead; see :mod:`agentdeck_http.watch`)."""


def feed_router(served: Served) -> APIRouter:
    exposure = served.exposure
    router = APIRouter(prefix=served.prefix, dependencies=[Depends(served.ready)])
    Caller = Annotated[Principal, Depends(served.authenticate)]

    @router.get(
        "/runs/changes",
        response_class=EventSourceResponse,
        responses={
            200: {
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
                "description": "frames `event: run.changed`, `data: <run JSON as GET /runs>`",
            },
            **errors(401, 403, 422, 503),
        },
        summary="A namespace's runs as they start and change status, as Server-Sent Events",
    )
    async def changes(caller: Caller, namespace: NamespaceQuery = None) -> EventSourceResponse:
        """First the namespace's newest and unfinished runs, then each run again whenever its
        status or latest event moves -- runs started by other processes included. Each frame
        is ``event: run.changed`` with the run as ``GET /runs`` lists it. The stream stays open
        until the client leaves or the server drains."""
        resolved = caller.namespace(namespace)
        caller.require(resolved)
        # One read before the stream starts: a namespace the store refuses (text no store can
        # hold, a store that is down) is a 4xx/503 now, not an error after the 200 went out.
        await exposure.service.list_runs(RunQuery(namespace=resolved, limit=1))

        async def frames() -> AsyncIterator[ServerSentEvent]:
            async for record in run_changes(exposure, resolved, interval=WATCH_INTERVAL):
                yield ServerSentEvent(
                    data=RunView.of(record).model_dump_json(), event="run.changed", sep=SEPARATOR
                )

        return sse_response(frames(), heartbeat=served.binding.heartbeat)

    @router.get(
        "/inbox",
        response_model=InboxPageView,
        responses=errors(401, 403, 422, 503),
        summary="Every open question and tool approval of a namespace, oldest first",
    )
    async def inbox(
        caller: Caller,
        namespace: NamespaceQuery = None,
        limit: Annotated[int, Query(ge=1, le=500, description="runs per page")] = 100,
        cursor: Annotated[
            str | None, Query(min_length=1, max_length=1000, description="a next_cursor")
        ] = None,
    ) -> InboxPageView:
        """The runs waiting for an answer, oldest first, each open question with what it asks
        (``payload``: a question, or a tool call's ``tool`` and ``args``) and the shape its
        answer must fit (``expected``: ``options`` and/or ``json_schema``). Answer one with
        ``POST /runs/{id}/answer``."""
        resolved = caller.namespace(namespace)
        caller.require(resolved)
        page = await exposure.service.list_runs(
            RunQuery(
                namespace=resolved, status=RunStatus.WAITING_ANSWER, limit=limit, cursor=cursor
            )
        )
        items: list[InboxItemView] = []
        for record in page.runs:
            state = await exposure.service.state(record.run_id)
            run = RunView.of(record)
            items.extend(
                InboxItemView(run=run, interrupt=InterruptView.of(interrupt))
                for interrupt in state.interrupts
            )
        return InboxPageView(items=items, next_cursor=page.next_cursor)

    return router
