"""How errors become HTTP responses: one table, so every route answers a situation the same way.

The body is always JSON with a ``detail`` for a person and, for 4xx, an ``error`` code and the
structured facts the AgentDeck error carried (the busy session's holder, the key's holder, the
field that was wrong). A 500 is exactly ``{"detail": "internal error"}``: what went wrong is
logged with its traceback and never sent, because an exception's text can carry anything.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from agentdeck.deck.serving import Exposure, ExposureState
from agentdeck.errors import (
    AgentDeckError,
    AlreadyAnsweredError,
    AnswerRefusedError,
    ContentTooLargeError,
    DuplicateKeyError,
    ForkUnsupportedError,
    InvalidInputError,
    NotFoundError,
    ReplayError,
    RunCancelledError,
    RunStateError,
    SessionBusyError,
    StoreError,
)

__all__ = [
    "INTERNAL",
    "HttpProblem",
    "internal_error",
    "problem_for",
    "run_state_body",
    "unavailable",
    "validation_problem",
]

log = logging.getLogger("agentdeck.http")

INTERNAL: dict[str, Any] = {"detail": "internal error"}
"""The documented body of every 500."""


class HttpProblem(Exception):
    """A response to send instead of the route's own: raised anywhere under a route."""

    def __init__(
        self, status: int, body: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(status, body.get("detail") or body.get("status"))
        self.status = status
        self.body = dict(body)
        self.headers = dict(headers or {})

    def response(self) -> JSONResponse:
        return JSONResponse(self.body, status_code=self.status, headers=self.headers or None)


def internal_error(what: str, error: BaseException | None = None) -> HttpProblem:
    """The 500, with ``what`` and the error logged (never sent)."""
    if error is not None:
        log.error("%s", what, exc_info=(type(error), error, error.__traceback__))
    else:
        log.error("%s", what)
    return HttpProblem(500, INTERNAL)


def unavailable(exposure: Exposure, *, run_id: str | None = None) -> HttpProblem:
    """503 ``{"status": "starting" | "draining" | "stopped"}`` (with ``Retry-After``)."""
    state = exposure.state
    status = "starting" if state is ExposureState.STARTING else state.value
    if state is ExposureState.READY:  # a start raced the drain's first step
        status = "draining"
    body: dict[str, Any] = {"status": status}
    if run_id is not None:
        body["run_id"] = run_id
    return HttpProblem(503, body, headers={"Retry-After": "1"})


def problem_for(error: AgentDeckError, *, field_prefix: str | None = None) -> HttpProblem:
    """The response for an AgentDeck error a route did not handle itself."""
    detail = str(error)
    if isinstance(error, NotFoundError):
        body: dict[str, Any] = {"detail": detail, "error": "not_found"}
        if error.available is not None:
            body["available"] = list(error.available)
        return HttpProblem(404, body)
    if isinstance(error, SessionBusyError):
        return HttpProblem(
            409,
            {
                "detail": detail,
                "error": "session_busy",
                "session_id": error.session_id,
                "holder_run_id": error.holder_run_id,
                "holder_status": error.holder_status.value if error.holder_status else None,
            },
        )
    if isinstance(error, DuplicateKeyError):
        return HttpProblem(
            409,
            {
                "detail": detail,
                "error": "duplicate_key",
                "key": error.key,
                "holder_run_id": error.holder_run_id,
            },
        )
    if isinstance(error, AnswerRefusedError):
        return HttpProblem(
            422,
            {
                "detail": detail,
                "error": "answer_refused",
                "field": "value",
                "interrupt_id": error.interrupt_id,
                "reason": error.reason,
            },
        )
    if isinstance(error, InvalidInputError):
        field = error.field
        if field_prefix is not None:
            field = f"{field_prefix}.{field}" if field else field_prefix
        return HttpProblem(422, {"detail": detail, "error": "invalid_input", "field": field})
    if isinstance(error, ContentTooLargeError):
        return HttpProblem(
            413, {"detail": detail, "error": "too_large", "size": error.size, "limit": error.limit}
        )
    if isinstance(error, ReplayError):
        return HttpProblem(409, {"detail": detail, "error": "replay", "reason": error.reason})
    if isinstance(error, ForkUnsupportedError):
        return HttpProblem(
            409, {"detail": detail, "error": "fork_unsupported", "engine": error.engine}
        )
    if isinstance(error, RunStateError):
        return HttpProblem(409, run_state_body(error))
    if isinstance(error, StoreError) and error.retryable:
        log.warning("store unavailable: %s", error)
        return HttpProblem(
            503, {"detail": "the event store is unavailable; retry", "error": "store_unavailable"}
        )
    return internal_error(f"unhandled {type(error).__name__}", error)


def run_state_body(error: RunStateError) -> dict[str, Any]:
    """The 409 body of a verb the run's state refused: ``reason`` says what happened in the
    same word the Python error's ``refusal`` does (``status``, ``answered``, ``cancelled``,
    ``finished``), with the facts that go with it -- for an answer that came second, who gave
    the one recorded (``origin``), never its value."""
    body: dict[str, Any] = {
        "detail": str(error),
        "error": "run_state",
        "reason": error.refusal,
        "run_id": error.run_id or None,
        "status": error.status.value if error.status is not None else None,
        "accepted": [status.value for status in error.accepted],
        "hint": error.hint,
    }
    if isinstance(error, AlreadyAnsweredError):
        body.update(
            interrupt_id=error.interrupt_id,
            origin=error.origin,
            answered_seq=error.answered_seq,
        )
    if isinstance(error, RunCancelledError):
        body["cancel_reason"] = error.cancel_reason
    return body


def validation_problem(error: RequestValidationError) -> HttpProblem:
    """422 for a request that does not fit its model, naming the first wrong field.

    The offending values are not echoed back.
    """
    errors = [_clean(item) for item in error.errors()]
    first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
    field = _field(first.get("loc", ()))
    parts = [f"{_field(item.get('loc', ())) or 'body'}: {item.get('msg')}" for item in errors]
    return HttpProblem(
        422,
        {
            "detail": "; ".join(parts) or "invalid request",
            "error": "invalid_input",
            "field": field or "body",
            "errors": errors,
        },
    )


def _clean(item: Mapping[str, Any]) -> dict[str, Any]:
    return {"loc": list(item.get("loc", ())), "msg": item.get("msg"), "type": item.get("type")}


def _field(loc: Sequence[Any]) -> str:
    parts = [str(part) for part in loc]
    if parts and parts[0] in {"body", "query", "path", "header"}:
        parts = parts[1:]
    return ".".join(parts)


async def handle_problem(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HttpProblem)
    return exc.response()


async def handle_validation(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return validation_problem(exc).response()


async def handle_agentdeck(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AgentDeckError)
    return problem_for(exc).response()


_UNPARSEABLE = "There was an error parsing the body"


async def handle_http(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's and FastAPI's own errors, in this binding's shape.

    A body FastAPI could not parse becomes the 422 every other bad body gets; a 405 lists every
    method the path answers (Starlette lists only the first route's).
    """
    assert isinstance(exc, HTTPException)
    headers = dict(exc.headers or {})
    if exc.status_code == 400 and exc.detail == _UNPARSEABLE:
        return HttpProblem(
            422,
            {"detail": "the body is not valid JSON", "error": "invalid_input", "field": "body"},
        ).response()
    if exc.status_code == 405:
        path = request.url.path
        root = request.scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        methods: set[str] = set()
        for pattern, allowed in getattr(request.app.state, "route_methods", ()):
            if pattern.match(path):
                methods |= allowed
        if methods:
            headers["Allow"] = ", ".join(sorted(methods))
    return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=headers)
