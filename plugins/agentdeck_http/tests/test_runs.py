"""The native routes over a real uvicorn server: start, read, list, answer, pause/resume/cancel,
health, and every status code they document."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from http_test_support import make_deck, serving

from agentdeck import WorkflowCtx, workflow
from agentdeck.bindings import Native
from agentdeck.settings import Settings

GATES: dict[str, asyncio.Event] = {}


@workflow
async def approval(order_id: str, ctx: WorkflowCtx[Any]) -> dict[str, Any]:
    """Ask whether to approve an order."""
    decision = await ctx.ask({"approve": order_id}, options=["yes", "no"])
    return {"order": order_id, "decision": decision}


@workflow
async def two_questions(ctx: WorkflowCtx[Any]) -> list[Any]:
    first = await ctx.ask("first?")
    second = await ctx.ask("second?")
    return [first, second]


@workflow
async def gated(ctx: WorkflowCtx[Any]) -> str:
    """Waits for its gate, then lets a pending pause or cancel act."""
    await ctx.report("waiting at the gate")
    await GATES["gated"].wait()
    await ctx.safepoint()
    return "through"


@workflow
async def asks_twice_at_once(ctx: WorkflowCtx[Any]) -> list[Any]:
    """Opens two questions together."""
    return list(await asyncio.gather(ctx.ask("first?"), ctx.ask("second?")))


@workflow
async def echo(value: Any = None) -> Any:
    return value


@workflow
async def pair(a: int, b: int) -> int:
    return a + b


@workflow
async def breaks() -> str:
    raise RuntimeError("the ledger is closed")


def deck() -> Any:
    return make_deck(workflows=[approval, two_questions, gated, echo, pair])


async def test_get_run_carries_the_output_of_a_finished_run() -> None:
    served_deck = make_deck(workflows=[pair, breaks])
    async with serving(served_deck, Native.http()) as served:
        started = await served.client.post(
            "/runs", json={"name": "pair", "input": {"a": 2, "b": 3}}
        )
        run_id = started.json()["id"]
        assert started.json()["output"] is None  # still running, or not read on a start
        await _until_status(served.client, run_id, "completed")
        body = (await served.client.get(f"/runs/{run_id}")).json()
        run = await served.exposure.deck.runs.get(run_id)
        ending = [event async for event in run.events()][-1]
        assert body["output"] == [block.model_dump(mode="json") for block in ending.payload.output]
        assert body["output"] and body["error"] is None
        listed = (await served.client.get("/runs")).json()["runs"]
        assert all(view["output"] is None for view in listed)  # one run's view only

        failed = await served.client.post("/runs", json={"name": "breaks"})
        failed_id = failed.json()["id"]
        await _until_status(served.client, failed_id, "failed")
        broken = (await served.client.get(f"/runs/{failed_id}")).json()
        failure = [
            event async for event in (await served.exposure.deck.runs.get(failed_id)).events()
        ]
        assert broken["output"] is None
        assert broken["error"] == {
            "code": str(failure[-1].payload.error_code),
            "message": failure[-1].payload.message,
        }


async def test_post_runs_starts_a_run_and_answers_201_with_its_view_and_location() -> None:
    async with serving(deck(), Native.http()) as served:
        response = await served.client.post(
            "/runs", json={"name": "echo", "input": {"value": 7}, "key": "order-1"}
        )
        assert response.status_code == 201
        body = response.json()
        assert body["name"] == "echo" and body["kind"] == "workflow" and body["key"] == "order-1"
        assert response.headers["location"] == f"/runs/{body['id']}"
        run = await served.exposure.deck.runs.get(body["id"])
        assert await run == 7


async def test_get_run_reports_status_and_the_open_question_with_its_options() -> None:
    async with serving(deck(), Native.http()) as served:
        started = await served.client.post(
            "/runs", json={"name": "approval", "input": {"order_id": "A-1"}}
        )
        run_id = started.json()["id"]
        await _until_status(served.client, run_id, "waiting_answer")
        body = (await served.client.get(f"/runs/{run_id}")).json()
        assert body["status"] == "waiting_answer"
        [question] = body["pending"]
        assert question["payload"] == {"approve": "A-1"}
        assert question["expected"]["options"] == ["yes", "no"]


async def test_answer_continues_the_run_and_a_bad_answer_is_422_naming_the_reason() -> None:
    async with serving(deck(), Native.http()) as served:
        client = served.client
        run_id = (
            await client.post("/runs", json={"name": "approval", "input": {"order_id": "A-2"}})
        ).json()["id"]
        await _until_status(client, run_id, "waiting_answer")

        refused = await client.post(f"/runs/{run_id}/answer", json={"value": "maybe"})
        assert refused.status_code == 422
        assert refused.json()["error"] == "answer_refused"
        assert "'yes', 'no'" in refused.json()["reason"]
        assert "maybe" not in refused.json()["reason"]  # the value is never echoed

        accepted = await client.post(f"/runs/{run_id}/answer", json={"value": "yes"})
        assert accepted.status_code == 200
        run = await served.exposure.deck.runs.get(run_id)
        assert await run == {"order": "A-2", "decision": "yes"}

        again = await client.post(f"/runs/{run_id}/answer", json={"value": "yes"})
        assert again.status_code == 200  # the very answer recorded, retried: idempotent
        assert again.json()["status"] == "completed"
        other = await client.post(f"/runs/{run_id}/answer", json={"value": "no"})
        assert other.status_code == 409
        body = other.json()
        assert (body["reason"], body["origin"], body["status"]) == (
            "answered",
            "human",
            "completed",
        )
        assert "yes" not in body["detail"]  # the recorded value is never told to another caller


class _Reads:
    """Counts a store's record and log reads (the answer route's whole cost in reads)."""

    def __init__(self, store: Any) -> None:
        self.records: list[str] = []
        self.logs: list[str] = []
        get_run, read = store.get_run, store.read

        async def counted_get_run(run_id: str) -> Any:
            self.records.append(run_id)
            return await get_run(run_id)

        async def counted_read(run_id: str, **options: Any) -> Any:
            self.logs.append(run_id)
            return await read(run_id, **options)

        store.get_run, store.read = counted_get_run, counted_read


async def test_an_answer_reads_record_and_log_once_and_reports_the_run_as_it_left_it() -> None:
    async with serving(make_deck(workflows=[asks_twice_at_once]), Native.http()) as served:
        client = served.client
        run_id = (await client.post("/runs", json={"name": "asks_twice_at_once"})).json()["id"]
        await _until_status(client, run_id, "waiting_answer")
        [first, second] = (await client.get(f"/runs/{run_id}")).json()["pending"]
        reads = _Reads(served.exposure.service.store)
        answered = await client.post(
            f"/runs/{run_id}/answer", json={"value": 1, "interrupt_id": first["interrupt_id"]}
        )
        assert answered.status_code == 200
        assert (reads.records, reads.logs) == ([run_id], [run_id])
        body = answered.json()
        assert body["status"] == "waiting_answer"
        assert [q["interrupt_id"] for q in body["pending"]] == [second["interrupt_id"]]
        # Nothing plays while a question is open: reading the run now says exactly the same.
        assert body == (await client.get(f"/runs/{run_id}")).json()


async def test_the_last_answer_reports_the_run_as_resumed_by_it() -> None:
    async with serving(deck(), Native.http()) as served:
        client = served.client
        run_id = (
            await client.post("/runs", json={"name": "approval", "input": {"order_id": "A-3"}})
        ).json()["id"]
        await _until_status(client, run_id, "waiting_answer")
        answered = (await client.post(f"/runs/{run_id}/answer", json={"value": "yes"})).json()
        run = await served.exposure.deck.runs.get(run_id)
        assert await run == {"order": "A-3", "decision": "yes"}
        resumed = [e async for e in run.events() if e.kind == "run.resumed"][-1]
        assert answered["status"] == "running" and answered["pending"] == []
        assert answered["last_seq"] == resumed.seq
        assert answered["updated_at"].replace("Z", "+00:00") == resumed.ts.isoformat()


async def test_answer_needs_the_interrupt_id_only_when_several_questions_are_open() -> None:
    async with serving(deck(), Native.http()) as served:
        client = served.client
        run_id = (await client.post("/runs", json={"name": "two_questions"})).json()["id"]
        await _until_status(client, run_id, "waiting_answer")
        unknown = await client.post(
            f"/runs/{run_id}/answer", json={"value": 1, "interrupt_id": "nope"}
        )
        assert unknown.status_code == 422
        assert unknown.json()["field"] == "interrupt_id"
        assert (await client.post(f"/runs/{run_id}/answer", json={"value": 1})).status_code == 200


async def test_answering_a_running_run_is_409_and_says_what_state_it_is_in() -> None:
    GATES["gated"] = asyncio.Event()
    async with serving(deck(), Native.http()) as served:
        client = served.client
        run_id = (await client.post("/runs", json={"name": "gated"})).json()["id"]
        response = await client.post(f"/runs/{run_id}/answer", json={"value": "x"})
        assert response.status_code == 409
        assert response.json()["status"] == "running"
        assert response.json()["accepted"] == ["waiting_answer"]
        GATES["gated"].set()


async def test_pause_then_resume_over_http_and_the_run_finishes() -> None:
    GATES["gated"] = asyncio.Event()
    async with serving(deck(), Native.http()) as served:
        client = served.client
        run_id = (await client.post("/runs", json={"name": "gated"})).json()["id"]
        paused = await client.post(f"/runs/{run_id}/pause", json={"reason": "lunch"})
        assert paused.status_code == 202
        GATES["gated"].set()
        await _until_status(client, run_id, "paused")
        resumed = await client.post(f"/runs/{run_id}/resume")
        assert resumed.status_code == 200
        await _until_status(client, run_id, "completed")


async def test_cancel_ends_a_parked_run_at_once() -> None:
    async with serving(deck(), Native.http()) as served:
        client = served.client
        run_id = (
            await client.post("/runs", json={"name": "approval", "input": {"order_id": "C"}})
        ).json()["id"]
        await _until_status(client, run_id, "waiting_answer")
        cancelled = await client.post(f"/runs/{run_id}/cancel", json={"reason": "closed tab"})
        assert cancelled.status_code == 202
        assert cancelled.json()["status"] == "cancelled"


async def test_resuming_a_run_that_waits_for_an_answer_is_409_with_the_hint() -> None:
    async with serving(deck(), Native.http()) as served:
        client = served.client
        run_id = (
            await client.post("/runs", json={"name": "approval", "input": {"order_id": "D"}})
        ).json()["id"]
        await _until_status(client, run_id, "waiting_answer")
        response = await client.post(f"/runs/{run_id}/resume")
        assert response.status_code == 409
        assert response.json()["hint"] == "answer"


async def test_control_of_an_unknown_run_is_404_never_a_silent_200() -> None:
    async with serving(deck(), Native.http()) as served:
        for verb in ("pause", "resume", "cancel"):
            response = await served.client.post(f"/runs/no-such-run/{verb}")
            assert response.status_code == 404, verb
            assert response.json()["error"] == "not_found"
        answer = await served.client.post("/runs/no-such-run/answer", json={"value": 1})
        assert answer.status_code == 404
        assert (await served.client.get("/runs/no-such-run")).status_code == 404
        assert (await served.client.get("/runs/no-such-run/events")).status_code == 404


async def test_unknown_name_is_404_listing_what_the_deck_serves() -> None:
    async with serving(deck(), Native.http()) as served:
        response = await served.client.post("/runs", json={"name": "refund"})
        assert response.status_code == 404
        assert response.json()["available"] == [
            "approval",
            "two_questions",
            "gated",
            "echo",
            "pair",
        ]


async def test_a_busy_session_is_409_carrying_the_busy_message_and_holder() -> None:
    async with serving(deck(), Native.http()) as served:
        client = served.client
        first = await client.post(
            "/runs", json={"name": "approval", "input": {"order_id": "E"}, "session_id": "s-1"}
        )
        second = await client.post("/runs", json={"name": "echo", "session_id": "s-1"})
        assert second.status_code == 409
        body = second.json()
        assert body["error"] == "session_busy"
        assert body["holder_run_id"] == first.json()["id"]
        assert "session 's-1' already has run" in body["detail"]


async def test_a_duplicate_key_is_409_naming_the_holder_or_returns_it_when_asked() -> None:
    async with serving(deck(), Native.http()) as served:
        client = served.client
        first = (await client.post("/runs", json={"name": "echo", "key": "k-1"})).json()
        clash = await client.post("/runs", json={"name": "echo", "key": "k-1"})
        assert clash.status_code == 409
        assert clash.json()["error"] == "duplicate_key"
        assert clash.json()["holder_run_id"] == first["id"]
        retried = await client.post(
            "/runs", json={"name": "echo", "key": "k-1", "if_exists": "return"}
        )
        assert retried.status_code == 200
        assert retried.json()["id"] == first["id"]


async def test_a_bad_body_is_422_naming_the_field() -> None:
    async with serving(deck(), Native.http()) as served:
        client = served.client
        misspelt = await client.post("/runs", json={"name": "echo", "sesion_id": "s"})
        assert misspelt.status_code == 422
        assert misspelt.json()["field"] == "sesion_id"
        missing = await client.post("/runs", json={"input": 1})
        assert missing.status_code == 422 and missing.json()["field"] == "name"
        wrong_type = await client.post("/runs", json={"name": 5})
        assert wrong_type.status_code == 422 and wrong_type.json()["field"] == "name"
        not_json = await client.post(
            "/runs", content=b"{nope", headers={"content-type": "application/json"}
        )
        assert not_json.status_code == 422
        bad_input = await client.post("/runs", json={"name": "pair", "input": {"a": 1}})
        assert bad_input.status_code == 422
        assert bad_input.json()["field"] == "input.b"
        assert "missing 'b'" in bad_input.json()["detail"]


async def test_list_runs_pages_with_a_cursor_and_filters_by_status() -> None:
    async with serving(deck(), Native.http()) as served:
        client = served.client
        ids = [(await client.post("/runs", json={"name": "echo"})).json()["id"] for _ in range(3)]
        parked = (
            await client.post("/runs", json={"name": "approval", "input": {"order_id": "F"}})
        ).json()["id"]
        await _until_status(client, parked, "waiting_answer")
        first = (await client.get("/runs", params={"limit": 2})).json()
        assert [r["id"] for r in first["runs"]] == ids[:2]
        cursor = first["next_cursor"]
        rest = (await client.get("/runs", params={"limit": 2, "cursor": cursor})).json()
        assert [r["id"] for r in rest["runs"]] == [ids[2], parked]
        waiting = (await client.get("/runs", params={"status": "waiting_answer"})).json()
        assert [r["id"] for r in waiting["runs"]] == [parked]
        bad_cursor = await client.get("/runs", params={"cursor": "garbage"})
        assert bad_cursor.status_code == 422 and bad_cursor.json()["field"] == "cursor"
        bad_status = await client.get("/runs", params={"status": "sleeping"})
        assert bad_status.status_code == 422 and bad_status.json()["field"] == "status"


async def test_health_lists_the_catalog_the_plugins_and_the_store_answer() -> None:
    async with serving(deck(), Native.http()) as served:
        body = (await served.client.get("/health")).json()
        assert body["status"] == "ok"
        assert body["agents"] == [] and body["skills"] == []
        assert body["workflows"] == ["approval", "echo", "gated", "pair", "two_questions"]
        store = body["store"]
        assert store["status"] == "ok" and store["error"] is None
        assert store["backend"] and store["latency_ms"] >= 0
        names = [plugin["name"] for plugin in body["plugins"]]
        assert names == sorted(names) and names
        providing = {p["name"]: p["provides"] for p in body["plugins"]}
        assert any("memory" in provides.get("event_stores", []) for provides in providing.values())


async def test_health_says_the_store_is_failing_and_still_answers(tmp_path: Path) -> None:
    state = f"sqlite:///{tmp_path / 'state.db'}"
    served_deck = make_deck(workflows=[echo], settings=Settings(env={"AGENTDECK_STATE": state}))
    async with serving(served_deck, Native.http()) as served:
        await served_deck.service.store.close()  # what a store gone away looks like to a read
        body = (await served.client.get("/health")).json()
    assert body["status"] == "ok"
    assert body["store"]["status"] == "failing"
    assert body["store"]["error"]


async def test_routes_live_under_the_binding_path() -> None:
    async with serving(deck(), Native.http(path="/api")) as served:
        assert (await served.client.get("/api/health")).status_code == 200
        response = await served.client.get("/health")
        assert response.status_code == 404
        assert "/api" in response.json()["detail"]
        schema = (await served.client.get("/api/openapi.json")).json()
        assert "/api/runs" in schema["paths"]


async def _until_status(client: Any, run_id: str, status: str) -> None:
    """Follow the run's event stream until it stops, then check the status it reached."""
    async with client.stream("GET", f"/runs/{run_id}/events") as response:
        async for _ in response.aiter_lines():
            pass
    body = (await client.get(f"/runs/{run_id}")).json()
    if body["status"] != status:  # a resumed run may park again; follow once more
        async with client.stream(
            "GET", f"/runs/{run_id}/events", params={"from_seq": body["last_seq"] + 1}
        ) as response:
            async for _ in response.aiter_lines():
                pass
        body = (await client.get(f"/runs/{run_id}")).json()
    assert body["status"] == status


async def test_metrics_are_scrapeable_in_the_prometheus_text_format() -> None:
    async with serving(deck(), Native.http()) as served:
        started = await served.client.post(
            "/runs", json={"name": "pair", "input": {"a": 1, "b": 2}}
        )
        run = await served.exposure.deck.runs.get(started.json()["id"])
        assert await run == 3
        await served.client.post("/runs", json={"name": "approval", "input": {"order_id": "A"}})
        await asyncio.sleep(0.05)  # let the second run park on its question
        response = await served.client.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
        text = response.text
        assert 'agentdeck_runs_started_total{name="pair"} 1' in text
        assert 'agentdeck_runs_finished_total{name="pair",status="completed"} 1' in text
        assert 'agentdeck_run_suspensions_total{name="approval",status="waiting_answer"} 1' in text
        assert 'agentdeck_run_duration_seconds_count{name="pair",status="completed"} 1' in text
