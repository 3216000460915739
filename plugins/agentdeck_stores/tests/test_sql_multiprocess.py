"""Several processes on one SQLite file or one PostgreSQL schema: claims, kills and follows.

Workers are real processes (``tests/sql_worker.py``) that build their store through the installed
plugin, exactly as a deck in another process would.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from agentdeck.model.events import Event
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import BackendRequest, EventStore
from agentdeck.testing import new_run
from agentdeck.testing.processes import JsonLinesWorker

WORKER = Path(__file__).with_name("sql_worker.py")
WAIT = 60.0
"""Seconds to wait for a worker's answer (generous: workers start a Python each)."""


def _worker(url: str) -> JsonLinesWorker:
    """One store worker process on ``url``."""
    return JsonLinesWorker(WORKER, url, wait=WAIT)


@pytest.fixture(params=["sqlite", "postgresql"])
def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """One database every process of the test shares: a SQLite file or a PostgreSQL schema."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'shared.db'}"
    schema = request.getfixturevalue("postgres_schema")
    url: str = schema.url
    return url


@pytest.fixture
def workers(shared_url: str) -> Iterator[list[JsonLinesWorker]]:
    started = [_worker(shared_url) for _ in range(4)]
    try:
        for worker in started:
            assert worker.reply() == {"ready": True}
        yield started
    finally:
        for worker in started:
            worker.stop()


@pytest.fixture
async def store(shared_url: str) -> AsyncIterator[EventStore]:
    store = PluginHost.discover().event_store(BackendRequest(url=shared_url))
    await store.open()
    yield store
    await store.close()


def test_workers_racing_to_open_on_one_session_have_one_winner_each_round(
    workers: list[JsonLinesWorker],
) -> None:
    for round_number in range(8):
        session = f"contended-{round_number}"
        for worker in workers:  # every worker gets the command before any answers
            worker.send(op="race", session=session, tries=3)
        answers = [worker.reply() for worker in workers]
        winners = [run_id for answer in answers for run_id in answer["won"]]
        assert len(winners) == 1, (session, answers)
        holders = {holder for answer in answers for holder in answer["busy"]}
        assert holders == set(winners), (session, answers)


async def test_every_append_a_killed_worker_saw_return_is_readable(
    shared_url: str, store: EventStore
) -> None:
    outcome = await store.open_run(new_run(session_id="doomed"))
    assert outcome.event is not None
    run_id = outcome.event.run_id
    worker = _worker(shared_url)
    try:
        assert (await asyncio.to_thread(worker.reply)) == {"ready": True}
        worker.send(op="append_forever", run_id=run_id)
        reported = [(await asyncio.to_thread(worker.reply))["seq"] for _ in range(150)]
        os.kill(worker.process.pid, signal.SIGKILL)
        reported += [line["seq"] for line in await asyncio.to_thread(worker.remaining)]
        assert worker.process.wait(timeout=WAIT) == -signal.SIGKILL
    finally:
        worker.stop()
    events = await store.read(run_id)
    assert [event.seq for event in events] == list(range(len(events)))  # gapless
    stored = {event.seq for event in events}
    assert set(reported) <= stored, sorted(set(reported) - stored)
    record = await store.get_run(run_id)
    assert record is not None and record.last_seq == events[-1].seq


async def test_a_follower_sees_appends_made_by_another_process(
    shared_url: str, store: EventStore
) -> None:
    outcome = await store.open_run(new_run())
    assert outcome.event is not None
    run_id = outcome.event.run_id
    received: list[Event] = []

    async def follow() -> None:
        async for event in store.follow(run_id):
            received.append(event)

    follower = asyncio.create_task(follow())
    worker = _worker(shared_url)
    try:
        assert (await asyncio.to_thread(worker.reply)) == {"ready": True}
        worker.send(op="append", run_id=run_id, count=5, complete=True)
        assert (await asyncio.to_thread(worker.reply)) == {"seqs": [1, 2, 3, 4, 5, 6]}
        await asyncio.wait_for(follower, WAIT)
    finally:
        follower.cancel()
        worker.stop()
    assert [event.seq for event in received] == list(range(7))
    assert received == await store.read(run_id)
