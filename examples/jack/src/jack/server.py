"""Jack's own streaming route: ``POST /ask`` answers with Server-Sent Events over ``deck.stream()``.

Jack does not serve through ``Deck.asgi()`` because a run started there carries no context
(there is no wire form for a live ``DocsCorpus``), and because a public endpoint needs limits the
generic surface does not impose. The wire is still the event log itself: each frame is one
canonical event (``id: <seq>``, ``event: <kind>``, ``data: <event JSON>``), with no translation.

What stands between a public hostname and someone else's model bill, in the order a request
meets it:

1. **An origin check** (``JACK_ORIGINS``): a browser request from another site is refused. It
   stops embedding, not a determined client; it is not authentication.
2. **A question size limit** (``JACK_MAX_QUESTION_CHARS``).
3. **A per-client quota** (``JACK_REQUESTS_PER_WINDOW`` per ``JACK_WINDOW_SECONDS``): 429 with
   ``Retry-After``.
4. **Conversations owned by their client**, each with a turn limit (``JACK_TURNS_PER_SESSION``).
5. **A token ceiling per question** (``JACK_TOKENS_PER_TURN``, ``JACK_MODEL_CALLS_PER_TURN``): the
   core's :class:`~agentdeck.Budget`, so a run over it ends ``run.failed(budget_exceeded)`` in its
   own log, and the client sees that event.
6. **An event allowlist** (:data:`PUBLIC_KINDS`): ``tool.call.completed`` never leaves the
   server, since its preview is a tool's output verbatim; usage, control and engine bookkeeping
   stay in the log too.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from agentdeck import Clock, Deck, Event
from agentdeck.errors import NotFoundError, SessionBusyError
from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from jack.agent import AGENT
from jack.corpus import DocsCorpus
from jack.limits import Conversations, QuotaExceededError, RequestQuota, TurnsExhaustedError
from jack.settings import JackSettings

__all__ = ["PUBLIC_KINDS", "SESSION_HEADER", "Question", "client_address", "create_app"]

PUBLIC_KINDS = frozenset(
    {
        "run.started",
        "tool.call.started",
        "text.delta",
        "run.completed",
        "run.failed",
        "run.cancelled",
    }
)
"""The event kinds a client receives: enough to draw the run (its start, each tool it calls,
the answer as it is written) and to know how it ended. Everything else stays in the log."""

SESSION_HEADER = "X-Jack-Session"
"""Response header carrying the conversation id; send it back as ``session_id`` to follow up."""

ClientKey = Callable[[Request], str]


class Question(BaseModel):
    """The body of ``POST /ask``."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1)
    session_id: str | None = None
    """The id from a previous answer's ``X-Jack-Session`` header, to ask a follow-up."""


def client_address(request: Request) -> str:
    """The quota key: the client's address as the server saw it.

    Behind a reverse proxy, run uvicorn with ``--proxy-headers`` and ``--forwarded-allow-ips``
    set to the proxy, so this is the visitor's address and not the proxy's.
    """
    return request.client.host if request.client is not None else "unknown"


def _problem(
    status: int, kind: str, detail: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"type": kind, "status": status, "detail": detail},
        status_code=status,
        headers=headers,
        media_type="application/problem+json",
    )


def _frame(event: Event) -> str:
    return f"id: {event.seq}\nevent: {event.kind}\ndata: {event.to_json()}\n\n"


async def _public_frames(first: Event, events: AsyncIterator[Event]) -> AsyncIterator[str]:
    """The allowed events as SSE frames. Closing this generator (the client went away) closes
    ``deck.stream()``, which cancels the run rather than leaving it spending tokens."""
    try:
        if first.kind in PUBLIC_KINDS:
            yield _frame(first)
        async for event in events:
            if event.kind in PUBLIC_KINDS:
                yield _frame(event)
    finally:
        await events.aclose()  # type: ignore[attr-defined]


def create_app(
    deck: Deck,
    corpus: DocsCorpus,
    settings: JackSettings,
    *,
    clock: Clock | None = None,
    client_key: ClientKey = client_address,
    before_turn: Callable[[str], None] | None = None,
) -> FastAPI:
    """Jack's ASGI application over ``deck``.

    Its lifespan opens the deck and closes it; a deck the caller opened is left to the caller.
    ``before_turn`` is called with each accepted question before its run starts (the offline
    stand-in model scripts itself there).
    """
    quota = RequestQuota(settings.requests_per_window, settings.window_seconds, clock=clock)
    conversations = Conversations(settings.turns_per_session)
    budget = settings.budget()
    allowed_origins = frozenset(settings.origins)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if deck.is_open:
            yield
            return
        async with deck:
            yield

    app = FastAPI(title="Jack", summary="Ask the AgentDeck documentation.", lifespan=lifespan)
    if allowed_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=sorted(allowed_origins),
            allow_methods=["POST"],
            allow_headers=["content-type"],
            expose_headers=[SESSION_HEADER],
        )

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "pages": len(corpus)}

    @app.post(
        "/ask",
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def ask(body: Question, request: Request) -> Response:
        """Ask Jack a question; the answer streams as the run's allowed events."""
        origin = request.headers.get("origin")
        if origin is not None and origin not in allowed_origins:
            return _problem(403, "origin-refused", f"origin {origin!r} may not call this route")
        question = body.question.strip()
        if not question or len(question) > settings.max_question_chars:
            return _problem(
                422,
                "question-size",
                f"a question is 1 to {settings.max_question_chars} characters "
                f"(this one has {len(question)})",
            )
        client = client_key(request)
        try:
            quota.charge(client)
        except QuotaExceededError as over:
            headers = {"Retry-After": str(over.retry_after)}
            return _problem(429, "quota-exceeded", str(over), headers)

        session_id = body.session_id
        try:
            if session_id is None:
                session_id = conversations.open(client)
            else:
                conversations.check(session_id, client)
        except NotFoundError as unknown:
            return _problem(404, "unknown-session", str(unknown))
        except TurnsExhaustedError as exhausted:
            return _problem(429, "session-exhausted", str(exhausted))

        if before_turn is not None:
            before_turn(question)
        events = deck.stream(AGENT, question, context=corpus, session_id=session_id, budget=budget)
        try:
            first = await anext(events)
        except SessionBusyError:
            return _problem(
                409, "session-busy", "this conversation is still answering; wait for the answer"
            )
        conversations.count_turn(session_id)
        return StreamingResponse(
            _public_frames(first, events),
            media_type="text/event-stream",
            headers={SESSION_HEADER: session_id, "Cache-Control": "no-store"},
        )

    return app


def parse_frames(body: str) -> list[dict[str, Any]]:
    """The events of an SSE body this route wrote (for clients and tests written in Python)."""
    events = []
    for frame in body.split("\n\n"):
        data = [line[len("data: ") :] for line in frame.splitlines() if line.startswith("data: ")]
        if data:
            events.append(json.loads("\n".join(data)))
    return events
