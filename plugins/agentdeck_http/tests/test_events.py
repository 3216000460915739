"""The SSE stream of a run's events: canonical frames, resumable without loss or duplicates."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from http_test_support import frames, make_deck, serving

from agentdeck import WorkflowCtx, workflow
from agentdeck.bindings import Native
from agentdeck_http.streams import follow_until_closing

GATES: dict[str, asyncio.Event] = {}


@workflow
async def chatter(ctx: WorkflowCtx[Any]) -> str:
    """Five reports, a gate, five more, another gate, then done."""
    for i in range(5):
        await ctx.report(f"first {i}")
    await GATES["one"].wait()
    for i in range(5):
        await ctx.report(f"second {i}")
    await GATES["two"].wait()
    return "done"


@workflow
async def asks(ctx: WorkflowCtx[Any]) -> Any:
    await ctx.report("about to ask")
    return await ctx.ask("go on?")


def _gates() -> None:
    GATES["one"], GATES["two"] = asyncio.Event(), asyncio.Event()


def _open_gates() -> None:
    GATES["one"].set()
    GATES["two"].set()


def deck() -> Any:
    return make_deck(workflows=[chatter, asks])


async def _start(client: Any, name: str) -> str:
    response = await client.post("/runs", json={"name": name})
    assert response.status_code == 201
    return str(response.json()["id"])


async def test_frames_carry_seq_kind_and_the_events_own_json() -> None:
    _gates()
    _open_gates()
    async with serving(deck(), Native.http()) as served:
        run_id = await _start(served.client, "chatter")
        async with served.client.stream("GET", f"/runs/{run_id}/events") as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            received = [frame async for frame in frames(response)]
        run = await served.exposure.deck.runs.get(run_id)
        canonical = [event async for event in run.events()]
    assert [f.id for f in received] == [str(e.seq) for e in canonical]
    assert [f.event for f in received] == [e.kind for e in canonical]
    assert ["\n".join(f.data) for f in received] == [e.to_json() for e in canonical]
    assert received[-1].event == "run.completed"


async def test_reconnecting_with_last_event_id_mid_run_yields_exactly_the_missing_events() -> None:
    _gates()
    async with serving(deck(), Native.http()) as served:
        client = served.client
        run_id = await _start(client, "chatter")
        first: list[int] = []
        async with client.stream("GET", f"/runs/{run_id}/events") as response:
            async for frame in frames(response):
                first.append(int(frame.id or -1))
                if frame.id == "3":
                    break  # the connection drops here, mid-run
        GATES["one"].set()  # the run goes on while nobody listens
        second: list[int] = []
        async with client.stream(
            "GET", f"/runs/{run_id}/events", headers={"Last-Event-ID": "3"}
        ) as response:
            async for frame in frames(response):
                second.append(int(frame.id or -1))
                if frame.id == "10":
                    GATES["two"].set()  # more arrives live, after the reconnect
        record = (await client.get(f"/runs/{run_id}")).json()
    assert first == [0, 1, 2, 3]
    assert second == list(range(4, record["last_seq"] + 1))
    assert record["status"] == "completed"


async def test_a_stream_cancelled_while_it_waits_closes_its_source_cleanly() -> None:
    """What happens when a client goes away from an idle stream: the response task is cancelled
    while the stream waits for the next event."""
    closed = asyncio.Event()

    async def source() -> AsyncIterator[Any]:
        try:
            yield "first"
            await asyncio.Event().wait()  # nothing more for now
            yield "never"
        finally:
            closed.set()

    exposure = deck().expose(Native.http())
    received: list[Any] = []

    async def consume() -> None:
        async for item in follow_until_closing(exposure, source()):
            received.append(item)

    consumer = asyncio.create_task(consume())
    while not received:
        await asyncio.sleep(0)
    await asyncio.sleep(0)  # let it start waiting for the second item
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer  # no "aclose(): asynchronous generator is already running"
    assert closed.is_set()
    assert received == ["first"]


async def test_from_seq_is_inclusive_and_last_event_id_wins_over_it() -> None:
    _gates()
    _open_gates()
    async with serving(deck(), Native.http()) as served:
        client = served.client
        run_id = await _start(client, "chatter")
        async with client.stream("GET", f"/runs/{run_id}/events") as response:
            everything = [int(f.id or -1) async for f in frames(response)]
        async with client.stream(
            "GET", f"/runs/{run_id}/events", params={"from_seq": 4, "follow": "false"}
        ) as response:
            from_four = [int(f.id or -1) async for f in frames(response)]
        async with client.stream(
            "GET",
            f"/runs/{run_id}/events",
            params={"from_seq": 4},
            headers={"Last-Event-ID": "8"},
        ) as response:
            after_eight = [int(f.id or -1) async for f in frames(response)]
    assert from_four == everything[4:]
    assert after_eight == everything[9:]


async def test_a_snapshot_ends_at_the_latest_event_of_a_live_run() -> None:
    _gates()
    async with serving(deck(), Native.http()) as served:
        client = served.client
        run_id = await _start(client, "chatter")
        async with client.stream("GET", f"/runs/{run_id}/events") as response:
            async for frame in frames(response):
                if frame.id == "5":
                    break
        async with client.stream(
            "GET", f"/runs/{run_id}/events", params={"follow": "false"}
        ) as response:
            snapshot = [int(f.id or -1) async for f in frames(response)]
        _open_gates()
    assert snapshot == [0, 1, 2, 3, 4, 5]


async def test_after_the_terminal_event_a_reconnect_gets_204_so_event_source_stops() -> None:
    _gates()
    _open_gates()
    async with serving(deck(), Native.http()) as served:
        client = served.client
        run_id = await _start(client, "chatter")
        async with client.stream("GET", f"/runs/{run_id}/events") as response:
            last = [f async for f in frames(response)][-1]
        assert last.event == "run.completed"
        after = await client.get(f"/runs/{run_id}/events", headers={"Last-Event-ID": str(last.id)})
    assert after.status_code == 204


async def test_a_stream_ends_at_a_question_and_a_reconnect_waits_for_the_answer() -> None:
    async with serving(deck(), Native.http()) as served:
        client = served.client
        run_id = await _start(client, "asks")
        async with client.stream("GET", f"/runs/{run_id}/events") as response:
            parked = [f async for f in frames(response)]
        assert parked[-1].event == "run.interrupted"
        resumed: list[str | None] = []
        async with client.stream(
            "GET", f"/runs/{run_id}/events", headers={"Last-Event-ID": str(parked[-1].id)}
        ) as response:
            answered = await client.post(f"/runs/{run_id}/answer", json={"value": "yes"})
            assert answered.status_code == 200
            resumed = [f.event async for f in frames(response)]
    assert resumed == ["answer.recorded", "run.resumed", "run.completed"]


async def test_replaying_a_parked_then_cancelled_run_from_the_start_reaches_its_end() -> None:
    async with serving(deck(), Native.http()) as served:
        client = served.client
        run_id = await _start(client, "asks")
        async with client.stream("GET", f"/runs/{run_id}/events") as response:
            assert [f.event async for f in frames(response)][-1] == "run.interrupted"
        cancelled = await client.post(f"/runs/{run_id}/cancel", json={"reason": "not needed"})
        assert cancelled.status_code == 202
        async with client.stream("GET", f"/runs/{run_id}/events?from_seq=0") as response:
            replayed = [f.event async for f in frames(response)]
    assert replayed[-1] == "run.cancelled"
    assert replayed.count("run.interrupted") == 1


async def test_an_idle_stream_sends_heartbeat_comments() -> None:
    _gates()
    async with serving(deck(), Native.http(heartbeat=0.05)) as served:
        client = served.client
        run_id = await _start(client, "chatter")
        async with client.stream("GET", f"/runs/{run_id}/events") as response:
            async for frame in frames(response, keep_comments=True):
                if frame.comments and not frame.data:
                    assert frame.comments[0].startswith("ping")
                    break
        _open_gates()


async def test_the_kind_allowlist_keeps_other_kinds_off_the_wire() -> None:
    _gates()
    _open_gates()
    async with serving(deck(), Native.http(public_kinds=["run.*"])) as served:
        client = served.client
        run_id = await _start(client, "chatter")
        async with client.stream("GET", f"/runs/{run_id}/events") as response:
            received = [f async for f in frames(response)]
    assert [f.event for f in received] == ["run.started", "run.completed"]
    assert received[-1].id == "11"  # ids stay the store's seqs


async def test_a_last_event_id_that_is_not_a_seq_is_422_naming_the_header() -> None:
    async with serving(deck(), Native.http()) as served:
        run_id = await _start(served.client, "asks")
        response = await served.client.get(
            f"/runs/{run_id}/events", headers={"Last-Event-ID": "abc"}
        )
    assert response.status_code == 422
    assert response.json()["field"] == "Last-Event-ID"
