"""The native routes: start, read, list, stream, answer and control runs; health.

Every route is a thin shell over ``deck.runs`` and the ``Run`` handle — the same calls an
embedded Python caller makes — so a run started here is the run a terminal or another listener
sees, read from the same canonical events.
"""

# No ``from __future__ import annotations``: FastAPI reads these signatures at runtime, and the
# dependency aliases (``Caller``) are local to the router builder, out of reach of string
# annotations.

import re
from typing import Annotated, Literal

from fastapi import APIRouter, Body, Depends, Header, Query, Request, Response
from fastapi.responses import PlainTextResponse
from pydantic import AwareDatetime, BeforeValidator
from sse_starlette import EventSourceResponse

from agentdeck.deck.service import recorded
from agentdeck.errors import DuplicateKeyError, InvalidInputError, RunStateError
from agentdeck.ports import RunQuery
from agentdeck.vocabulary import TERMINAL, RunStatus
from agentdeck_http.health import loaded_plugins, store_health
from agentdeck_http.metrics import render as render_metrics
from agentdeck_http.problems import problem_for, unavailable
from agentdeck_http.security import Principal, recognised
from agentdeck_http.served import NamespaceQuery, RunIdPath, Served, errors, trace_context
from agentdeck_http.streams import run_event_frames, sse_response
from agentdeck_http.wire import (
    MAX_IDENTIFIER,
    AnswerRequest,
    ControlRequest,
    HealthView,
    InterruptView,
    RunPageView,
    RunView,
    StartRunRequest,
    StatusBody,
)

__all__ = ["native_router"]

_START_FIELDS = frozenset(StartRunRequest.model_fields)


def _iso_only(value: object) -> object:
    """Refuse what pydantic would otherwise read as a time: a bare number (``0.5`` as seconds
    since 1970) is not the ISO 8601 text the query parameter documents."""
    if isinstance(value, str) and not _ISO_TIME.match(value):
        raise ValueError("expected an ISO 8601 date-time such as 2026-01-31T12:00:00Z")
    return value


_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}")

IsoTime = Annotated[AwareDatetime, BeforeValidator(_iso_only)]
"""A query parameter's time: ISO 8601 text with its UTC offset (a naive time means different
moments to different workers)."""


