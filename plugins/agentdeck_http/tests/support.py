"""Helpers for this package's tests (loaded by ``conftest.py`` as ``http_test_support``).

``serving(deck, *bindings)`` serves a deck with uvicorn on 127.0.0.1 (port 0) in the test's own
event loop and yields an ``httpx.AsyncClient`` pointed at it, so a workflow body can wait on an
``asyncio.Event`` the test sets. ``ServerThread`` serves one in a thread of its own, for
synchronous clients (schemathesis).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from agentdeck import Deck
from agentdeck.deck.serving import Exposure
from agentdeck.ports import Binding
from agentdeck.settings import Settings

SAFETY = 30.0
"""A bound on waits that only time out when something is broken (never a timing assertion)."""


def make_deck(*, workflows: list[Any] | None = None, **options: Any) -> Deck:
    """A deck on the in-memory store with no observers and no environment."""
    return Deck(
        workflows=workflows or [],
        observers=(),
        settings=options.pop("settings", None)
        or Settings(env={"AGENTDECK_STATE": "memory://", **options.pop("env", {})}),
        **options,
    )


@dataclass
class Served:
    exposure: Exposure
    client: httpx.AsyncClient
    base_url: str
    task: asyncio.Task[None]


@contextlib.asynccontextmanager
async def serving(
    deck: Deck, *bindings: Binding | str, headers: dict[str, str] | None = None, **options: Any
) -> AsyncIterator[Served]:
    """Serve ``deck`` over ``bindings`` with a real uvicorn on loopback until the block ends."""
    exposure = deck.expose(*bindings)
    task = asyncio.create_task(exposure.serve_async(port=0, log_level="warning", **options))
    listening = asyncio.ensure_future(exposure.wait_listening())
    done, _ = await asyncio.wait({task, listening}, timeout=SAFETY, return_when="FIRST_COMPLETED")
    if listening not in done:
        listening.cancel()
        if task in done:
            task.result()  # raises why the server did not start
        raise TimeoutError("the server did not start listening")
    (host, port), *_ = listening.result()
    base_url = f"http://{host}:{port}"
    try:
        async with httpx.AsyncClient(
            base_url=base_url, timeout=SAFETY, headers=headers or {}
        ) as client:
            yield Served(exposure=exposure, client=client, base_url=base_url, task=task)
    finally:
        exposure.request_shutdown()
        await asyncio.wait_for(task, SAFETY)


# ----------------------------------------------------------------------------- SSE reading


@dataclass
class Frame:
    """One SSE frame as a client parses it."""

    id: str | None = None
    event: str | None = None
    data: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)

    @property
    def json(self) -> Any:
        return json.loads("\n".join(self.data))


async def frames(response: httpx.Response, *, keep_comments: bool = False) -> AsyncIterator[Frame]:
    """Parse an SSE body into frames (comment-only frames only with ``keep_comments``)."""
    current = Frame()
    async for line in response.aiter_lines():
        if line == "":
            kept = keep_comments and current.comments
            if current.data or current.event or current.id is not None or kept:
                yield current
            current = Frame()
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "":
            current.comments.append(value)
        elif name == "id":
            current.id = value
        elif name == "event":
            current.event = value
        elif name == "data":
            current.data.append(value)
    if current.data or current.event:
        yield current


# ----------------------------------------------------------------------------- threads


class ServerThread:
    """Serve an exposure in a thread with its own loop (for synchronous clients)."""

    def __init__(self, exposure: Exposure) -> None:
        self.exposure = exposure
        self.base_url = ""
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="http-test-server", daemon=True)

    def _main(self) -> None:
        async def main() -> None:
            task = asyncio.create_task(self.exposure.serve_async(port=0, log_level="warning"))
            (host, port), *_ = await self.exposure.wait_listening()
            self.base_url = f"http://{host}:{port}"
            self._ready.set()
            await task

        try:
            asyncio.run(main())
        except BaseException as error:  # reported to the test thread
            self._error = error
            self._ready.set()

    def __enter__(self) -> ServerThread:
        self._thread.start()
        if not self._ready.wait(SAFETY) or self._error is not None:
            raise RuntimeError(f"the server thread did not start: {self._error!r}")
        return self

    def __exit__(self, *_exc: object) -> None:
        self.exposure.request_shutdown()
        self._thread.join(SAFETY)
        if self._error is not None:
            raise self._error


def require_openai() -> Any:
    """``agentdeck_openai.testing``, or a skip locally / a failure under CI when missing."""
    from agentdeck.testing.fixtures import in_ci

    try:
        import agentdeck_openai.testing as loopback
    except ImportError as missing:
        if in_ci():
            pytest.fail(f"agentdeck-openai is required for the 4.x chat tests in CI: {missing}")
        pytest.skip(f"agentdeck-openai is not installed: {missing}")
    return loopback
