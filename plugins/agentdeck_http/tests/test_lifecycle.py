"""The serving surface's lifecycle: startup (503 before it), the lifespan, drain, shutdown,
several bindings at once, and the errors of a bad exposure."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from http_test_support import SAFETY, frames, make_deck, serving
from starlette.applications import Starlette
from starlette.routing import Mount

from agentdeck import Deck, WorkflowCtx, workflow
from agentdeck.bindings import Native
from agentdeck.deck.deck import DeckState
from agentdeck.deck.serving import Exposure, ExposureState
from agentdeck.errors import ConfigError
from agentdeck.memory import MemoryEventStore
from agentdeck.ports import Binding
from agentdeck.settings import Settings
from agentdeck.vocabulary import RunStatus

GATES: dict[str, asyncio.Event] = {}


@workflow
async def busy(ctx: WorkflowCtx[Any]) -> str:
    """Works until its gate opens, then reaches a safe point."""
    await ctx.report("working")
    await GATES["busy"].wait()
    await ctx.safepoint()
    return "finished"


@workflow
async def asks(ctx: WorkflowCtx[Any]) -> Any:
    return await ctx.ask("go on?")


@workflow
async def echo(value: Any = None) -> Any:
    return value


def deck(**options: Any) -> Deck:
    return make_deck(workflows=[busy, asks, echo], **options)


async def until(condition: Callable[[], bool]) -> None:
    """Wait for ``condition`` (checked as the loop turns), bounded so a bug cannot hang."""
    async with asyncio.timeout(SAFETY):
        while not condition():
            await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def plain_uvicorn(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    """Serve any ASGI app with a stock uvicorn server (not the exposure's)."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    task = asyncio.create_task(server.serve())
    await until(lambda: server.started or task.done())
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            yield client
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, SAFETY)


# ----------------------------------------------------------------------------- startup


async def test_an_app_mounted_without_its_lifespan_answers_503_starting() -> None:
    served = deck()
    host = Starlette(routes=[Mount("/agents", app=served.asgi())])
    async with plain_uvicorn(host) as client:
        response = await client.post("/agents/runs", json={"name": "echo"})
        assert response.status_code == 503
        assert response.json() == {"status": "starting"}
        assert (await client.get("/agents/health")).status_code == 503
    assert served.state is DeckState.NEW  # nothing was touched


async def test_the_exposures_lifespan_opens_and_closes_a_mounted_deck() -> None:
    served = deck()
    exposure = served.expose(Native.http())
    host = FastAPI(lifespan=exposure.lifespan)
    host.mount("/agents", exposure.asgi())
    async with plain_uvicorn(host) as client:
        assert served.is_open
        started = await client.post("/agents/runs", json={"name": "echo", "input": 3})
        assert started.status_code == 201
        assert started.headers["location"].endswith(f"/runs/{started.json()['id']}")
    assert served.state is DeckState.CLOSED


async def test_a_deck_that_cannot_open_fails_serve_async_with_the_reason() -> None:
    broken = deck(settings=Settings(env={"AGENTDECK_EVENTS": "nowhere://x"}))
    with pytest.raises(ConfigError) as refused:
        await broken.serve_async(Native.http(), port=0, log_level="critical")
    assert "nowhere" in str(refused.value)


async def test_a_deck_the_caller_opened_is_left_open_and_its_runs_keep_going() -> None:
    GATES["busy"] = asyncio.Event()
    served = deck()
    async with served:
        async with serving(served, Native.http()) as http:
            run_id = (await http.client.post("/runs", json={"name": "busy"})).json()["id"]
        assert served.is_open
        run = await served.runs.get(run_id)
        assert await run.status() is RunStatus.RUNNING
        GATES["busy"].set()
        assert await run == "finished"


# ----------------------------------------------------------------------------- drain


async def test_a_drain_refuses_new_runs_parks_live_ones_and_ends_open_streams() -> None:
    GATES["busy"] = asyncio.Event()
    store = MemoryEventStore()
    served = deck(events=store)
    async with serving(served, Native.http(), grace=SAFETY) as http:
        client = http.client
        run_id = (await client.post("/runs", json={"name": "busy"})).json()["id"]
        parked_id = (await client.post("/runs", json={"name": "asks"})).json()["id"]
        async with client.stream("GET", f"/runs/{parked_id}/events") as response:
            question = [f async for f in frames(response)][-1]
        async with (
            client.stream("GET", f"/runs/{run_id}/events") as live,
            client.stream(
                "GET", f"/runs/{parked_id}/events", headers={"Last-Event-ID": str(question.id)}
            ) as waiting,
        ):
            http.exposure.request_shutdown()  # what SIGTERM does
            await until(lambda: http.exposure.state is ExposureState.DRAINING)

            refused = await client.post("/runs", json={"name": "echo"})
            assert refused.status_code == 503
            assert refused.json() == {"status": "draining"}
            assert refused.headers["retry-after"] == "1"
            answer = await client.post(f"/runs/{parked_id}/answer", json={"value": 1})
            assert answer.status_code == 503
            assert (await client.get("/health")).json() == {"status": "draining"}
            assert (await client.get(f"/runs/{run_id}")).status_code == 200  # reads still work

            GATES["busy"].set()  # the live run reaches its safe point and parks
            live_kinds = [f.event async for f in frames(live)]
            assert live_kinds[-3:] == ["control.requested", "control.observed", "run.paused"]
            assert [f async for f in frames(waiting)] == []  # ended by the drain, nothing lost
        await asyncio.wait_for(http.task, SAFETY)
    assert served.state is DeckState.CLOSED
    record = await store.get_run(run_id)
    assert record is not None and record.status is RunStatus.PAUSED
    [paused] = await store.read(run_id, from_seq=record.last_seq)
    assert paused.payload.reason == "deck closing"  # type: ignore[union-attr]


