"""The N-worker deployment guide (docs/temporal.md) runs as written.

The guide's ``export`` lines, its ``agentdeck worker`` command and its ``agentdeck serve``
command are read from the page itself; only what names *its* servers is swapped for this test's:
the PostgreSQL host (and a private schema in place of the guide's), the Temporal frontend (and a
private task queue), and the serve address (loopback, a free port). Every other setting and flag
-- heartbeat, lease TTL, connect timeout, concurrency, project path -- is the guide's.

Then what the guide promises of that layout: a run admitted over HTTP with no worker up waits
``queued`` and ``agentdeck runs list --status queued`` shows it; two workers take it and the
runs an embedded deck with the same settings starts; a question is answered over HTTP; the
served process plays nothing; workers stop on SIGTERM.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from agentdeck import Deck
from agentdeck.settings import Settings
from agentdeck.testing.fixtures import postgres_url

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "temporal.md"
SECTION = "## Deploying N workers with PostgreSQL"
SAFETY = 90.0
"""A bound on waits that only time out when something is broken (never a timing assertion)."""

WORKFLOW = """
from agentdeck import WorkflowCtx, workflow


@workflow
async def refund(ctx: WorkflowCtx, order_id: str, ask: bool = False) -> dict:
    amount = await ctx.step("look up", len, order_id)
    decision = await ctx.ask({"approve": order_id}, options=["yes", "no"]) if ask else "auto"
    return {"order": order_id, "amount": amount, "decision": decision}
"""


def guide_section() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start : end if end != -1 else None]


def guide_exports() -> dict[str, str]:
    exports = dict(re.findall(r'^export (AGENTDECK_\w+)="?([^"\n]+?)"?$', guide_section(), re.M))
    assert {"AGENTDECK_STATE", "AGENTDECK_EXECUTION"} <= set(exports), exports
    return exports


def guide_command(name: str) -> list[str]:
    [flags] = re.findall(rf"^agentdeck {name} (.+)$", guide_section(), re.M)
    return [name, *flags.split()]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def schema() -> Iterator[str]:
    """A schema name of this test's own; the store creates it, the test drops it."""
    import psycopg
    from psycopg import sql

    name = f"adk_guide_{uuid.uuid4().hex[:10]}"
    try:
        yield name
    finally:
        with psycopg.connect(postgres_url(), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


def settings_for_this_machine(
    exports: dict[str, str], schema: str, temporal: str
) -> dict[str, str]:
    """The guide's settings with its hosts swapped for this test's servers."""
    state, execution = (
        urlsplit(exports["AGENTDECK_STATE"]),
        urlsplit(exports["AGENTDECK_EXECUTION"]),
    )
    assert state.scheme == "postgresql" and dict(parse_qsl(state.query))["schema"]
    assert execution.scheme == "temporal"
    query = dict(parse_qsl(execution.query))
    query["task_queue"] = f"guide-{uuid.uuid4().hex[:8]}"
    ours = {
        **exports,
        "AGENTDECK_STATE": f"{postgres_url()}?schema={schema}",
        "AGENTDECK_EXECUTION": f"temporal://{temporal}{execution.path}?"
        + "&".join(f"{k}={v}" for k, v in query.items()),
    }
    return ours


def start(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentdeck", *command],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def until_status(client: httpx.AsyncClient, run_id: str, status: str) -> dict[str, Any]:
    async with asyncio.timeout(SAFETY):
        while True:
            view: dict[str, Any] = (await client.get(f"/runs/{run_id}")).json()
            if view["status"] == status:
                return view
            await asyncio.sleep(0.1)


async def test_the_guides_layout_admits_plays_answers_and_stops_as_written(
    tmp_path: Path, schema: str, temporal_target: str
) -> None:
    exports = guide_exports()
    worker_command = guide_command("worker")
    serve_command = guide_command("serve")
    serve_command[serve_command.index("--host") + 1] = "127.0.0.1"
    port = free_port()
    serve_command[serve_command.index("--port") + 1] = str(port)
    project = Path(worker_command[worker_command.index("--project") + 1])
    assert project == Path(serve_command[serve_command.index("--project") + 1])
    bundle = tmp_path / project / "workflows" / "refund"
    bundle.mkdir(parents=True)
    (bundle / "workflow.py").write_text(textwrap.dedent(WORKFLOW))

    settings = settings_for_this_machine(exports, schema, temporal_target)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTDECK_")}
    env.update(settings)
    processes: list[subprocess.Popen[str]] = []
    try:
        processes.append(server := start(serve_command, tmp_path, env))
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=SAFETY) as client:
            async with asyncio.timeout(SAFETY):
                while True:
                    assert server.poll() is None, server.communicate()[1]
                    try:
                        if (await client.get("/health")).status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    await asyncio.sleep(0.2)

            asked = await client.post(
                "/runs", json={"name": "refund", "input": {"order_id": "A-17", "ask": True}}
            )
            assert asked.status_code == 201, asked.text
            run_id = asked.json()["id"]
            assert (await client.get(f"/runs/{run_id}")).json()["status"] == "queued"
            listing = subprocess.run(
                [sys.executable, "-m", "agentdeck", "runs", "list", "--status", "queued", "--json"],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=SAFETY,
            )
            assert listing.returncode == 0, listing.stderr
            assert [run["id"] for run in json.loads(listing.stdout)["runs"]] == [run_id]

            workers = [start(worker_command, tmp_path, env) for _ in range(2)]
            processes += workers
            view = await until_status(client, run_id, "waiting_answer")
            assert view["pending"][0]["payload"] == {"approve": "A-17"}

            deck = Deck.from_project(tmp_path / project, settings=Settings(env=settings))
            async with deck:
                embedded = [
                    await deck.runs.start("refund", {"order_id": f"B-{n}"}) for n in range(6)
                ]
                results = await asyncio.wait_for(
                    asyncio.gather(*(run.result() for run in embedded)), SAFETY
                )
                assert results == [
                    {"order": f"B-{n}", "amount": 3, "decision": "auto"} for n in range(6)
                ]

                answered = await client.post(f"/runs/{run_id}/answer", json={"value": "yes"})
                assert answered.status_code == 200, answered.text
                await until_status(client, run_id, "completed")
                run = await deck.runs.get(run_id)
                assert await run.result() == {"order": "A-17", "amount": 4, "decision": "yes"}
                claims = [e async for e in run.events() if e.kind == "run.claimed"]
                # Played by the workers, never by the served process or this embedded deck.
                players = {claim.payload.worker.split(":")[1] for claim in claims}
                assert claims and players <= {str(worker.pid) for worker in workers}, players

        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            _, errors = worker.communicate(timeout=SAFETY)
            assert worker.returncode == 143, errors  # stopped itself (paused, closed), not killed
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.communicate(timeout=SAFETY)
