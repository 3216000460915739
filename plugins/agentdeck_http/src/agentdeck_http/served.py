"""What every route shares: the binding's options, the exposure, and the checks they imply."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Path, Query
from starlette.requests import Request

from agentdeck.deck.serving import Exposure, ExposureState
from agentdeck.observing.tracing.context import TRACEPARENT, TRACESTATE, parse_traceparent
from agentdeck_http.binding import Native
from agentdeck_http.console.sessions import ConsoleSessions
from agentdeck_http.context import Operation, ServedCall, make_context
from agentdeck_http.problems import HttpProblem, unavailable
from agentdeck_http.security import Principal, authenticator
from agentdeck_http.wire import MAX_IDENTIFIER, ErrorBody, StatusBody

__all__ = ["ERRORS", "NamespaceQuery", "RunIdPath", "Served", "errors", "trace_context"]

NamespaceQuery = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=MAX_IDENTIFIER,
        description="the run's namespace (default: the API key's first namespace)",
    ),
]
"""``?namespace=``: which namespace a request addresses."""

RunIdPath = Annotated[str, Path(max_length=MAX_IDENTIFIER, description="the run's id")]


def _error(description: str) -> dict[str, Any]:
    return {"model": ErrorBody, "description": description}


ERRORS: dict[int | str, dict[str, Any]] = {
    401: _error("no API key, or an unknown one (only when keys are configured)"),
    403: _error("the API key does not grant the namespace, or the Origin is not allowed"),
    404: _error("no such agent, workflow or run (in this namespace)"),
    409: _error("the session is busy, the key is claimed, or the run's state refuses this"),
    413: _error("the request body is over the size limit"),
    422: _error("the request does not fit: `field` names what was wrong"),
    500: {
        "model": ErrorBody,
        "description": 'an engine failure: exactly {"detail": "internal error"}',
    },
    503: {"model": StatusBody, "description": "the deck is starting, or the server is draining"},
}
"""The error responses the OpenAPI document lists; routes pick theirs."""


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {code: ERRORS[code] for code in codes}


def trace_context(request: Request) -> dict[str, str] | None:
    """The request's W3C trace context (``traceparent``, ``tracestate``), for the run it starts
    to be traced under the caller's span. A header that is not a valid ``traceparent`` is
    ignored, as the W3C recommendation says, rather than failing the request."""
    parent = parse_traceparent(request.headers.get(TRACEPARENT), request.headers.get(TRACESTATE))
    if parent is None:
        return None
    context = {TRACEPARENT: parent.header()}
    if parent.trace_state is not None:
        context[TRACESTATE] = parent.trace_state
    return context


@dataclass(slots=True)
class Served:
    """The binding's options and the exposure, as the routes use them."""

    binding: Native
    exposure: Exposure
    authenticate: Callable[..., Awaitable[Principal]] = field(init=False)
    sessions: ConsoleSessions = field(init=False)
    """The console's logins (used only when the console is served and keys are configured)."""

    def __post_init__(self) -> None:
        self.sessions = ConsoleSessions()
        self.authenticate = authenticator(
            self.binding.api_keys, self.sessions if self.binding.console else None
        )

    @property
    def prefix(self) -> str:
        return self.binding.mount_path

    async def ready(self) -> None:
        """Dependency of every route: 503 until the deck is open, and after it is closed."""
        if self.exposure.state in (ExposureState.STARTING, ExposureState.STOPPED):
            raise unavailable(self.exposure)

    def require_accepting(self) -> None:
        """Refuse (503 draining) what would start playing a run while the server drains."""
        if not self.exposure.accepting:
            raise unavailable(self.exposure)

    async def context(
        self,
        request: Request,
        operation: Operation,
        *,
        name: str,
        namespace: str | None,
        session_id: str | None = None,
        run_id: str | None = None,
    ) -> Any:
        """The ``context_factory``'s value for this request (``None`` without a factory, and
        for a continuation when this process still holds the run's own context)."""
        if run_id is not None and self.exposure.service.context_of(run_id) is not None:
            return None
        return await make_context(
            self.binding.context_factory,
            ServedCall(
                request=request,
                operation=operation,
                name=name,
                namespace=namespace,
                session_id=session_id,
                run_id=run_id,
            ),
        )

    def refuse(self, code: int, detail: str, error: str, **facts: Any) -> HttpProblem:
        """An error response of this binding's shape: ``detail``, ``error`` and ``facts``."""
        return HttpProblem(code, {"detail": detail, "error": error, **facts})
