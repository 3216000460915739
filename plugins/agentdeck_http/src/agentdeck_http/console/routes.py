"""The console's own routes: the page shell, its static files, and login/logout.

Every page is the same small HTML shell; the ES modules read the path and draw the page from
the JSON API. Each response carries a strict Content-Security-Policy (scripts, styles and
connections from this origin only; no inline script, no ``eval``), so even a rendering mistake
could not run markup that a run's content smuggled in.
"""

# No ``from __future__ import annotations``: FastAPI reads these signatures at runtime.

import hmac
from importlib.resources import files
from typing import Annotated

from fastapi import APIRouter, Body, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from pydantic import BaseModel, Field

from agentdeck_http.console.sessions import COOKIE, same_origin
from agentdeck_http.problems import HttpProblem
from agentdeck_http.security import recognised_key
from agentdeck_http.served import Served

__all__ = ["CONTENT_SECURITY_POLICY", "console_router"]

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}

_PAGES = ("", "inbox", "sessions", "health", "login")


def _static() -> dict[str, bytes]:
    """The shipped files, read once: nothing else under ``/ui/static/`` is ever served."""
    folder = files("agentdeck_http.console").joinpath("static")
    return {
        entry.name: entry.read_bytes()
        for entry in folder.iterdir()
        if entry.is_file() and any(entry.name.endswith(suffix) for suffix in _TYPES)
    }


class LoginRequest(BaseModel):
    key: str = Field(min_length=1, max_length=1000)


def console_router(served: Served) -> APIRouter:
    prefix = f"{served.prefix}/ui"
    router = APIRouter(prefix=prefix, include_in_schema=False)
    static = _static()
    keys = served.binding.api_keys
    shell = _shell(prefix, served.binding.title).encode()

    def page() -> Response:
        return Response(shell, media_type="text/html; charset=utf-8", headers=_HEADERS)

    @router.get("")
    async def bare() -> RedirectResponse:
        return RedirectResponse(f"{prefix}/", status_code=308)

    for name in _PAGES:
        router.add_api_route(f"/{name}", page, methods=["GET"])
    router.add_api_route("/runs/{run_id}", page, methods=["GET"])
    router.add_api_route("/sessions/{session_id}", page, methods=["GET"])

    @router.get("/static/{name}")
    async def static_file(name: str) -> Response:
        body = static.get(name)
        if body is None:
            return Response(status_code=404, headers=_HEADERS)
        suffix = name[name.rindex(".") :]
        return Response(body, media_type=_TYPES[suffix], headers=_HEADERS)

    @router.get("/session")
    async def session(request: Request) -> JSONResponse:
        """Who the browser is: whether keys are needed, its namespaces, its CSRF token."""
        if keys is None:
            return JSONResponse(
                {"keys_required": False, "signed_in": True, "namespaces": None, "csrf": ""},
                headers=_HEADERS,
            )
        current = served.sessions.of(request)
        if current is None:
            return JSONResponse(
                {"keys_required": True, "signed_in": False, "namespaces": [], "csrf": ""},
                headers=_HEADERS,
            )
        return JSONResponse(
            {
                "keys_required": True,
                "signed_in": True,
                "namespaces": list(current.namespaces or ()),
                "csrf": current.csrf,
            },
            headers=_HEADERS,
        )

    @router.post("/login")
    async def login(request: Request, body: Annotated[LoginRequest, Body()]) -> JSONResponse:
        """Exchange an API key for a session cookie (HttpOnly, SameSite=Strict)."""
        if not same_origin(request):
            raise HttpProblem(
                403, {"detail": "log in from this server's own pages", "error": "csrf_refused"}
            )
        if keys is None:
            return JSONResponse({"signed_in": True, "namespaces": None, "csrf": ""})
        granted = recognised_key(keys, body.key)
        if granted is None:
            raise HttpProblem(
                401, {"detail": "the API key is not recognised", "error": "unauthorized"}
            )
        token, opened = served.sessions.open(granted)
        response = JSONResponse(
            {"signed_in": True, "namespaces": list(granted), "csrf": opened.csrf},
            headers=_HEADERS,
        )
        response.set_cookie(
            COOKIE,
            token,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path=served.prefix or "/",
        )
        return response

    @router.post("/logout")
    async def logout(request: Request) -> JSONResponse:
        current = served.sessions.of(request)
        presented = request.headers.get("x-csrf-token", "")
        if current is not None and hmac.compare_digest(presented.encode(), current.csrf.encode()):
            served.sessions.close(request.cookies.get(COOKIE))
        response = JSONResponse({"signed_in": False}, headers=_HEADERS)
        response.delete_cookie(COOKIE, path=served.prefix or "/")
        return response

    return router


def _shell(prefix: str, title: str) -> str:
    """The one HTML page: no inline script or style, the prefix handed over as data."""
    escaped = (
        title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )
    api = prefix.removesuffix("/ui")
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escaped} console</title>"
        f'<link rel="stylesheet" href="{prefix}/static/console.css">'
        f'<script type="module" src="{prefix}/static/app.js"></script>'
        f'</head><body data-ui="{prefix}" data-api="{api}">'
        '<header id="top"></header><main id="page"><p class="muted">Loading…</p></main>'
        "</body></html>\n"
    )
