"""The served-deck-auth example, run offline: `server.py` in a process of its own (its model a
loopback server owned by this test), the client against it, and what the keys let through."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import runpy
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from agentdeck import Deck, Settings
from agentdeck_openai.testing import LoopbackModelServer

HERE = Path(__file__).resolve().parent
PROVIDER_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "AGENTDECK_STATE")
ACME = {"Authorization": "Bearer acme-dev-key"}
GLOBEX = {"X-API-Key": "globex-dev-key"}


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"served_deck_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


server_module = _load("server")
client_module = _load("client")


def readme_output() -> str:
    """The block the README promises under "Expected output"."""
    after = (HERE / "README.md").read_text(encoding="utf-8").split("Expected output", 1)[1]
    return after.split("```text\n", 1)[1].split("```", 1)[0]


@dataclass(frozen=True)
class Served:
    url: str
    state: str
    model: LoopbackModelServer


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`python server.py --port N` as its own process, keeping its runs in a SQLite file."""
    state = f"sqlite:///{tmp_path_factory.mktemp('served') / 'state.db'}"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    with LoopbackModelServer(server_module.offline_script()) as model:
        env = {k: v for k, v in os.environ.items() if k not in PROVIDER_ENV}
        env.update(model.env(), AGENTDECK_STATE=state)
        process = subprocess.Popen(
            [sys.executable, "server.py", "--port", str(port)],
            cwd=HERE,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            _wait_until_healthy(url, process)
            yield Served(url=url, state=state, model=model)
        finally:
            process.terminate()  # SIGTERM: the server drains, then stops
            process.wait(timeout=60)


def _wait_until_healthy(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server.py exited early:\n{process.communicate()[0]}")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)  # the process is still importing and binding
    raise AssertionError("server.py did not answer /health in time")


def test_without_a_valid_key_everything_but_health_is_refused(served: Served) -> None:
    with httpx.Client(base_url=served.url) as client:
        assert client.get("/health").status_code == 200
        for headers in ({}, {"Authorization": "Bearer not-a-key"}, {"X-API-Key": ""}):
            refused = client.post("/runs", json={"name": "support", "input": "hi"}, headers=headers)
            assert (refused.status_code, refused.json()["error"]) == (401, "unauthorized")
            assert client.get("/runs", headers=headers).status_code == 401


def test_the_client_prints_what_the_readme_shows(
    served: Served, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["client.py", "--url", served.url])
    runpy.run_path(str(HERE / "client.py"), run_name="__main__")
    assert capsys.readouterr().out == readme_output()


def test_a_key_reaches_only_its_own_namespace(served: Served) -> None:
    with httpx.Client(base_url=served.url) as client:
        run = client.post("/runs", json={"name": "support", "input": "A-1003?"}, headers=ACME)
        assert run.status_code == 201 and run.json()["namespace"] == "acme"
        run_id = run.json()["id"]

        # Another tenant's run answers exactly like a run that does not exist.
        assert client.get(f"/runs/{run_id}", headers=GLOBEX).status_code == 404
        assert client.get(f"/runs/{run_id}/events", headers=GLOBEX).status_code == 404
        listed = client.get("/runs", headers=GLOBEX).json()["runs"]
        assert run_id not in {r["id"] for r in listed}
        trespass = {"name": "support", "input": "hi", "namespace": "acme"}
        assert client.post("/runs", json=trespass, headers=GLOBEX).status_code == 403
        assert client.get(f"/runs/{run_id}", headers=ACME).status_code == 200


async def test_the_stream_sends_the_public_kinds_only_and_the_log_keeps_everything(
    served: Served,
) -> None:
    async with httpx.AsyncClient(base_url=served.url, timeout=60) as client:
        start = {"name": "support", "input": "Where is A-1003?"}
        run_id = (await client.post("/runs", json=start, headers=ACME)).json()["id"]
        assert await client_module.stream_run(client, run_id, ACME) == "run.completed"
        replay = await client.get(f"/runs/{run_id}/events?follow=false", headers=ACME)
    streamed = [line[6:].strip() for line in replay.text.splitlines() if line.startswith("event:")]
    assert streamed[0] == "run.started" and streamed[-1] == "run.completed"
    assert "tool.call.started" in streamed and "tool.call.completed" not in streamed

    async with Deck(settings=Settings(env={"AGENTDECK_STATE": served.state})) as reader:
        run = await reader.runs.get(run_id, namespace="acme")
        logged = [event.kind async for event in run.events()]
    assert "tool.call.completed" in logged  # recorded, just not public
    assert set(streamed) < set(logged)


def test_the_served_agent_called_the_model_with_its_tool(served: Served) -> None:
    asyncio.run(client_module.main(served.url, "acme-dev-key", "Where is A-1003?"))
    requests = served.model.model_requests
    assert any("order_status" in r.tool_names for r in requests)
    assert any("shipped with DHL" in output for r in requests for output in r.tool_outputs.values())
