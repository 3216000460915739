"""Console logins: an API key exchanged once for an HttpOnly session cookie and a CSRF token.

A browser should not keep an API key where page scripts can read it, so the console posts the
key once to ``/ui/login`` and gets back a cookie (``HttpOnly``, ``SameSite=Strict``) naming a
server-side session that grants exactly the key's namespaces. Because a cookie is sent by the
browser on its own, a request authenticated by it must also prove it comes from the console's
pages: a mutating request carries the session's CSRF token in the ``X-CSRF-Token`` header (a page
of another origin can neither read the token nor set the header without a CORS grant the binding
never gives for credentials) and, when the browser sends one, an ``Origin`` equal to the
server's own.

Sessions live in this process's memory: a restart or another worker asks for the key again.
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field

from starlette.requests import Request

__all__ = ["COOKIE", "CSRF_HEADER", "ConsoleSession", "ConsoleSessions", "same_origin"]

COOKIE = "agentdeck_console"
"""The session cookie's name."""

CSRF_HEADER = "X-CSRF-Token"
"""The header a cookie-authenticated mutating request must carry."""

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True, slots=True)
class ConsoleSession:
    """One logged-in browser: the namespaces its key grants and its CSRF token."""

    namespaces: tuple[str | None, ...] | None
    csrf: str
    expires: float


@dataclass(slots=True)
class ConsoleSessions:
    """The sessions of one served app, keyed by the cookie's random value."""

    lifetime: float = 12 * 3600.0
    _sessions: dict[str, ConsoleSession] = field(default_factory=dict)

    def open(self, namespaces: tuple[str | None, ...] | None) -> tuple[str, ConsoleSession]:
        """A new session for a key granting ``namespaces``: ``(cookie value, session)``."""
        self._forget_expired()
        token = secrets.token_urlsafe(32)
        session = ConsoleSession(
            namespaces=namespaces,
            csrf=secrets.token_urlsafe(32),
            expires=time.monotonic() + self.lifetime,
        )
        self._sessions[token] = session
        return token, session

    def find(self, token: str | None) -> ConsoleSession | None:
        if not token:
            return None
        session = self._sessions.get(token)
        if session is None or session.expires < time.monotonic():
            return None
        return session

    def close(self, token: str | None) -> None:
        if token:
            self._sessions.pop(token, None)

    def of(self, request: Request) -> ConsoleSession | None:
        """The live session the request's cookie names, if any."""
        return self.find(request.cookies.get(COOKIE))

    def _forget_expired(self) -> None:
        now = time.monotonic()
        for token in [t for t, s in self._sessions.items() if s.expires < now]:
            del self._sessions[token]


def same_origin(request: Request) -> bool:
    """Whether the request's ``Origin`` (when the browser sent one) is this server's own."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    host = request.headers.get("host", "")
    return origin.lower() == f"{request.url.scheme}://{host}".lower()


def csrf_ok(request: Request, session: ConsoleSession) -> bool:
    """Whether a cookie-authenticated request may act: reads always, writes with the token."""
    if request.method in SAFE_METHODS:
        return True
    presented = request.headers.get(CSRF_HEADER, "")
    return hmac.compare_digest(presented.encode(), session.csrf.encode()) and same_origin(request)
