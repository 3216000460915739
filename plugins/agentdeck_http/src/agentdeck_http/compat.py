"""The 4.x routes, kept for clients written against them.

* ``POST /agents/{name}/chat`` with exactly ``{"session_id", "message"}``: 200 ``{"output": ...}``
  once the turn ends; with ``?stream=true``, SSE ``data: {"delta": "..."}`` frames, then
  ``event: done`` (``{"output", "usage"}``) or ``event: error`` (``{"type", ...}``: the failure's
  exception type, never its text).
* ``POST /workflows/{name}`` with the workflow's input as the body: 200 ``{"output": ...}``.

Both wait for the run to end. A run that parks on a question answers with the interrupt as
``output`` (``{"type": "interrupt", "payload", "id", "interrupt_id", ...}``; answer it at
``POST /runs/{id}/answer``). An engine failure is the documented 500 ``{"detail": "internal
error"}``, logged in full and never sent.
"""

# No ``from __future__ import annotations``: FastAPI reads these signatures at runtime, and the
# dependency aliases (``Caller``) are local to the router builder, out of reach of string
# annotations.

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query, Request, Response
from fastapi.encoders import jsonable_encoder
from sse_starlette import ServerSentEvent

from agentdeck.deck.runs import Run
from agentdeck.errors import InvalidInputError, NotFoundError, RunFailedError, RunSuspendedError
from agentdeck.model.payloads import (
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunPaused,
    TextDelta,
    Usage,
    UsageReported,
)
from agentdeck.model.results import InterruptResult, TurnResult, agent_output
from agentdeck.model.status import OpenInterrupt
from agentdeck.vocabulary import RunStatus
from agentdeck_http.problems import internal_error, problem_for, unavailable
from agentdeck_http.security import Principal
from agentdeck_http.served import NamespaceQuery, Served, errors, trace_context
from agentdeck_http.streams import data_frame, follow_until_closing, sse_response
from agentdeck_http.wire import MAX_IDENTIFIER, ChatReply, ChatRequest, Usage4x

__all__ = ["compat_router"]


