"""The console's server side without a browser: the page shell and its CSP, turning the console
off, logging in with a key (cookie, CSRF token, Origin), and the cross-run routes the pages read
(``GET /runs`` newest first and by time, ``GET /inbox``, ``GET /runs/changes``)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from http_test_support import frames, make_deck, serving

from agentdeck import WorkflowCtx, workflow
from agentdeck.bindings import Native
from agentdeck_http.console.routes import CONTENT_SECURITY_POLICY

KEYS = {"key-acme": ["acme"], "key-globex": ["globex"]}


@workflow
async def ask(ctx: WorkflowCtx[Any]) -> Any:
    return await ctx.ask("How many?", schema=int)


@workflow
async def echo(value: Any = None) -> Any:
    return value


def deck() -> Any:
    return make_deck(workflows=[ask, echo])


async def login(client: httpx.AsyncClient, key: str) -> str:
    """Sign ``client`` in with ``key``; the session's CSRF token."""
    response = await client.post("/ui/login", json={"key": key})
    assert response.status_code == 200, response.text
    return str(response.json()["csrf"])


async def test_every_page_is_the_same_shell_under_a_strict_csp() -> None:
    async with serving(deck(), Native.http()) as served:
        client = served.client
        for path in ("/ui/", "/ui/inbox", "/ui/health", "/ui/runs/some-run", "/ui/sessions/s"):
            page = await client.get(path)
            assert page.status_code == 200, path
            assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
            assert "script-src 'self'" in CONTENT_SECURITY_POLICY
            assert "unsafe-inline" not in CONTENT_SECURITY_POLICY
            assert '<script type="module" src="/ui/static/app.js">' in page.text
            assert "<script>" not in page.text  # nothing inline
        bare = await client.get("/ui", follow_redirects=False)
        assert bare.status_code == 308 and bare.headers["location"] == "/ui/"
        script = await client.get("/ui/static/app.js")
        assert script.headers["content-type"].startswith("text/javascript")
        assert (await client.get("/ui/static/../routes.py")).status_code == 404
        assert (await client.get("/ui/static/nothing.js")).status_code == 404


async def test_the_console_can_be_turned_off_and_the_api_stays() -> None:
    async with serving(deck(), Native.http(console=False)) as served:
        assert (await served.client.get("/ui/")).status_code == 404
        assert (await served.client.get("/ui/static/app.js")).status_code == 404
        assert (await served.client.get("/health")).status_code == 200


async def test_a_key_is_exchanged_for_an_httponly_strict_cookie_that_acts_like_it() -> None:
    async with serving(deck(), Native.http(api_keys=KEYS)) as served:
        client = served.client
        refused = await client.post("/ui/login", json={"key": "nope"})
        assert refused.status_code == 401
        assert "agentdeck_console" not in client.cookies

        response = await client.post("/ui/login", json={"key": "key-acme"})
        cookie = response.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        csrf = response.json()["csrf"]
        assert (await client.get("/ui/session")).json()["namespaces"] == ["acme"]

        started = await client.post("/runs", json={"name": "echo"}, headers={"X-CSRF-Token": csrf})
        assert started.status_code == 201 and started.json()["namespace"] == "acme"
        listed = (await client.get("/runs")).json()["runs"]
        assert [run["id"] for run in listed] == [started.json()["id"]]

        no_token = await client.post("/runs", json={"name": "echo"})
        assert no_token.status_code == 403
        wrong_token = await client.post(
            "/runs", json={"name": "echo"}, headers={"X-CSRF-Token": "guess"}
        )
        assert wrong_token.status_code == 403
        elsewhere = await client.post(
            "/runs",
            json={"name": "echo"},
            headers={"X-CSRF-Token": csrf, "Origin": "https://evil.example"},
        )
        assert elsewhere.status_code == 403
        assert len((await client.get("/runs")).json()["runs"]) == 1  # none of those started

        await client.post("/ui/logout", headers={"X-CSRF-Token": csrf})
        assert (await client.get("/runs")).status_code == 401


