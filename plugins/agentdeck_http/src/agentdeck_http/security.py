"""What stands between a listener and someone else's runs: keys, namespaces, origins, body size.

* **API keys** map to the namespaces they may touch. A request that names another namespace's
  run gets the same 404 as a run that does not exist, so a key cannot probe for other tenants'
  runs; starting or listing in a namespace the key lacks is a 403.
* **Body cap**: a body over the limit is refused with 413 before it is read whole (by its
  ``Content-Length``, or as it streams in when there is none).
* **Origin check** (optional): a browser request from an origin not listed is refused with 403.
  It stops another site from embedding the endpoint; it is not authentication.
* **Catch-all**: an exception nothing handled is logged and answered with the documented 500,
  never with its text.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from fastapi import Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from starlette.requests import Request

from agentdeck.errors import NotFoundError
from agentdeck_http.console.sessions import CSRF_HEADER, ConsoleSessions, csrf_ok
from agentdeck_http.problems import INTERNAL, HttpProblem

__all__ = [
    "BodyLimit",
    "CatchAll",
    "OriginGuard",
    "Principal",
    "authenticator",
    "recognised",
    "recognised_key",
    "too_large",
]

log = logging.getLogger("agentdeck.http")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the namespaces their key grants (``None``: no keys configured)."""

    namespaces: tuple[str | None, ...] | None

    def namespace(self, requested: str | None) -> str | None:
        """The namespace a request means: the one it names, else the key's first one."""
        if requested is not None or not self.namespaces:
            return requested
        return self.namespaces[0]

    def may(self, namespace: str | None) -> bool:
        return self.namespaces is None or namespace in self.namespaces

    def require(self, namespace: str | None) -> None:
        """Refuse (403) a start or a listing in a namespace the key does not grant."""
        if not self.may(namespace):
            where = f"namespace '{namespace}'" if namespace is not None else "the default namespace"
            raise HttpProblem(
                403,
                {
                    "detail": f"this API key does not grant {where}",
                    "error": "forbidden",
                    "field": "namespace",
                },
            )

    def require_run(self, namespace: str | None, run_id: str) -> None:
        """Refuse a run in a namespace the key does not grant exactly as a missing one (404)."""
        if not self.may(namespace):
            where = f"namespace '{namespace}'" if namespace is not None else "the default namespace"
            raise NotFoundError(
                f"no run with id '{run_id}' in {where}",
                what="run",
                name=run_id,
                namespace=namespace,
            )


def authenticator(
    keys: Mapping[str, tuple[str | None, ...]] | None,
    sessions: ConsoleSessions | None = None,
) -> Callable[..., Awaitable[Principal]]:
    """The dependency that resolves a request's :class:`Principal` (documented in OpenAPI as
    the ``bearer`` and ``X-API-Key`` security schemes when keys are configured).

    A request without a key may instead carry a console session cookie (``sessions``): it
    grants what the key that opened the session grants, and a mutating request so
    authenticated must also carry the session's CSRF token and come from this origin (403
    ``csrf_refused`` otherwise)."""
    if keys is None:

        async def open_access() -> Principal:
            return Principal(namespaces=None)

        return open_access

    bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <API key>")
    header = APIKeyHeader(name="X-API-Key", auto_error=False, description="the API key")

    async def authenticate(
        request: Request,
        credentials: HTTPAuthorizationCredentials | None = Security(bearer),  # noqa: B008
        api_key: str | None = Security(header),
    ) -> Principal:
        presented = credentials.credentials if credentials is not None else api_key
        session = sessions.of(request) if sessions is not None and not presented else None
        if session is not None:
            if not csrf_ok(request, session):
                raise HttpProblem(
                    403,
                    {
                        "detail": "a console request that changes something needs the "
                        f"session's {CSRF_HEADER} header and this server's Origin",
                        "error": "csrf_refused",
                    },
                )
            return Principal(namespaces=session.namespaces)
        if not presented:
            raise HttpProblem(
                401,
                {
                    "detail": "an API key is required: send 'Authorization: Bearer <key>' or "
                    "'X-API-Key: <key>'",
                    "error": "unauthorized",
                },
                headers={"WWW-Authenticate": "Bearer"},
            )
        granted = _lookup(keys, presented)
        if granted is None:
            raise HttpProblem(
                401,
                {"detail": "the API key is not recognised", "error": "unauthorized"},
                headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
            )
        return Principal(namespaces=granted)

    return authenticate