# ----------------------------------------------------------------------------- several bindings


class Recorder(Binding):
    """A running binding: once the deck is open it starts a run itself, then waits."""

    name: ClassVar[str] = "recorder"

    def __init__(self) -> None:
        self.run_ids: list[str] = []
        self.cancelled = False

    async def serve(self, deck: Any) -> None:
        run = await deck.runs.start("echo", "from the recorder")
        self.run_ids.append(run.id)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise


async def test_one_run_is_reachable_over_several_bindings_at_once() -> None:
    recorder = Recorder()
    served = deck()
    async with serving(served, Native.http(path="/a"), Native.http(path="/b"), recorder) as http:
        client = http.client
        run_id = (await client.post("/a/runs", json={"name": "echo", "input": 5})).json()["id"]
        streams = []
        for prefix in ("/a", "/b"):
            async with client.stream("GET", f"{prefix}/runs/{run_id}/events") as response:
                streams.append(["\n".join(f.data) async for f in frames(response)])
        assert streams[0] == streams[1]
        canonical = [e.to_json() async for e in (await served.runs.get(run_id)).events()]
        assert streams[0] == canonical

        await until(lambda: bool(recorder.run_ids))
        seen = await client.get(f"/b/runs/{recorder.run_ids[0]}")
        assert seen.status_code == 200 and seen.json()["name"] == "echo"
    assert recorder.cancelled


class Once(Binding):
    """A running binding that plays one run to its end and returns (or fails)."""

    name: ClassVar[str] = "once"

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.result: Any = None

    async def serve(self, deck: Any) -> None:
        self.result = await deck.run("echo", "hello")
        if self.fail:
            raise RuntimeError("the binding broke")


async def test_without_a_listener_serving_ends_when_the_running_bindings_do() -> None:
    served, once = deck(), Once()
    await served.serve_async(once)
    assert once.result == "hello"
    assert served.state is DeckState.CLOSED


async def test_a_running_binding_that_fails_fails_serving_without_a_listener() -> None:
    served = deck()
    with pytest.raises(RuntimeError, match="the binding broke"):
        await served.serve_async(Once(fail=True))
    assert served.state is DeckState.CLOSED


async def test_listener_options_without_a_listener_are_refused() -> None:
    with pytest.raises(ConfigError, match="log_level"):
        await deck().serve_async(Once(), log_level="info")


async def test_the_server_binds_loopback_by_default() -> None:
    async with serving(deck(), Native.http()) as http:
        assert [host for host, _port in http.exposure.addresses] == ["127.0.0.1"]


@pytest.mark.parametrize("grace", [-1, float("inf"), "5", True])
def test_a_bad_grace_is_refused(grace: Any) -> None:
    with pytest.raises(ConfigError) as refused:
        Exposure(deck(), [Native.http()], grace=grace)
    assert refused.value.setting == "grace"


async def test_bindings_can_be_named_by_their_registration() -> None:
    exposure = deck().expose("http")
    assert [type(b).__name__ for b in exposure.bindings] == ["Native"]


async def test_no_bindings_means_native_http() -> None:
    exposure = deck().expose()
    assert isinstance(exposure.bindings[0], Native)
    assert exposure.bindings[0].mount_path == ""


@pytest.mark.parametrize(
    ("bindings", "message"),
    [
        ((Native,), "pass an instance"),
        ((object(),), "take bindings"),
        ((Native.http(), Native.http()), "both mount at '/'"),
        ((Native.http(path="/x"), Native.http(path="/x/")), "both mount at '/x'"),
        (("no-such-binding",), "available: http"),
    ],
)
def test_a_bad_set_of_bindings_is_refused_naming_the_problem(
    bindings: tuple[Any, ...], message: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        Exposure(deck(), bindings)
    assert message in str(refused.value)


def test_the_same_binding_twice_is_refused() -> None:
    binding = Native.http()
    with pytest.raises(ConfigError, match="given twice"):
        Exposure(deck(), [binding, binding])


async def test_serve_refuses_to_run_inside_an_event_loop() -> None:
    with pytest.raises(ConfigError, match="serve_async"):
        deck().serve(Native.http())


@pytest.mark.parametrize("option", ["workers", "reload", "not_an_option"])
async def test_serve_options_uvicorn_cannot_honour_here_are_refused(option: str) -> None:
    with pytest.raises(ConfigError) as refused:
        await deck().serve_async(Native.http(), port=0, **{option: 2})
    assert option in str(refused.value)
