"""Context over HTTP: the per-request call a ``context_factory`` receives.

A context is a live Python object with no wire form, so it cannot travel in a request. What can
is whatever identifies the caller — a header, a token, the API key's namespace — and the
factory turns that into the context the run's callables declare (``ToolCtx[T]``,
``WorkflowCtx[T]``). It runs in the server's process for every request that starts or continues
a run, and its value goes to ``deck.runs.start(..., context=...)`` exactly as an embedded caller
would pass it.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Literal

from starlette.requests import Request

from agentdeck_http.binding import ContextFactory

__all__ = ["Operation", "ServedCall", "make_context"]

Operation = Literal["start", "answer", "resume", "retry", "fork", "chat", "workflow"]


@dataclass(frozen=True, slots=True)
class ServedCall:
    """One request that starts or continues a run, as a ``context_factory`` sees it.

    ``request`` is the Starlette request (headers, client address, ...); ``name`` the agent or
    workflow; ``namespace`` the namespace the run is in (after the API key's default applied);
    ``run_id`` the run being continued (``None`` for a start). Raise
    ``fastapi.HTTPException`` to refuse the request with a status of your choosing.
    """

    request: Request
    operation: Operation
    name: str
    namespace: str | None
    session_id: str | None = None
    run_id: str | None = None


async def make_context(factory: ContextFactory | None, call: ServedCall) -> Any:
    """The factory's value for ``call`` (awaited when it is awaitable); ``None`` without one."""
    if factory is None:
        return None
    value = factory(call)
    if inspect.isawaitable(value):
        value = await value
    return value