def _lookup(
    keys: Mapping[str, tuple[str | None, ...]], presented: str
) -> tuple[str | None, ...] | None:
    """The namespaces ``presented`` grants, comparing with every key so the time taken says
    nothing about which one came close."""
    candidate = presented.encode()
    granted: tuple[str | None, ...] | None = None
    for key, namespaces in keys.items():
        if hmac.compare_digest(candidate, key.encode()):
            granted = namespaces
    return granted


def recognised_key(
    keys: Mapping[str, tuple[str | None, ...]], presented: str
) -> tuple[str | None, ...] | None:
    """The namespaces the key ``presented`` grants, or ``None`` for an unknown key."""
    return _lookup(keys, presented)


def recognised(
    keys: Mapping[str, tuple[str | None, ...]], request: Request
) -> tuple[str | None, ...] | None:
    """The namespaces the request's key grants, or ``None`` without a valid key (for routes
    where a key is optional)."""
    presented = request.headers.get("x-api-key")
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        presented = token.strip()
    if not presented:
        return None
    return _lookup(keys, presented)


# =========================================================================== ASGI middleware


async def _send_json(send: Send, status: int, body: Mapping[str, Any]) -> None:
    raw = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(raw)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": raw})


def too_large(limit: int) -> dict[str, Any]:
    """The 413 body."""
    return {
        "detail": f"the request body is over the {limit}-byte limit",
        "error": "too_large",
        "limit": limit,
    }


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes with 413.

    A declared ``Content-Length`` over the limit is refused before anything is read (the server
    enforces that a body matches its declared length). A body without one (chunked) is read
    here, up to the limit, and handed on whole; one byte more and it is refused instead.
    """

    def __init__(self, app: App, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared: int | None = None
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
        if declared is not None and declared < 0:
            await _send_json(send, 400, {"detail": "bad Content-Length", "error": "invalid_input"})
            return
        if declared is not None and declared > self.limit:
            await _send_json(send, 413, too_large(self.limit))
            return
        if declared is not None:
            await self.app(scope, receive, send)
            return
        buffered: list[dict[str, Any]] = []
        seen = 0
        while True:
            message = await receive()
            buffered.append(message)
            if message["type"] != "http.request":
                break
            seen += len(message.get("body", b""))
            if seen > self.limit:
                await _send_json(send, 413, too_large(self.limit))
                return
            if not message.get("more_body", False):
                break

        async def replay() -> dict[str, Any]:
            if buffered:
                return buffered.pop(0)
            return await receive()

        await self.app(scope, replay, send)


class OriginGuard:
    """Refuse browser requests whose ``Origin`` is not allowed (403)."""

    def __init__(self, app: App, allowed: frozenset[str]) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for name, value in scope.get("headers", ()):
                if name == b"origin":
                    origin = value.decode("latin-1").lower()
                    if origin not in self.allowed:
                        await _send_json(
                            send,
                            403,
                            {
                                "detail": "requests from this origin are not allowed",
                                "error": "origin_refused",
                            },
                        )
                        return
        await self.app(scope, receive, send)


class CatchAll:
    """The last line: log an unhandled exception and answer the documented 500."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking(message: dict[str, Any]) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking)
        except Exception:
            log.exception("unhandled error serving %s %s", scope.get("method"), scope.get("path"))
            if not started:
                await _send_json(send, 500, INTERNAL)