async def test_a_login_from_another_origin_is_refused() -> None:
    async with serving(deck(), Native.http(api_keys=KEYS)) as served:
        response = await served.client.post(
            "/ui/login", json={"key": "key-acme"}, headers={"Origin": "https://evil.example"}
        )
        assert response.status_code == 403
        assert "agentdeck_console" not in served.client.cookies


async def test_runs_list_newest_first_by_cursor_and_by_time_window() -> None:
    async with serving(deck(), Native.http()) as served:
        client = served.client
        ids = []
        for number in range(5):
            ids.append((await client.post("/runs", json={"name": "echo", "input": number})).json())
        newest: list[str] = []
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"order": "newest", "limit": 2}
            if cursor:
                params["cursor"] = cursor
            page = (await client.get("/runs", params=params)).json()
            newest += [run["id"] for run in page["runs"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert newest == [run["id"] for run in reversed(ids)]

        middle = datetime.fromisoformat(ids[2]["created_at"])
        after = await client.get(
            "/runs", params={"created_after": (middle - timedelta(microseconds=1)).isoformat()}
        )
        assert [run["id"] for run in after.json()["runs"]] == [run["id"] for run in ids[2:]]
        before = await client.get("/runs", params={"created_before": middle.isoformat()})
        assert {run["id"] for run in before.json()["runs"]} <= {run["id"] for run in ids[:3]}
        future = (datetime.now(UTC) + timedelta(days=1)).isoformat()
        assert (await client.get("/runs", params={"created_after": future})).json()["runs"] == []

        for bad in ("0.5", "2026-01-31T12:00:00", "yesterday"):
            refused = await client.get("/runs", params={"created_before": bad})
            assert refused.status_code == 422, bad
            assert refused.json()["field"] == "created_before"


async def test_the_inbox_lists_open_questions_with_their_expected_shape() -> None:
    async with serving(deck(), Native.http(api_keys=KEYS)) as served:
        client = served.client
        acme = {"X-API-Key": "key-acme"}
        run_id = (await client.post("/runs", json={"name": "ask"}, headers=acme)).json()["id"]
        for _ in range(200):
            items = (await client.get("/inbox", headers=acme)).json()["items"]
            if items:
                break
            await asyncio.sleep(0.02)
        [item] = items
        assert item["run"]["id"] == run_id
        assert item["interrupt"]["payload"] == "How many?"
        assert item["interrupt"]["expected"]["json_schema"]["type"] == "integer"
        other = await client.get("/inbox", headers={"X-API-Key": "key-globex"})
        assert other.json()["items"] == []


async def test_runs_changes_streams_the_current_runs_then_each_change() -> None:
    async with serving(deck(), Native.http()) as served:
        client = served.client
        first = (await client.post("/runs", json={"name": "echo", "input": 1})).json()["id"]
        seen: list[tuple[str, str]] = []
        async with client.stream("GET", "/runs/changes") as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            second = None
            async for frame in frames(response):
                assert frame.event == "run.changed"
                run = frame.json
                seen.append((run["id"], run["status"]))
                if second is None and run["id"] == first and run["status"] == "completed":
                    second = (await client.post("/runs", json={"name": "ask"})).json()["id"]
                if second is not None and (second, "waiting_answer") in seen:
                    break
        assert (first, "completed") in seen
        assert seen.index((first, "completed")) < seen.index((second, "waiting_answer"))


@pytest.mark.parametrize("namespace", ["bad\x00name", "x" * 300])
async def test_runs_changes_refuses_a_bad_namespace_before_it_streams(namespace: str) -> None:
    async with serving(deck(), Native.http()) as served:
        response = await served.client.get("/runs/changes", params={"namespace": namespace})
        assert response.status_code == 422, response.text
        assert response.json()["field"].startswith("namespace"), response.json()
