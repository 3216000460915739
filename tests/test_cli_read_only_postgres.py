"""``agentdeck runs list`` / ``runs show`` on PostgreSQL after a worker was killed (issue 20, 7).

A worker process records a run and takes its lease, then is killed with SIGKILL; once the lease
has lapsed the store holds exactly what a crash leaves: a ``running`` run whose owner is gone.
That is what used to hang the read commands (the deck they opened ran its sweep, whose
cancellation was lost on PostgreSQL) and what the sweep used to change (it marked the run
failed). Now each call, a fresh process with a 5 s timeout, must exit, report the run as it is,
and leave every AgentDeck table byte for byte as it was. Everything lives in a private schema.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest
from psycopg import sql

from agentdeck.ports import LeaseState
from agentdeck.testing.fixtures import postgres_url

CALLS = 100
"""Consecutive calls of each command (the issue's acceptance figure)."""
TIMEOUT = 5.0
"""Seconds each call may take before it counts as hung."""
KILLED, FINISHED = "run-killed-worker", "run-finished"

WORKER = """
import asyncio, sys
from agentdeck.model.payloads import RunCompleted, RunStarted
from agentdeck.ports import NewRun
from agentdeck_stores.postgres import PostgresEventStore, PostgresLeasePort

async def main(url):
    store, lease = PostgresEventStore(url), PostgresLeasePort(url)
    await store.open()
    await lease.open()
    started = RunStarted(name="job", invocable_kind="workflow")
    assert (await store.open_run(NewRun(run_id=sys.argv[3], started=started))).opened
    await store.append(sys.argv[3], [RunCompleted()])
    assert (await store.open_run(NewRun(run_id=sys.argv[2], started=started))).opened
    assert await lease.acquire(sys.argv[2], "worker-pid", 1.0)
    print("ready", flush=True)
    await asyncio.sleep(3600)  # killed here, holding the run

asyncio.run(main(sys.argv[1]))
"""


@pytest.fixture
def schema_url() -> Iterator[tuple[str, str]]:
    schema = f"adk_cli_ro_{os.getpid()}_{time.monotonic_ns() % 10**9}"
    server = postgres_url()
    try:
        with psycopg.connect(server, autocommit=True, connect_timeout=5):
            pass
    except psycopg.OperationalError as exc:  # the shared server is part of this machine's setup
        pytest.fail(f"PostgreSQL at {server} is not reachable: {exc}")
    try:
        yield schema, f"{server}?schema={schema}"
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def dump(schema: str) -> dict[str, list[str]]:
    """Every row of every table in ``schema``, in a comparable order."""
    with psycopg.connect(postgres_url(), autocommit=True) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY 1", (schema,)
            )
        ]
        return {
            table: sorted(
                repr(row)
                for row in conn.execute(
                    sql.SQL("SELECT * FROM {}.{}").format(
                        sql.Identifier(schema), sql.Identifier(table)
                    )
                )
            )
            for table in tables
        }


def lease_state(url: str) -> LeaseState:
    from agentdeck.ports import BackendRequest
    from agentdeck_stores.postgres import PostgresLeasePort

    async def read() -> LeaseState:
        port = PostgresLeasePort.from_request(BackendRequest(url, read_only=True))
        await port.open()
        try:
            return await port.state(KILLED)
        finally:
            await port.close()

    return asyncio.run(read())


def agentdeck(url: str, *arguments: str) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTDECK_")}
    env["AGENTDECK_STATE"] = url
    done = subprocess.run(
        [sys.executable, "-m", "agentdeck", *arguments],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,  # a hung call fails the test here
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_read_commands_exit_and_change_nothing_after_a_killed_workers_lease_lapsed(
    schema_url: tuple[str, str],
) -> None:
    schema, url = schema_url
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, url, KILLED, FINISHED],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "ready", worker.stderr
    finally:
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
    deadline = time.monotonic() + 30
    while lease_state(url) is not LeaseState.LAPSED:
        assert time.monotonic() < deadline, "the killed worker's lease never lapsed"
        time.sleep(0.2)
    before = dump(schema)
    assert before["agentdeck_leases"], "the lapsed lease is there for a sweep to find"

    def list_runs() -> None:
        for _ in range(CALLS):
            listing = agentdeck(url, "runs", "list", "--json")
            statuses = {run["id"]: run["status"] for run in listing["runs"]}
            assert statuses == {KILLED: "running", FINISHED: "completed"}

    def show_run() -> None:
        for _ in range(CALLS):
            shown = agentdeck(url, "runs", "show", KILLED, "--json")
            assert shown["run"]["id"] == KILLED and shown["run"]["status"] == "running"

    # Each command's calls are consecutive; the two commands run side by side, as two operators'
    # terminals would (and in half the wall time).
    with ThreadPoolExecutor(max_workers=2) as pool:
        for call in [pool.submit(list_runs), pool.submit(show_run)]:
            call.result()

    assert dump(schema) == before
