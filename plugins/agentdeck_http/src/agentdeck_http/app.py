"""Build the FastAPI app of one ``Native.http()`` binding for one exposure.

Middleware, outermost first: the catch-all (documented 500), the origin check and CORS (when
origins are configured), the body cap. Errors become responses through one table
(:mod:`agentdeck_http.problems`). The OpenAPI document lives at ``<path>/openapi.json``.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware

from agentdeck.deck.serving import Exposure
from agentdeck.errors import AgentDeckError
from agentdeck_http import __version__
from agentdeck_http.binding import Native
from agentdeck_http.compat import compat_router
from agentdeck_http.console.routes import console_router
from agentdeck_http.feed_routes import feed_router
from agentdeck_http.fork_routes import fork_router
from agentdeck_http.metrics import attach
from agentdeck_http.problems import (
    HttpProblem,
    handle_agentdeck,
    handle_http,
    handle_problem,
    handle_validation,
)
from agentdeck_http.routes import native_router
from agentdeck_http.security import BodyLimit, CatchAll, OriginGuard
from agentdeck_http.served import Served

__all__ = ["build_app"]

_DESCRIPTION = """AgentDeck's native wire protocol: start, read, stream, answer and control runs.

Streams are Server-Sent Events: `id: <seq>`, `event: <kind>`, `data: <event JSON>`, resumable
with `Last-Event-ID` (exclusive) or `from_seq` (inclusive). Errors are JSON with a `detail`; a 500
is exactly `{"detail": "internal error"}`. Before the deck is open every route answers
`503 {"status": "starting"}`.
"""


def build_app(binding: Native, exposure: Exposure) -> FastAPI:
    path = binding.mount_path
    middleware = [Middleware(CatchAll)]
    if binding.allowed_origins is not None:
        middleware += [
            Middleware(OriginGuard, allowed=binding.allowed_origins),
            Middleware(
                CORSMiddleware,
                allow_origins=sorted(binding.allowed_origins),
                allow_methods=["GET", "POST"],
                allow_headers=[
                    "Authorization",
                    "X-API-Key",
                    "Content-Type",
                    "Last-Event-ID",
                    "traceparent",
                    "tracestate",
                ],
                expose_headers=["Location"],
            ),
        ]
    middleware.append(Middleware(BodyLimit, limit=binding.max_body_bytes))
    app = FastAPI(
        title=binding.title,
        version=__version__,
        description=_DESCRIPTION,
        openapi_url=f"{path}/openapi.json",
        docs_url=f"{path}/docs",
        redoc_url=None,
        middleware=middleware,
    )
    app.add_exception_handler(HttpProblem, handle_problem)
    app.add_exception_handler(RequestValidationError, handle_validation)
    app.add_exception_handler(AgentDeckError, handle_agentdeck)
    app.add_exception_handler(HTTPException, handle_http)
    attach(exposure.deck.metrics)  # every worker's counts in one scrape, when asked for
    served = Served(binding, exposure)
    # The feed first: its /runs/changes must win over the native /runs/{run_id}.
    routers = [
        feed_router(served),
        native_router(served),
        fork_router(served),
        compat_router(served),
    ]
    if binding.console:
        routers.append(console_router(served))
    for router in routers:
        app.include_router(router)
    _parameters_are_never_null(app)
    # Every method each path answers, for a 405's Allow header (see problems.handle_http).
    app.state.route_methods = [
        (route.path_regex, frozenset(route.methods or ()))
        for router in routers
        for route in router.routes
        if isinstance(route, APIRoute)
    ]
    return app


def _parameters_are_never_null(app: FastAPI) -> None:
    """Document an optional query or header parameter as its type, not ``anyOf [type, null]``.

    HTTP has no null for a parameter — an optional one is simply absent (``required: false``) —
    and a client generated from ``anyOf [..., null]`` would send the string ``"null"``.
    """
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        document = generate()
        for operations in document.get("paths", {}).values():
            for operation in operations.values():
                for parameter in operation.get("parameters", ()):
                    schema = parameter.get("schema", {})
                    alternatives = schema.get("anyOf")
                    if not alternatives:
                        continue
                    kept = [a for a in alternatives if a.get("type") != "null"]
                    if len(kept) == 1:
                        del schema["anyOf"]
                        schema.update(kept[0])
        return document

    app.openapi = openapi  # type: ignore[method-assign]
