"""Context over HTTP: a ``context_factory`` gives served runs the context their callables declare
(the original product's Known Issue #227: a served run always carried ``None``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException
from http_test_support import make_deck, serving

from agentdeck import WorkflowCtx, workflow
from agentdeck.bindings import Native
from agentdeck.memory import MemoryEventStore
from agentdeck.memory.control import MemoryControlPort
from agentdeck.memory.lease import MemoryLeasePort
from agentdeck_http import ServedCall


@dataclass
class Tenant:
    user: str


@workflow
async def whoami(ctx: WorkflowCtx[Tenant]) -> str:
    return f"{ctx.data.user} in {ctx.namespace}"


@workflow
async def confirm(ctx: WorkflowCtx[Tenant]) -> str:
    answer = await ctx.ask("sure?")
    return f"{ctx.data.user} said {answer}"


def tenant_from_header(call: ServedCall) -> Tenant:
    user = call.request.headers.get("x-user")
    if user is None:
        raise HTTPException(status_code=403, detail="who are you?")
    return Tenant(user=user)


def deck(**options: Any) -> Any:
    return make_deck(workflows=[whoami, confirm], context=Tenant, **options)


async def test_the_factorys_context_reaches_a_workflow_body_started_over_http() -> None:
    async with serving(deck(), Native.http(context_factory=tenant_from_header)) as served:
        started = await served.client.post(
            "/runs", json={"name": "whoami", "namespace": "acme"}, headers={"x-user": "alice"}
        )
        assert started.status_code == 201
        run = await served.exposure.deck.runs.get(started.json()["id"], namespace="acme")
        assert await run == "alice in acme"


async def test_an_async_factory_sees_what_is_being_started() -> None:
    seen: list[tuple[str, str, str | None]] = []

    async def factory(call: ServedCall) -> Tenant:
        seen.append((call.operation, call.name, call.namespace))
        return Tenant(user="bob")

    async with serving(deck(), Native.http(context_factory=factory)) as served:
        reply = await served.client.post("/workflows/whoami", json=None)
        assert reply.json() == {"output": "bob in None"}
    assert seen == [("workflow", "whoami", None)]


async def test_the_factory_refuses_a_request_with_its_own_status() -> None:
    async with serving(deck(), Native.http(context_factory=tenant_from_header)) as served:
        refused = await served.client.post("/runs", json={"name": "whoami"})
        assert refused.status_code == 403
        assert (await served.client.get("/runs")).json()["runs"] == []


async def test_a_continuation_in_the_starting_process_keeps_the_runs_own_context() -> None:
    async with serving(deck(), Native.http(context_factory=tenant_from_header)) as served:
        client = served.client
        run_id = (
            await client.post("/runs", json={"name": "confirm"}, headers={"x-user": "alice"})
        ).json()["id"]
        async with client.stream("GET", f"/runs/{run_id}/events") as response:
            async for _ in response.aiter_lines():
                pass
        answered = await client.post(
            f"/runs/{run_id}/answer", json={"value": "yes"}, headers={"x-user": "mallory"}
        )
        assert answered.status_code == 200
        run = await served.exposure.deck.runs.get(run_id)
        assert await run == "alice said yes"


async def test_a_continuation_in_another_process_gets_the_factorys_context() -> None:
    store, control = MemoryEventStore(), MemoryControlPort()
    shared = {"events": store, "control": control}
    binding = Native.http(context_factory=tenant_from_header)
    async with serving(deck(leases=MemoryLeasePort(), **shared), binding) as first:
        run_id = (
            await first.client.post("/runs", json={"name": "confirm"}, headers={"x-user": "alice"})
        ).json()["id"]
        async with first.client.stream("GET", f"/runs/{run_id}/events") as response:
            async for _ in response.aiter_lines():
                pass
    # A second server on the same store holds no context for the run: the factory supplies it.
    second_binding = Native.http(context_factory=tenant_from_header)
    async with serving(deck(leases=MemoryLeasePort(), **shared), second_binding) as second:
        answered = await second.client.post(
            f"/runs/{run_id}/answer", json={"value": "yes"}, headers={"x-user": "bob"}
        )
        assert answered.status_code == 200
        run = await second.exposure.deck.runs.get(run_id)
        assert await run == "bob said yes"