def compat_router(served: Served) -> APIRouter:
    exposure = served.exposure
    deck = exposure.deck
    router = APIRouter(prefix=served.prefix, dependencies=[Depends(served.ready)])
    Caller = Annotated[Principal, Depends(served.authenticate)]

    def resolve(name: str, kind: str) -> str:
        names = exposure.catalog()[f"{kind}s"]
        try:
            invocable = exposure.resolve(name)
        except NotFoundError:
            invocable = None
        if invocable is None or invocable.kind != kind:
            raise NotFoundError(
                f"no {kind} named '{name}'; the deck serves: {', '.join(names) or 'none'}",
                what=kind,
                name=name,
                available=names,
            )
        return invocable.name

    async def outcome(run: Run) -> Any:
        try:
            result = await run.result()
        except RunSuspendedError as parked:
            if parked.status is RunStatus.WAITING_ANSWER and isinstance(
                parked.pending, InterruptResult
            ):
                return dict(parked.pending)
            if not exposure.accepting:
                raise unavailable(exposure, run_id=run.id) from None
            raise problem_for(parked) from None
        except RunFailedError as failed:
            if failed.status is RunStatus.CANCELLED:
                if not exposure.accepting:
                    raise unavailable(exposure, run_id=run.id) from None
                raise served.refuse(409, str(failed), "cancelled", run_id=run.id) from None
            raise internal_error(f"run {run.id} failed: {failed}") from None
        if isinstance(result, TurnResult):
            return jsonable_encoder(result.output)
        return jsonable_encoder(result)

    async def start(
        request: Request,
        caller: Principal,
        operation: str,
        name: str,
        input: Any,
        *,
        namespace: str | None,
        session_id: str | None,
    ) -> Run:
        served.require_accepting()
        resolved = caller.namespace(namespace)
        caller.require(resolved)
        context = await served.context(
            request,
            "chat" if operation == "chat" else "workflow",
            name=name,
            namespace=resolved,
            session_id=session_id,
        )
        try:
            return await deck.runs.start(
                name,
                input,
                context=context,
                session_id=session_id,
                namespace=resolved,
                trace_context=trace_context(request),
            )
        except InvalidInputError as bad:
            field = "message" if operation == "chat" else "body"
            raise problem_for(bad, field_prefix=field) from None

    @router.post(
        "/agents/{name}/chat",
        response_model=ChatReply,
        responses={
            200: {
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
                "description": "with ?stream=true: delta frames, then `done` or `error`",
            },
            **errors(401, 403, 404, 409, 413, 422, 500, 503),
        },
        summary="4.x: one agent turn on a session",
    )
    async def chat(
        name: str,
        body: ChatRequest,
        request: Request,
        caller: Caller,
        stream: Annotated[bool, Query(description="stream the reply as SSE")] = False,
        namespace: NamespaceQuery = None,
    ) -> Any:
        agent = resolve(name, "agent")
        run = await start(
            request,
            caller,
            "chat",
            agent,
            body.message,
            namespace=namespace,
            session_id=body.session_id,
        )
        if stream:
            return sse_response(chat_frames(run), heartbeat=served.binding.heartbeat)
        return ChatReply(output=await outcome(run))

    @router.post(
        "/workflows/{name}",
        response_model=ChatReply,
        responses=errors(401, 403, 404, 409, 413, 422, 500, 503),
        summary="4.x: run a workflow to its end (or its first question)",
    )
    async def run_workflow(
        name: str,
        request: Request,
        response: Response,
        caller: Caller,
        input: Annotated[Any, Body(description="the workflow's input (its initial state)")] = None,
        session_id: Annotated[str | None, Query(min_length=1, max_length=MAX_IDENTIFIER)] = None,
        namespace: NamespaceQuery = None,
    ) -> ChatReply:
        del response
        workflow = resolve(name, "workflow")
        run = await start(
            request,
            caller,
            "workflow",
            workflow,
            input,
            namespace=namespace,
            session_id=session_id,
        )
        return ChatReply(output=await outcome(run))

    async def chat_frames(run: Run) -> AsyncIterator[ServerSentEvent]:
        used = Usage()
        async for event in follow_until_closing(exposure, run.events(follow=True)):
            payload = event.payload
            if isinstance(payload, TextDelta):
                yield data_frame({"delta": payload.text})
            elif isinstance(payload, UsageReported):
                used = used + payload.usage
            elif isinstance(payload, RunCompleted):
                output = jsonable_encoder(agent_output(payload))
                yield data_frame({"output": output, "usage": _usage(payload.usage)}, event="done")
                return
            elif isinstance(payload, RunInterrupted):
                interrupt = InterruptResult(
                    run_id=run.id,
                    interrupt=OpenInterrupt(
                        interrupt_id=payload.interrupt_id,
                        seq=event.seq,
                        payload=payload.payload,
                        reason=str(payload.reason),
                    ),
                )
                yield data_frame({"output": dict(interrupt), "usage": _usage(used)}, event="done")
                return
            elif isinstance(payload, RunFailed):
                yield data_frame(
                    {
                        "type": payload.message,
                        "error_code": str(payload.error_code),
                        "run_id": run.id,
                    },
                    event="error",
                )
                return
            elif isinstance(payload, RunCancelled):
                yield data_frame({"type": "RunCancelled", "run_id": run.id}, event="error")
                return
            elif isinstance(payload, RunPaused):
                yield data_frame(
                    {"type": "RunSuspendedError", "status": "paused", "run_id": run.id},
                    event="error",
                )
                return
        yield data_frame({"type": "ServerDraining", "run_id": run.id}, event="error")

    return router


def _usage(usage: Usage) -> dict[str, int]:
    return Usage4x(
        requests=usage.requests,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
    ).model_dump()
