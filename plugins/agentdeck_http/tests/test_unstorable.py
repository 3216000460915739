"""Same request, same answer on every store (issue 20, items 4 and 8): text no store can hold
(NUL, lone surrogates) is a 422 naming the field on every route it can reach -- never a 500 from
the one backend that refuses it -- and so is workflow input of the wrong type."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from http_test_support import make_deck, serving

from agentdeck import WorkflowCtx, workflow
from agentdeck.bindings import Native
from agentdeck.settings import Settings
from agentdeck.testing.fixtures import PostgresSchema, RedisPrefix


@workflow
async def echo(value: Any = None) -> Any:
    return value


@workflow
async def asks(ctx: WorkflowCtx[Any]) -> Any:
    return await ctx.ask("go on?")


@workflow
async def refund(order_id: int, amount: float) -> float:
    return amount


@pytest.fixture(params=["memory", "sqlite", "postgresql", "redis"])
def state_url(request: pytest.FixtureRequest, tmp_path: Any) -> str:
    if request.param == "memory":
        return "memory://"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.db'}"
    if request.param == "postgresql":
        schema: PostgresSchema = request.getfixturevalue("postgres_schema")
        return schema.url
    prefix: RedisPrefix = request.getfixturevalue("redis_prefix")
    return f"{prefix.url}?prefix={prefix.prefix}"


Probe = Callable[[httpx.AsyncClient, str], Awaitable[httpx.Response]]

NUL, SURROGATE = "a\x00b", "\ud800"


def _json_with(text: str) -> dict[str, Any]:
    return {"name": "echo", "input": {"value": text}}


PROBES: list[tuple[str, Probe, str]] = [
    ("input", lambda c, _: c.post("/runs", json=_json_with(NUL)), "input"),
    ("input key", lambda c, _: c.post("/runs", json={"name": "echo", "input": {NUL: 1}}), "input"),
    (
        "session_id",
        lambda c, _: c.post("/runs", json={"name": "echo", "session_id": NUL}),
        "session_id",
    ),
    ("key", lambda c, _: c.post("/runs", json={"name": "echo", "key": NUL}), "key"),
    ("run id path", lambda c, _: c.get("/runs/r%00n"), "id"),
    ("run id answer path", lambda c, _: c.post("/runs/r%00n/answer", json={"value": 1}), "id"),
    ("query session_id", lambda c, _: c.get("/runs", params={"session_id": NUL}), "session_id"),
    ("query key", lambda c, _: c.get("/runs", params={"key": NUL}), "key"),
    ("answer value", lambda c, run: c.post(f"/runs/{run}/answer", json={"value": NUL}), "value"),
    (
        "answer interrupt_id",
        lambda c, run: c.post(f"/runs/{run}/answer", json={"value": 1, "interrupt_id": NUL}),
        "interrupt_id",
    ),
    (
        "typed input",
        lambda c, _: c.post(
            "/runs", json={"name": "refund", "input": {"order_id": 5, "amount": "lots"}}
        ),
        "input.amount",
    ),
]


async def _parked(client: httpx.AsyncClient) -> str:
    run_id: str = (await client.post("/runs", json={"name": "asks"})).json()["id"]
    for _ in range(200):
        if (await client.get(f"/runs/{run_id}")).json()["status"] == "waiting_answer":
            return run_id
        await asyncio.sleep(0.02)
    raise AssertionError(f"run {run_id} never parked")


async def test_text_no_store_can_hold_is_a_422_naming_the_field_on_every_store(
    state_url: str,
) -> None:
    deck = make_deck(
        workflows=[echo, asks, refund], settings=Settings(env={"AGENTDECK_STATE": state_url})
    )
    async with serving(deck, Native.http()) as served:
        client = served.client
        parked = await _parked(client)
        outcomes = {}
        for label, probe, _field in PROBES:
            response = await probe(client, parked)
            outcomes[label] = (response.status_code, response.json().get("field"))
        assert outcomes == {label: (422, field) for label, _probe, field in PROBES}
        # Nothing the probes sent was recorded: the parked run is the only run, still waiting.
        listing = (await client.get("/runs")).json()
        assert [run["id"] for run in listing["runs"]] == [parked]
        assert listing["runs"][0]["status"] == "waiting_answer"
        accepted = await client.post(f"/runs/{parked}/answer", json={"value": "a\x01b\uffff"})
        assert accepted.status_code == 200
