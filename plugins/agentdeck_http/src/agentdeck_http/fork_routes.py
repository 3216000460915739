"""The routes that start a run from another: ``POST /runs/{id}/retry`` and ``/runs/{id}/fork``.

Thin shells over :meth:`Runs.retry <agentdeck.deck.runs.Runs.retry>` and :meth:`Runs.fork
<agentdeck.deck.runs.Runs.fork>`, kept beside the native routes rather than among them: they
start a run (``201`` with a ``Location``, like ``POST /runs``) but address an existing one.
The new run's ``run.started`` names its origin (``retry_of``, ``forked_from``).
"""

# No ``from __future__ import annotations``: FastAPI reads these signatures at runtime.

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from agentdeck.deck.runs import Run
from agentdeck_http.security import Principal
from agentdeck_http.served import NamespaceQuery, RunIdPath, Served, errors
from agentdeck_http.wire import ForkRequest, RunView

__all__ = ["fork_router"]


def fork_router(served: Served) -> APIRouter:
    exposure = served.exposure
    deck = exposure.deck
    router = APIRouter(prefix=served.prefix, dependencies=[Depends(served.ready)])
    Caller = Annotated[Principal, Depends(served.authenticate)]

    def scoped(caller: Principal, requested: str | None, run_id: str) -> str | None:
        namespace = caller.namespace(requested)
        caller.require_run(namespace, run_id)
        return namespace

    async def created(run: Run, response: Response, namespace: str | None) -> RunView:
        response.headers["Location"] = f"{served.prefix}/runs/{run.id}"
        return RunView.of(await exposure.record(run.id, namespace=namespace))

    @router.post(
        "/runs/{run_id}/retry",
        status_code=201,
        response_model=RunView,
        responses=errors(401, 404, 409, 422, 500, 503),
        summary="Retry a failed or cancelled run as a new run",
    )
    async def retry_run(
        run_id: RunIdPath,
        request: Request,
        response: Response,
        caller: Caller,
        namespace: NamespaceQuery = None,
    ) -> RunView:
        """Starts a new run linked to this one (``retry_of``) and returns it at once (``201``,
        ``Location`` names it). A native workflow or a LangGraph graph goes on from where the
        run stopped, reusing what it completed; any other engine starts it again with the same
        input. 409 for a run that is not failed or cancelled (``hint`` names the call that
        fits)."""
        served.require_accepting()
        resolved = scoped(caller, namespace, run_id)
        record = await exposure.record(run_id, namespace=resolved)
        context = await served.context(
            request, "retry", name=record.name, namespace=resolved, session_id=record.session_id
        )
        run = await deck.runs.retry(run_id, namespace=resolved, context=context)
        return await created(run, response, resolved)

    @router.post(
        "/runs/{run_id}/fork",
        status_code=201,
        response_model=RunView,
        responses=errors(401, 404, 409, 413, 422, 500, 503),
        summary="Fork a run from a recorded step as a new run",
    )
    async def fork_run(
        run_id: RunIdPath,
        body: ForkRequest,
        request: Request,
        response: Response,
        caller: Caller,
        namespace: NamespaceQuery = None,
    ) -> RunView:
        """Starts a new run from the recorded point ``at`` of this one (``forked_from``) and
        returns it at once (``201``). 409 ``fork_unsupported`` when the run's engine cannot
        fork (retry it instead); 422 (``field: at``) for a point the run's log does not
        hold."""
        served.require_accepting()
        resolved = scoped(caller, namespace, run_id)
        record = await exposure.record(run_id, namespace=resolved)
        context = await served.context(
            request, "fork", name=record.name, namespace=resolved, session_id=record.session_id
        )
        run = await deck.runs.fork(run_id, at=body.at, namespace=resolved, context=context)
        return await created(run, response, resolved)

    return router
