"""API keys and namespaces, the body cap, the origin check, and options refused at the door."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from http_test_support import frames, make_deck, serving

from agentdeck import WorkflowCtx, workflow
from agentdeck.bindings import Native
from agentdeck.errors import ConfigError

KEYS = {"key-acme": ["acme"], "key-globex": ["globex", None]}
ACME = {"Authorization": "Bearer key-acme"}
GLOBEX = {"X-API-Key": "key-globex"}


@workflow
async def ask(ctx: WorkflowCtx[Any]) -> Any:
    return await ctx.ask("approve?")


@workflow
async def echo(value: Any = None) -> Any:
    return value


def deck() -> Any:
    return make_deck(workflows=[ask, echo])


async def test_two_namespaces_are_isolated_under_api_keys() -> None:
    async with serving(deck(), Native.http(api_keys=KEYS)) as served:
        client = served.client
        started = await client.post("/runs", json={"name": "ask"}, headers=ACME)
        assert started.status_code == 201
        assert started.json()["namespace"] == "acme"  # the key's first namespace
        run_id = started.json()["id"]
        async with client.stream("GET", f"/runs/{run_id}/events", headers=ACME) as response:
            assert [f.event async for f in frames(response)][-1] == "run.interrupted"

        # globex can neither read nor control acme's run, and cannot tell that it exists
        for namespace in (None, "acme", "globex"):
            params = {"namespace": namespace} if namespace else {}
            for method, path, body in [
                ("GET", f"/runs/{run_id}", None),
                ("GET", f"/runs/{run_id}/events", None),
                ("POST", f"/runs/{run_id}/pause", None),
                ("POST", f"/runs/{run_id}/cancel", None),
                ("POST", f"/runs/{run_id}/resume", None),
                ("POST", f"/runs/{run_id}/answer", {"value": "yes"}),
            ]:
                response = await client.request(
                    method, path, params=params, json=body, headers=GLOBEX
                )
                assert response.status_code == 404, (method, path, namespace)
                ghost = await client.request(  # a run that does not exist at all
                    method, path.replace(run_id, "0" * 32), params=params, json=body, headers=GLOBEX
                )
                assert ghost.status_code == 404
                assert response.json() == {
                    **ghost.json(),
                    "detail": ghost.json()["detail"].replace("0" * 32, run_id),
                }
        listing = await client.get("/runs", headers=GLOBEX)
        assert listing.json()["runs"] == []
        foreign = await client.get("/runs", params={"namespace": "acme"}, headers=GLOBEX)
        assert foreign.status_code == 403
        start_there = await client.post(
            "/runs", json={"name": "echo", "namespace": "acme"}, headers=GLOBEX
        )
        assert start_there.status_code == 403 and start_there.json()["field"] == "namespace"

        # the run is untouched, and acme still reaches it
        mine = (await client.get("/runs", headers=ACME)).json()["runs"]
        assert [r["id"] for r in mine] == [run_id]
        assert mine[0]["status"] == "waiting_answer"
        answered = await client.post(f"/runs/{run_id}/answer", json={"value": 1}, headers=ACME)
        assert answered.status_code == 200


async def test_a_key_granting_several_namespaces_uses_the_one_named() -> None:
    async with serving(deck(), Native.http(api_keys=KEYS)) as served:
        default = await served.client.post("/runs", json={"name": "echo"}, headers=GLOBEX)
        assert default.json()["namespace"] == "globex"
        response = await served.client.post(
            "/runs", json={"name": "echo", "key": "k"}, headers=GLOBEX, params={}
        )
        assert response.status_code == 201
        run_id = default.json()["id"]
        assert (await served.client.get(f"/runs/{run_id}", headers=GLOBEX)).status_code == 200
        unnamed = (await served.client.get("/runs", headers=GLOBEX)).json()["runs"]
        assert len(unnamed) == 2


async def test_requests_without_a_valid_key_are_401() -> None:
    async with serving(deck(), Native.http(api_keys=KEYS)) as served:
        missing = await served.client.post("/runs", json={"name": "echo"})
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"].startswith("Bearer")
        wrong = await served.client.get("/runs", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        assert (await served.client.get("/runs", headers={"X-API-Key": "key-acme"})).is_success


async def test_health_names_the_catalog_only_to_a_key_holder() -> None:
    async with serving(deck(), Native.http(api_keys=KEYS)) as served:
        anonymous = (await served.client.get("/health")).json()
        assert anonymous == {
            "status": "ok",
            "agents": [],
            "workflows": [],
            "skills": [],
            "plugins": [],
            "store": None,
        }
        known = (await served.client.get("/health", headers=ACME)).json()
        assert known["workflows"] == ["ask", "echo"]
        assert known["plugins"] and known["store"]["status"] == "ok"


async def test_a_body_over_the_cap_is_413_with_or_without_content_length() -> None:
    async with serving(deck(), Native.http(max_body_bytes=200)) as served:
        client = served.client
        small = await client.post("/runs", json={"name": "echo", "input": "x" * 50})
        assert small.status_code == 201
        declared = await client.post("/runs", json={"name": "echo", "input": "x" * 500})
        assert declared.status_code == 413
        assert declared.json()["error"] == "too_large"

        async def chunks() -> AsyncIterator[bytes]:
            yield b'{"name": "echo", "input": "'
            for _ in range(10):
                yield b"y" * 50
            yield b'"}'

        streamed = await client.post(
            "/runs", content=chunks(), headers={"content-type": "application/json"}
        )
        assert "content-length" not in streamed.request.headers
        assert streamed.status_code == 413


async def test_the_origin_check_refuses_other_sites_and_answers_cors_for_listed_ones() -> None:
    binding = Native.http(allowed_origins=["https://app.example.com"])
    async with serving(deck(), binding) as served:
        client = served.client
        evil = await client.post(
            "/runs", json={"name": "echo"}, headers={"Origin": "https://evil.example"}
        )
        assert evil.status_code == 403 and evil.json()["error"] == "origin_refused"
        ours = await client.post(
            "/runs", json={"name": "echo"}, headers={"Origin": "https://app.example.com"}
        )
        assert ours.status_code == 201
        assert ours.headers["access-control-allow-origin"] == "https://app.example.com"
        preflight = await client.options(
            "/runs",
            headers={
                "Origin": "https://app.example.com",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        assert preflight.status_code == 200
        no_origin = await client.post("/runs", json={"name": "echo"})  # not a browser
        assert no_origin.status_code == 201


@pytest.mark.parametrize(
    ("options", "names"),
    [
        ({"api_keys": {}}, "api_keys"),
        ({"api_keys": {"k": []}}, "api_keys"),
        ({"api_keys": {" k": ["a"]}}, "api_keys"),
        ({"public_kinds": ["Tool Call"]}, "public_kinds"),
        ({"max_body_bytes": 0}, "max_body_bytes"),
        ({"allowed_origins": ["app.example.com"]}, "allowed_origins"),
        ({"heartbeat": 0}, "heartbeat"),
        ({"path": "api"}, "path"),
        ({"context_factory": "not callable"}, "context_factory"),
    ],
)
def test_bad_options_are_refused_when_the_binding_is_built(
    options: dict[str, Any], names: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        Native.http(**options)
    assert refused.value.setting == names
