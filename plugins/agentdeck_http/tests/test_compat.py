"""The 4.x compatibility routes: ``POST /agents/{name}/chat`` (JSON and ``?stream=true``) against
a real agent on the loopback model server, and ``POST /workflows/{name}``.

The chat tests need agentdeck-openai (this package's ``[test]`` extra): without it they skip
locally and fail under CI.
"""

from __future__ import annotations

from typing import Any

from http_test_support import frames, make_deck, require_openai, serving

from agentdeck import Agent, WorkflowCtx, tool, workflow
from agentdeck.bindings import Native
from agentdeck.settings import Settings


@tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


helper = Agent(name="helper", instructions="Help.")
cleaner = Agent(name="cleaner", instructions="Tidy up.", tools=[delete_file])


@workflow
async def total(a: int, b: int) -> int:
    return a + b


@workflow
async def confirm(ctx: WorkflowCtx[Any]) -> Any:
    return await ctx.ask("sure?")


def chat_deck(model_server: Any) -> Any:
    return make_deck(
        workflows=[total, confirm],
        agents=[helper, cleaner],
        settings=Settings(env=model_server.env()),
    )


async def test_chat_answers_200_with_the_agents_output(loopback_model: Any) -> None:
    testing = require_openai()
    loopback_model.script.add(testing.reply("Hello there, how can I help?"))
    async with serving(chat_deck(loopback_model), Native.http()) as served:
        response = await served.client.post(
            "/agents/helper/chat", json={"session_id": "s-1", "message": "hi"}
        )
    assert response.status_code == 200
    assert response.json() == {"output": "Hello there, how can I help?"}


async def test_chat_streams_deltas_then_done_with_output_and_usage(loopback_model: Any) -> None:
    testing = require_openai()
    loopback_model.script.add(testing.reply(["Hel", "lo ", "there"]))
    async with (
        serving(chat_deck(loopback_model), Native.http()) as served,
        served.client.stream(
            "POST",
            "/agents/helper/chat",
            params={"stream": "true"},
            json={"session_id": "s-1", "message": "hi"},
        ) as response,
    ):
        assert response.status_code == 200
        received = [frame async for frame in frames(response)]
    deltas = [f.json["delta"] for f in received if f.event is None]
    assert "".join(deltas) == "Hello there"
    assert len(deltas) == 3
    done = received[-1]
    assert done.event == "done"
    assert done.json == {
        "output": "Hello there",
        "usage": {"requests": 1, "input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
    }


async def test_an_engine_failure_is_the_documented_500_and_an_error_frame(
    loopback_model: Any,
) -> None:
    testing = require_openai()
    loopback_model.script.add(testing.server_error("secret upstream detail"))
    loopback_model.script.add(testing.server_error("secret upstream detail"))
    async with serving(chat_deck(loopback_model), Native.http()) as served:
        plain = await served.client.post(
            "/agents/helper/chat", json={"session_id": "s-1", "message": "hi"}
        )
        async with served.client.stream(
            "POST",
            "/agents/helper/chat",
            params={"stream": "true"},
            json={"session_id": "s-2", "message": "hi"},
        ) as response:
            received = [frame async for frame in frames(response)]
    assert plain.status_code == 500
    assert plain.json() == {"detail": "internal error"}
    error = received[-1]
    assert error.event == "error"
    assert error.json["type"] and error.json["error_code"] == "engine_error"
    assert "secret" not in "\n".join(error.data)


async def test_a_parked_turn_holds_its_session_and_a_second_chat_is_409(
    loopback_model: Any,
) -> None:
    testing = require_openai()
    loopback_model.script.add(testing.tool_call("delete_file", {"path": "thesis.tex"}))
    async with serving(chat_deck(loopback_model), Native.http()) as served:
        client = served.client
        parked = await client.post(
            "/agents/cleaner/chat", json={"session_id": "s-1", "message": "tidy"}
        )
        assert parked.status_code == 200
        interrupt = parked.json()["output"]
        assert interrupt["type"] == "interrupt"
        assert interrupt["payload"]["args"] == {"path": "thesis.tex"}
        busy = await client.post("/agents/cleaner/chat", json={"session_id": "s-1", "message": "?"})
        assert busy.status_code == 409
        assert busy.json()["holder_run_id"] == interrupt["id"]
        assert "waiting for an answer" in busy.json()["detail"]


async def test_chat_refuses_unknown_agents_and_bad_bodies(loopback_model: Any) -> None:
    async with serving(chat_deck(loopback_model), Native.http()) as served:
        client = served.client
        unknown = await client.post("/agents/nobody/chat", json={"session_id": "s", "message": "x"})
        assert unknown.status_code == 404
        assert unknown.json()["available"] == ["cleaner", "helper"]
        workflow_name = await client.post(
            "/agents/total/chat", json={"session_id": "s", "message": "x"}
        )
        assert workflow_name.status_code == 404
        missing = await client.post("/agents/helper/chat", json={"session_id": "s"})
        assert missing.status_code == 422 and missing.json()["field"] == "message"
        mistyped = await client.post("/agents/helper/chat", json={"session_id": 3, "message": "x"})
        assert mistyped.status_code == 422 and mistyped.json()["field"] == "session_id"


async def test_workflow_route_returns_the_result_or_the_open_question() -> None:
    async with serving(make_deck(workflows=[total, confirm]), Native.http()) as served:
        client = served.client
        done = await client.post("/workflows/total", json={"a": 2, "b": 3})
        assert done.status_code == 200 and done.json() == {"output": 5}
        parked = await client.post("/workflows/confirm")
        assert parked.json()["output"]["type"] == "interrupt"
        assert parked.json()["output"]["payload"] == "sure?"
        bad = await client.post("/workflows/total", json={"a": 2})
        assert bad.status_code == 422 and bad.json()["field"] == "body.b"
        unknown = await client.post("/workflows/nope", json={})
        assert unknown.status_code == 404 and unknown.json()["available"] == ["confirm", "total"]
