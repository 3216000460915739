"""Jack on a real uvicorn server: its lifespan opens the deck, a busy conversation answers 409,
and a client that hangs up mid-answer leaves the run cancelled rather than spending tokens."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

import httpx
import pytest
import uvicorn
from agentdeck import Deck, Settings
from agentdeck_openai.testing import LoopbackModelServer, reply
from fastapi import FastAPI

from jack.agent import build_deck
from jack.corpus import DocsCorpus
from jack.server import SESSION_HEADER, create_app, parse_frames
from jack.settings import JackSettings

SLOW_ANSWER = ["word "] * 200
JACK_DEFAULTS = Settings().section(JackSettings)


@pytest.fixture
def unopened_deck(settings: Settings) -> Deck:
    return build_deck(settings)


@contextlib.asynccontextmanager
async def serving(app: FastAPI) -> AsyncIterator[str]:
    """``app`` on uvicorn on a free port, lifespan on; yields its base URL."""
    server = uvicorn.Server(uvicorn.Config(app, port=0, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()  # startup failed: raise its error
        await asyncio.sleep(0.01)
    host, port = server.servers[0].sockets[0].getsockname()[:2]
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        await task


@pytest.fixture
async def base_url(unopened_deck: Deck, corpus: DocsCorpus) -> AsyncIterator[str]:
    async with serving(create_app(unopened_deck, corpus, JACK_DEFAULTS)) as url:
        yield url


async def _until_first_text(lines: AsyncIterator[str]) -> list[str]:
    seen = []
    async for line in lines:
        seen.append(line)
        if line == "event: text.delta":
            return seen
    raise AssertionError(f"the stream ended before any text: {seen}")


async def test_the_lifespan_opens_the_deck_and_closes_it(
    unopened_deck: Deck, corpus: DocsCorpus, model_server: LoopbackModelServer
) -> None:
    model_server.script.add(reply("Hello."))
    async with serving(create_app(unopened_deck, corpus, JACK_DEFAULTS)) as url:
        assert unopened_deck.is_open
        async with httpx.AsyncClient(base_url=url) as client:
            answered = await client.post("/ask", json={"question": "Hi?"})
        assert parse_frames(answered.text)[-1]["kind"] == "run.completed"
    assert not unopened_deck.is_open


async def test_a_second_question_while_the_first_is_answered_is_409(
    base_url: str, model_server: LoopbackModelServer
) -> None:
    model_server.script.add(reply(SLOW_ANSWER, delay=0.05), reply("Done."))
    async with (
        httpx.AsyncClient(base_url=base_url, timeout=30) as client,
        client.stream("POST", "/ask", json={"question": "Long?"}) as first,
    ):
        await _until_first_text(first.aiter_lines())
        session_id = first.headers[SESSION_HEADER]
        busy = await client.post("/ask", json={"question": "Meanwhile?", "session_id": session_id})
        assert busy.status_code == 409
        assert busy.json()["type"] == "session-busy"


async def test_a_client_that_hangs_up_leaves_its_run_cancelled(
    base_url: str, unopened_deck: Deck, model_server: LoopbackModelServer
) -> None:
    model_server.script.add(reply(SLOW_ANSWER, delay=0.05))
    async with (
        httpx.AsyncClient(base_url=base_url, timeout=30) as client,
        client.stream("POST", "/ask", json={"question": "Long?"}) as response,
    ):
        seen = await _until_first_text(response.aiter_lines())
    run_id = json.loads(next(line for line in seen if line.startswith("data: "))[6:])["run_id"]

    run = await unopened_deck.runs.get(run_id)
    async with asyncio.timeout(20):  # a guard against hanging, not a timing assertion
        kinds = [event.kind async for event in run.events(follow=True)]
    assert kinds[-1] == "run.cancelled"
    assert "run.completed" not in kinds
