"""POST /ask over ASGI: the allowlist, sessions, quotas, the token ceiling and the input checks."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from agentdeck import Deck, ManualClock, Settings
from agentdeck_openai.testing import LoopbackModelServer, Usage, reply, tool_call
from fastapi import FastAPI

from jack.corpus import DocsCorpus
from jack.server import PUBLIC_KINDS, SESSION_HEADER, create_app, parse_frames
from jack.settings import JackSettings

PAUSING = "docs/runs-and-control#pausing-and-resuming-a-run"
VISITOR = "203.0.113.7"
NEIGHBOUR = "198.51.100.9"

MakeApp = Callable[..., FastAPI]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def make_app(deck: Deck, corpus: DocsCorpus, clock: ManualClock) -> MakeApp:
    def make(**limits: Any) -> FastAPI:
        jack = Settings(overrides={"jack": limits}).section(JackSettings)
        return create_app(deck, corpus, jack, clock=clock)

    return make


@pytest.fixture
async def visitor(make_app: MakeApp) -> AsyncIterator[Callable[..., httpx.AsyncClient]]:
    """A client factory: ``visitor(app, address)`` speaks to ``app`` from ``address``."""
    opened: list[httpx.AsyncClient] = []

    def connect(app: FastAPI, address: str = VISITOR) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=app, client=(address, 40000))
        client = httpx.AsyncClient(transport=transport, base_url="http://jack.test")
        opened.append(client)
        return client

    yield connect
    for client in opened:
        await client.aclose()


async def test_the_stream_carries_allowed_event_kinds_only(
    make_app: MakeApp, visitor: Any, deck: Deck, model_server: LoopbackModelServer
) -> None:
    model_server.script.add(
        tool_call("search_docs", {"query": "pause"}),
        tool_call("read_doc", {"slug": PAUSING}),
        reply("Call `await run.pause()`."),
    )
    response = await visitor(make_app()).post("/ask", json={"question": "How do I pause?"})

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = parse_frames(response.text)
    kinds = [event["kind"] for event in events]
    assert set(kinds) <= PUBLIC_KINDS
    assert kinds[0] == "run.started" and kinds[-1] == "run.completed"
    assert [e["payload"]["tool"] for e in events if e["kind"] == "tool.call.started"] == [
        "search_docs",
        "read_doc",
    ]
    text = "".join(e["payload"]["text"] for e in events if e["kind"] == "text.delta")
    assert text == "Call `await run.pause()`."
    # Each frame's id is the event's seq in the run's log, so a client can tell what it missed.
    ids = [line[4:] for line in response.text.splitlines() if line.startswith("id: ")]
    assert ids == [str(event["seq"]) for event in events]
    # The log holds what the wire left out: tool results (the tool's output verbatim), usage.
    run = await deck.runs.get(events[0]["run_id"])
    logged = {event.kind async for event in run.events()}
    assert {"tool.call.completed", "usage.reported", "message.completed"} <= logged
    assert (logged - PUBLIC_KINDS).isdisjoint(kinds)


async def test_a_follow_up_with_the_session_header_continues_the_conversation(
    make_app: MakeApp, visitor: Any, model_server: LoopbackModelServer
) -> None:
    model_server.script.add(reply("Use `await run.pause()`."), reply("`await run.resume()`."))
    client = visitor(make_app())
    first = await client.post("/ask", json={"question": "How do I pause a run?"})
    session_id = first.headers[SESSION_HEADER]
    assert {event["session_id"] for event in parse_frames(first.text)} == {session_id}

    second = await client.post(
        "/ask", json={"question": "And continue it?", "session_id": session_id}
    )
    assert second.status_code == 200
    assert second.headers[SESSION_HEADER] == session_id
    follow_up = model_server.model_requests[-1]
    assert follow_up.user_texts == ["How do I pause a run?", "And continue it?"]
    assert "Use `await run.pause()`." in str(follow_up.items)


async def test_a_session_is_honoured_only_for_the_client_that_opened_it(
    make_app: MakeApp, visitor: Any, model_server: LoopbackModelServer
) -> None:
    model_server.script.add(reply("Hello."))
    app = make_app()
    opened = await visitor(app).post("/ask", json={"question": "Hi?"})
    session_id = opened.headers[SESSION_HEADER]

    for client, session in (
        (visitor(app, NEIGHBOUR), session_id),
        (visitor(app), "jack-made-up"),
    ):
        refused = await client.post("/ask", json={"question": "Hi?", "session_id": session})
        assert refused.status_code == 404
        assert refused.json()["type"] == "unknown-session"
    assert len(model_server.model_requests) == 1


async def test_a_client_over_its_quota_gets_429_with_retry_after(
    make_app: MakeApp, visitor: Any, clock: ManualClock, model_server: LoopbackModelServer
) -> None:
    model_server.script.add(reply("An answer.", times=None))
    app = make_app(requests_per_window=2, window_seconds=60)
    client = visitor(app)
    for _ in range(2):
        assert (await client.post("/ask", json={"question": "Q?"})).status_code == 200
    clock.advance(20)

    refused = await client.post("/ask", json={"question": "Q?"})
    assert refused.status_code == 429
    assert refused.headers["retry-after"] == "40"  # when the oldest of the two leaves the window
    assert refused.json()["type"] == "quota-exceeded"
    assert len(model_server.model_requests) == 2  # the refused question reached no model

    assert (await visitor(app, NEIGHBOUR).post("/ask", json={"question": "Q?"})).status_code == 200
    clock.advance(40)
    assert (await client.post("/ask", json={"question": "Q?"})).status_code == 200


async def test_a_conversation_out_of_turns_is_refused(
    make_app: MakeApp, visitor: Any, model_server: LoopbackModelServer
) -> None:
    model_server.script.add(reply("An answer.", times=None))
    client = visitor(make_app(turns_per_session=2))
    session_id = (await client.post("/ask", json={"question": "One?"})).headers[SESSION_HEADER]
    body = {"question": "Two?", "session_id": session_id}
    assert (await client.post("/ask", json=body)).status_code == 200

    refused = await client.post("/ask", json={"question": "Three?", "session_id": session_id})
    assert refused.status_code == 429
    assert refused.json()["type"] == "session-exhausted"
    assert "retry-after" not in refused.headers  # waiting does not help; a new session does
    assert (await client.post("/ask", json={"question": "Three?"})).status_code == 200


async def test_a_question_over_the_token_ceiling_streams_the_budget_failure(
    make_app: MakeApp, visitor: Any, model_server: LoopbackModelServer
) -> None:
    costly = Usage(input_tokens=900, output_tokens=200)
    model_server.script.add(
        tool_call("search_docs", {"query": "write me an essay"}, usage=costly),
        reply("An essay…", usage=costly),
    )
    response = await visitor(make_app(tokens_per_turn=1000)).post(
        "/ask", json={"question": "Write me an essay about AgentDeck."}
    )
    events = parse_frames(response.text)
    assert [event["kind"] for event in events] == ["run.started", "run.failed"]
    assert events[-1]["payload"]["error_code"] == "budget_exceeded"
    assert events[-1]["payload"]["message"] == "total tokens: 1100 used, budget 1000"
    assert len(model_server.model_requests) == 1


async def test_model_calls_per_question_are_capped_too(
    make_app: MakeApp, visitor: Any, model_server: LoopbackModelServer
) -> None:
    model_server.script.add(tool_call("search_docs", {"query": "pause"}, times=None))
    response = await visitor(make_app(model_calls_per_turn=3)).post(
        "/ask", json={"question": "Search forever?"}
    )
    ending = parse_frames(response.text)[-1]
    assert ending["kind"] == "run.failed"
    assert ending["payload"]["message"] == "model requests: 4 used, budget 3"


async def test_a_browser_from_another_site_is_refused(
    make_app: MakeApp, visitor: Any, model_server: LoopbackModelServer
) -> None:
    model_server.script.add(reply("Hello."))
    client = visitor(make_app(origins=["https://docs.example"]))
    refused = await client.post(
        "/ask", json={"question": "Hi?"}, headers={"Origin": "https://elsewhere.example"}
    )
    assert refused.status_code == 403
    allowed = await client.post(
        "/ask", json={"question": "Hi?"}, headers={"Origin": "https://docs.example"}
    )
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://docs.example"
    assert SESSION_HEADER.lower() in allowed.headers["access-control-expose-headers"].lower()


@pytest.mark.parametrize(
    "body",
    [
        {"question": "x" * 2001},
        {"question": "   "},
        {"question": ""},
        {"question": "Hi?", "page": "/secret"},
        {},
    ],
    ids=["too-long", "blank", "empty", "unknown-field", "missing"],
)
async def test_a_malformed_question_is_refused_before_any_run(
    body: dict[str, Any], make_app: MakeApp, visitor: Any, model_server: LoopbackModelServer
) -> None:
    response = await visitor(make_app()).post("/ask", json=body)
    assert response.status_code == 422
    assert model_server.model_requests == []


async def test_health_counts_the_pages(make_app: MakeApp, visitor: Any) -> None:
    response = await visitor(make_app()).get("/health")
    assert response.json() == {"status": "ok", "pages": 6}