def native_router(served: Served) -> APIRouter:
    exposure, binding = served.exposure, served.binding
    deck = exposure.deck
    router = APIRouter(prefix=served.prefix, dependencies=[Depends(served.ready)])
    Caller = Annotated[Principal, Depends(served.authenticate)]

    def location(run_id: str) -> str:
        return f"{served.prefix}/runs/{run_id}"

    async def view(run_id: str, namespace: str | None, *, pending: bool = False) -> RunView:
        record = await exposure.record(run_id, namespace=namespace)
        interrupts: list[InterruptView] = []
        if pending and record.status is RunStatus.WAITING_ANSWER:
            state = await exposure.service.state(run_id)
            interrupts = [InterruptView.of(interrupt) for interrupt in state.interrupts]
        ending = None
        if pending and record.status in (RunStatus.COMPLETED, RunStatus.FAILED):
            # A finished run's result is in its last event: read it, so a client polling
            # GET /runs/{id} needs no event stream to get what the run produced.
            ending = (await exposure.service.logged_ending(run_id)).payload
        return RunView.of(record, interrupts, ending=ending)

    def scoped(caller: Principal, requested: str | None, run_id: str) -> str | None:
        namespace = caller.namespace(requested)
        caller.require_run(namespace, run_id)
        return namespace

    # ------------------------------------------------------------------------------- health

    @router.get(
        "/health",
        response_model=HealthView,
        responses={503: {"model": StatusBody, "description": "starting or draining"}},
        summary="Whether the deck is serving, and what it serves",
    )
    async def health(request: Request) -> HealthView:
        """``ok`` with the agent, workflow and skill names, the loaded plugins and the event
        store's answer to a one-run listing (``store.status`` ``failing`` says the store, not the
        server, is unwell). With API keys configured, all that is shown only to a request
        carrying a valid key or a console session (a load balancer's probe needs neither, and
        its probe costs no store read)."""
        if not exposure.accepting:
            raise unavailable(exposure)
        if binding.api_keys is not None and not key_holder(request):
            return HealthView(status="ok")
        names = exposure.catalog()
        return HealthView(
            status="ok",
            agents=names["agents"],
            workflows=names["workflows"],
            skills=names["skills"],
            plugins=loaded_plugins(exposure),
            store=await store_health(exposure),
        )

    def key_holder(request: Request) -> bool:
        keys = binding.api_keys
        if keys is not None and recognised(keys, request) is not None:
            return True
        return binding.console and served.sessions.of(request) is not None

    @router.get(
        "/metrics",
        response_class=PlainTextResponse,
        responses={
            200: {"content": {"text/plain": {}}, "description": "Prometheus text format"},
            **errors(401, 503),
        },
        summary="Run metrics, in the Prometheus text exposition format",
    )
    async def metrics(caller: Caller) -> PlainTextResponse:
        """Runs started, ended and parked by name and status, run durations, model calls and
        tokens by model, and events dropped by slow observers — counted in this process, or in
        every worker process when ``PROMETHEUS_MULTIPROC_DIR`` is set. With API keys
        configured, a valid key is required (the names are the catalog's)."""
        return PlainTextResponse(
            render_metrics(deck.metrics), media_type="text/plain; version=0.0.4; charset=utf-8"
        )

    # ------------------------------------------------------------------------------- runs

    @router.post(
        "/runs",
        status_code=201,
        response_model=RunView,
        responses={
            200: {"model": RunView, "description": "if_exists=return: the run holding the key"},
            **errors(401, 403, 404, 409, 413, 422, 500, 503),
        },
        summary="Start an agent or workflow run",
    )
    async def start_run(
        body: StartRunRequest, request: Request, response: Response, caller: Caller
    ) -> RunView:
        """Starts the run and returns at once (``201``, ``Location`` names it); follow it at
        ``GET /runs/{id}/events``. 404 lists the names the deck serves; 409 carries the busy
        session's holder or the key's holder; 422 names the field that was wrong. A W3C
        ``traceparent`` (and ``tracestate``) header makes the run's trace a child of the
        caller's span."""
        served.require_accepting()
        namespace = caller.namespace(body.namespace)
        caller.require(namespace)
        invocable = exposure.resolve(body.name)
        context = await served.context(
            request, "start", name=invocable.name, namespace=namespace, session_id=body.session_id
        )
        try:
            run = await deck.runs.start(
                invocable.name,
                body.input,
                context=context,
                session_id=body.session_id,
                namespace=namespace,
                key=body.key,
                trace_context=trace_context(request),
            )
        except InvalidInputError as bad:
            # A field of the request itself (a session id no store can hold) is named as it is;
            # anything else is inside the input (a workflow parameter): ``input.<parameter>``.
            prefix = None if bad.field in _START_FIELDS else "input"
            raise problem_for(bad, field_prefix=prefix) from None
        except DuplicateKeyError as clash:
            if body.if_exists != "return":
                raise
            response.status_code = 200
            response.headers["Location"] = location(clash.holder_run_id)
            return await view(clash.holder_run_id, namespace)
        except RunStateError:
            if not exposure.accepting:  # the drain began while this request was on its way
                raise unavailable(exposure) from None
            raise
        response.headers["Location"] = location(run.id)
        return await view(run.id, namespace)

    @router.get(
        "/runs",
        response_model=RunPageView,
        responses=errors(401, 403, 422, 503),
        summary="List a namespace's runs, oldest first (or newest first)",
    )
    async def list_runs(
        caller: Caller,
        namespace: NamespaceQuery = None,
        status: Annotated[RunStatus | None, Query(description="only runs in this status")] = None,
        session_id: Annotated[str | None, Query(min_length=1, max_length=MAX_IDENTIFIER)] = None,
        key: Annotated[str | None, Query(min_length=1, max_length=MAX_IDENTIFIER)] = None,
        name: Annotated[
            str | None,
            Query(min_length=1, max_length=MAX_IDENTIFIER, description="only this agent/workflow"),
        ] = None,
        parent_run_id: Annotated[
            str | None,
            Query(min_length=1, max_length=MAX_IDENTIFIER, description="only this run's children"),
        ] = None,
        created_after: Annotated[
            IsoTime | None,
            Query(description="only runs started after this time (ISO 8601, with its offset)"),
        ] = None,
        created_before: Annotated[
            IsoTime | None,
            Query(description="only runs started before this time (ISO 8601, with its offset)"),
        ] = None,
        order: Annotated[
            Literal["oldest", "newest"], Query(description="oldest first (default) or newest")
        ] = "oldest",
        limit: Annotated[int, Query(ge=1, le=500)] = 100,
        cursor: Annotated[
            str | None, Query(min_length=1, max_length=1000, description="a next_cursor")
        ] = None,
    ) -> RunPageView:
        """A cursor continues the listing in the order of the page that returned it."""
        resolved = caller.namespace(namespace)
        caller.require(resolved)
        try:
            page = await exposure.service.list_runs(
                RunQuery(
                    namespace=resolved,
                    status=status,
                    session_id=session_id,
                    key=key,
                    name=name,
                    parent_run_id=parent_run_id,
                    created_after=created_after,
                    created_before=created_before,
                    newest_first=order == "newest",
                    limit=limit,
                    cursor=cursor,
                )
            )
        except InvalidInputError as bad:
            raise problem_for(bad) from None
        return RunPageView(
            runs=[RunView.of(record) for record in page.runs], next_cursor=page.next_cursor
        )

    @router.get(
        "/runs/{run_id}",
        response_model=RunView,
        responses=errors(401, 404, 422, 503),
        summary="One run: status, identity and its open questions",
    )
    async def get_run(
        run_id: RunIdPath, caller: Caller, namespace: NamespaceQuery = None
    ) -> RunView:
        return await view(run_id, scoped(caller, namespace, run_id), pending=True)

    @router.get(
        "/runs/{run_id}/events",
        response_class=EventSourceResponse,
        responses={
            200: {
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
                "description": "frames `id: <seq>`, `event: <kind>`, `data: <event JSON>`",
            },
            204: {"description": "the run has ended and nothing is left after the given seq"},
            **errors(401, 404, 422, 503),
        },
        summary="The run's events as Server-Sent Events, resumable",
    )
    async def run_events(
        run_id: RunIdPath,
        caller: Caller,
        namespace: NamespaceQuery = None,
        from_seq: Annotated[
            int, Query(ge=0, le=2**53, description="first seq to send (inclusive)")
        ] = 0,
        follow: Annotated[
            bool, Query(description="tail live until the run ends or parks; false: a snapshot")
        ] = True,
        last_event_id: Annotated[
            str | None,
            Header(
                alias="Last-Event-ID",
                pattern=r"^[0-9]{1,15}$",
                description="resume after this seq (exclusive); wins over from_seq",
            ),
        ] = None,
    ) -> Response:
        """Frames ``id: <seq>``, ``event: <kind>``, ``data: <event JSON>``; comment lines as
        heartbeats. Reconnecting with ``Last-Event-ID`` sends exactly the events after it."""
        resolved = scoped(caller, namespace, run_id)
        start = from_seq if last_event_id is None else int(last_event_id) + 1
        record = await exposure.record(run_id, namespace=resolved)
        if follow and record.status in TERMINAL and start > record.last_seq:
            return Response(status_code=204)
        run = await exposure.run(run_id, namespace=resolved)
        frames = run_event_frames(
            exposure, run, from_seq=start, follow=follow, kinds=binding.public_kinds
        )
        return sse_response(frames, heartbeat=binding.heartbeat)

    # ------------------------------------------------------------------------------- control

    @router.post(
        "/runs/{run_id}/answer",
        response_model=RunView,
        responses=errors(401, 404, 409, 413, 422, 500, 503),
        summary="Answer the question a run waits on",
    )
    async def answer_run(
        run_id: RunIdPath,
        body: AnswerRequest,
        request: Request,
        caller: Caller,
        namespace: NamespaceQuery = None,
    ) -> RunView:
        """200 only when this answer is the one recorded (or the same answer was recorded
        before: a retry). 422 when it does not fit the question (the reason names what would);
        409 when it cannot be recorded, its body's ``reason`` saying why: ``answered`` (another
        caller answered first; ``origin`` says who), ``cancelled``, ``finished``, or ``status``
        (running, paused, or a pause pending)."""
        served.require_accepting()
        resolved = scoped(caller, namespace, run_id)
        record = await exposure.record(run_id, namespace=resolved)
        context = await served.context(
            request, "answer", name=record.name, namespace=resolved, run_id=run_id
        )
        # One read of the log decides the answer and reports it: the view is the run as the
        # answer left it, with no further read of its record or log. (A context this process
        # holds for the run wins: `served.context` gives none then, and the runtime uses it.)
        answered = await exposure.service.answer(
            run_id, body.value, interrupt_id=body.interrupt_id, context=context
        )
        state = answered.after
        after = recorded(record, state)
        interrupts: list[InterruptView] = []
        if after.status is RunStatus.WAITING_ANSWER:
            interrupts = [InterruptView.of(interrupt) for interrupt in state.interrupts]
        return RunView.of(after, interrupts)

    @router.post(
        "/runs/{run_id}/pause",
        status_code=202,
        response_model=RunView,
        responses=errors(401, 404, 409, 413, 422, 503),
        summary="Ask a run to pause at its next safe point",
    )
    async def pause_run(
        run_id: RunIdPath,
        caller: Caller,
        namespace: NamespaceQuery = None,
        body: Annotated[ControlRequest | None, Body()] = None,
    ) -> RunView:
        """Records the request and returns at once (202): the run stops at its next safe point,
        which nobody can know at the moment of asking. 409 (``reason``: ``finished`` or
        ``cancelled``) for a run that has already finished."""
        resolved = scoped(caller, namespace, run_id)
        run = await exposure.run(run_id, namespace=resolved)
        await run.pause(body.reason if body is not None else None)
        return await view(run_id, resolved)

    @router.post(
        "/runs/{run_id}/cancel",
        status_code=202,
        response_model=RunView,
        responses=errors(401, 404, 409, 413, 422, 503),
        summary="Ask a run to stop for good",
    )
    async def cancel_run(
        run_id: RunIdPath,
        caller: Caller,
        namespace: NamespaceQuery = None,
        body: Annotated[ControlRequest | None, Body()] = None,
    ) -> RunView:
        """A suspended run ends at once; a running one at its next safe point. Cascades to the
        run's children. A cancelled run is left as it is (202); one that completed or failed is
        refused with 409 (``reason``: ``finished``)."""
        resolved = scoped(caller, namespace, run_id)
        run = await exposure.run(run_id, namespace=resolved)
        await run.cancel(body.reason if body is not None else None)
        return await view(run_id, resolved)

    @router.post(
        "/runs/{run_id}/resume",
        response_model=RunView,
        responses=errors(401, 404, 409, 413, 422, 500, 503),
        summary="Continue a paused run",
    )
    async def resume_run(
        run_id: RunIdPath,
        request: Request,
        caller: Caller,
        namespace: NamespaceQuery = None,
        body: Annotated[ControlRequest | None, Body()] = None,
    ) -> RunView:
        """409 for a run waiting for an answer (answer it instead) and for one that has
        finished (``reason``: ``finished`` or ``cancelled``); a running run is left as it is."""
        del body  # a resume takes no reason; the body is accepted for symmetry
        served.require_accepting()
        resolved = scoped(caller, namespace, run_id)
        record = await exposure.record(run_id, namespace=resolved)
        context = await served.context(
            request, "resume", name=record.name, namespace=resolved, run_id=run_id
        )
        run = await exposure.run(run_id, namespace=resolved, context=context)
        await run.resume()
        return await view(run_id, resolved, pending=True)

    return router
