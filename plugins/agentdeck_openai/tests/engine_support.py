"""Helpers the engine tests share: an engine pointed at a loopback server, and log readers.

Loaded by the ``test_engine_*`` modules with :func:`load` (the tests run in importlib mode, so a
sibling module is not importable by name).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from agentdeck.authoring.catalog import Catalog
from agentdeck.model.events import Event
from agentdeck.ports import EngineRequest, SessionFactory
from agentdeck.settings import Settings
from agentdeck.testing.engine_kit import DriveResult
from agentdeck_openai.engine import OpenAIEngine
from agentdeck_openai.testing import LoopbackModelServer

P = TypeVar("P")


def make_engine(
    server: LoopbackModelServer,
    *,
    catalog: Catalog | None = None,
    session_factory: SessionFactory | None = None,
    chat: bool = False,
    **env: str,
) -> OpenAIEngine:
    """An unopened engine whose deck settings point at ``server``."""
    settings = Settings(
        env={
            **server.env(),
            "OPENAI_USE_RESPONSES": "false" if chat else "true",
            **env,
        }
    )
    return OpenAIEngine(
        EngineRequest(settings=settings, catalog=catalog, session_factory=session_factory)
    )


@asynccontextmanager
async def opened(engine: OpenAIEngine) -> AsyncIterator[OpenAIEngine]:
    await engine.open()
    try:
        yield engine
    finally:
        await engine.close()


def payloads(source: DriveResult | Sequence[Event], kind: type[P]) -> list[P]:
    """The payloads of one type, in log order."""
    events = source.events if isinstance(source, DriveResult) else source
    return [event.payload for event in events if isinstance(event.payload, kind)]


def kinds(result: DriveResult) -> list[str]:
    return [event.kind for event in result.new_events]


def tool_output_sent(server: LoopbackModelServer, call_id: str) -> str:
    """The tool output the model was sent for ``call_id`` (from the last request carrying it)."""
    for request in reversed(server.model_requests):
        if call_id in request.tool_outputs:
            return request.tool_outputs[call_id]
    raise AssertionError(f"no request sent the model an output for {call_id}")


def everything_logged(result: DriveResult) -> str:
    return "\n".join(event.to_json() for event in result.events)


def body_text(server: LoopbackModelServer) -> str:
    """Every request body the server recorded, as text (to search for what must not be sent)."""
    import json

    return "\n".join(json.dumps(request.body) for request in server.requests)


def first(items: Sequence[Any]) -> Any:
    assert items, "expected at least one"
    return items[0]
