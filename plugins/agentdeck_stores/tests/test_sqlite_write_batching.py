"""SQLite control and lease writes queued together commit together, each one still all or
nothing: what lets many runs start and finish at once without a commit (an fsync) apiece."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from agentdeck.errors import StoreError
from agentdeck.events import ControlVerb
from agentdeck.ports import BackendRequest, LeaseState
from agentdeck_stores.sqlite import SqliteControlPort, SqliteLeasePort


@pytest.fixture
async def leases(sqlite_path: Path) -> SqliteLeasePort:
    port = SqliteLeasePort.from_request(BackendRequest(url=f"sqlite:///{sqlite_path}"))
    await port.open()
    yield port  # type: ignore[misc]
    await port.close()


async def test_many_leases_taken_at_once_are_all_held(leases: SqliteLeasePort) -> None:
    run_ids = [f"r{n}" for n in range(200)]
    taken = await asyncio.gather(*(leases.acquire(r, "worker", 60) for r in run_ids))
    assert all(taken)
    states = await asyncio.gather(*(leases.state(r) for r in run_ids))
    assert set(states) == {LeaseState.ALIVE}
    await asyncio.gather(*(leases.release(r, "worker") for r in run_ids))
    states = await asyncio.gather(*(leases.state(r) for r in run_ids))
    assert set(states) == {LeaseState.NONE}


async def test_of_two_workers_taking_one_lease_at_once_exactly_one_wins(
    leases: SqliteLeasePort,
) -> None:
    for round_ in range(20):
        run_id = f"contended-{round_}"
        taken = await asyncio.gather(*(leases.acquire(run_id, f"worker-{n}", 60) for n in range(5)))
        assert sum(taken) == 1


async def test_a_write_that_fails_is_undone_alone(leases: SqliteLeasePort) -> None:
    def duplicate(connection: sqlite3.Connection) -> None:
        connection.execute(
            "INSERT INTO agentdeck_leases (run_id, owner, expires_at) VALUES ('dup', 'a', 1)"
        )
        connection.execute(  # the same key again: this write fails, and takes its first row along
            "INSERT INTO agentdeck_leases (run_id, owner, expires_at) VALUES ('dup', 'b', 1)"
        )

    outcomes = await asyncio.gather(
        leases.acquire("before", "worker", 60),
        leases._write(duplicate),
        leases.acquire("after", "worker", 60),
        return_exceptions=True,
    )
    assert outcomes[0] is True and outcomes[2] is True
    assert isinstance(outcomes[1], StoreError)
    assert await leases.state("before") is LeaseState.ALIVE
    assert await leases.state("after") is LeaseState.ALIVE
    assert await leases.state("dup") is LeaseState.NONE


async def test_control_requests_made_at_once_are_all_recorded_once(sqlite_path: Path) -> None:
    control = SqliteControlPort.from_request(BackendRequest(url=f"sqlite:///{sqlite_path}"))
    await control.open()
    try:
        run_ids = [f"r{n}" for n in range(50)]
        first = await asyncio.gather(
            *(control.request(r, ControlVerb.PAUSE, "now") for r in run_ids),
            *(control.request(r, ControlVerb.PAUSE, "again") for r in run_ids),
        )
        assert first[:50] == [True] * 50 and first[50:] == [False] * 50
        taken = await asyncio.gather(*(control.take(r, ControlVerb.PAUSE) for r in run_ids))
        assert [signal.reason if signal else None for signal in taken] == ["now"] * 50
        await control.forget(run_ids)
        assert await control.pending("r0") == ()
    finally:
        await control.close()
