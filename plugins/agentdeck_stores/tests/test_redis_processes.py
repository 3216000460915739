"""Several processes on one Redis prefix: one winner per contended session, nothing lost when a
writer is SIGKILLed (its session is claimable again once its lease lapses), and a run parked by
one process is found and answered by another after the first has exited.

The workers are real interpreters (``_redis_worker.py`` run as a script), not forks of the test.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import redis

from agentdeck.model.clock import ManualClock
from agentdeck.model.payloads import AnswerRecorded, RunFailed, RunResumed
from agentdeck.model.status import fold
from agentdeck.ports import BackendRequest, RunQuery, Takeover
from agentdeck.testing import new_run
from agentdeck.testing.fixtures import RedisPrefix
from agentdeck.vocabulary import ErrorCode, RunStatus
from agentdeck_stores.redisstore import RedisEventStore, RedisLeasePort

# The core's per-test isolation fixtures (redis_prefix: a fresh key prefix, deleted after).
pytest_plugins = ["agentdeck.testing.fixtures"]

WORKER = Path(__file__).with_name("_redis_worker.py")
WORKERS = 4
ROUNDS = 8


def _url(redis_prefix: RedisPrefix) -> str:
    return f"{redis_prefix.url}?prefix={redis_prefix.prefix}"


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args], stdout=subprocess.PIPE, text=True, bufsize=1
    )


def test_processes_racing_for_one_session_have_exactly_one_winner_each_round(
    redis_prefix: RedisPrefix,
) -> None:
    gate = f"{redis_prefix.prefix}gate"
    workers = [
        _spawn("race", _url(redis_prefix), f"w{n}", str(ROUNDS), gate) for n in range(WORKERS)
    ]
    admin = redis.Redis.from_url(redis_prefix.url, socket_timeout=60)
    try:
        for _ in range(WORKERS):  # every worker is connected and waiting at the gate
            assert admin.blpop([f"{gate}:ready"], timeout=30) is not None
        for round_ in range(ROUNDS):
            # Open the gate for every worker at once; each pops one token and races.
            admin.rpush(f"{gate}:{round_}", *["go"] * WORKERS)
            results = []
            for worker in workers:
                assert worker.stdout is not None
                reported, verdict, run_id = worker.stdout.readline().split()
                assert int(reported) == round_
                results.append((verdict, run_id))
            winners = [run_id for verdict, run_id in results if verdict == "won"]
            assert len(winners) == 1, results
            # Every loser was told the winner holds the session.
            assert Counter(run_id for _, run_id in results) == {winners[0]: WORKERS}, results
        for worker in workers:
            assert worker.wait(timeout=30) == 0
    finally:
        admin.close()
        for worker in workers:
            worker.kill()
            if worker.stdout is not None:
                worker.stdout.close()


async def test_a_sigkilled_writer_loses_no_returned_event_and_frees_its_session(
    redis_prefix: RedisPrefix,
) -> None:
    url = _url(redis_prefix)
    child = _spawn("append", url, "s-crash", "worker-crashing")
    assert child.stdout is not None
    try:
        first = child.stdout.readline().split()
        assert first[0] == "run", first
        run_id = first[1]
        reported: list[int] = []
        while len(reported) < 300:
            reported.append(int(child.stdout.readline()))
        os.kill(child.pid, signal.SIGKILL)
        rest, _ = child.communicate(timeout=30)
    finally:
        child.kill()
    assert child.returncode == -signal.SIGKILL
    reported += [int(line) for line in rest.splitlines() if line.strip()]
    assert reported == list(range(1, len(reported) + 1))

    # Another process's view. Its clock starts at the real time of the kill; moving it one
    # lease TTL (1 s) on, instead of sleeping, is enough for the dead worker's lease to lapse.
    clock = ManualClock(start=datetime.now(UTC))
    store = RedisEventStore.from_request(BackendRequest(url=url, clock=clock))
    leases = RedisLeasePort.from_request(BackendRequest(url=url, clock=clock))
    await store.open()
    await leases.open()
    try:
        log = await store.read(run_id)
        assert [event.seq for event in log] == list(range(len(log)))
        assert set(reported) <= {event.seq for event in log}  # every returned append is there
        record = await store.get_run(run_id)
        assert record is not None and record.status is RunStatus.RUNNING
        assert record.last_seq == log[-1].seq

        # Live, the session is busy; once the dead worker's lease lapsed it is claimable, and
        # the abandoned run is closed as failed in its own name (what the runtime does).
        assert (await store.open_run(new_run(session_id="s-crash"))).busy is not None
        clock.advance(1.0)
        assert await leases.lapsed() == [run_id]
        dead = frozenset(await leases.lapsed())
        taker = await store.open_run(
            new_run(session_id="s-crash"), takeover=Takeover(dead_run_ids=dead)
        )
        assert taker.opened
        assert taker.stepped_over is not None and taker.stepped_over.run_id == run_id
        failed = RunFailed(error_code=ErrorCode.CANCELLED_HARD, message="worker died")
        await store.append(run_id, [failed], expect={RunStatus.RUNNING})
        record = await store.get_run(run_id)
        assert record is not None and record.status is RunStatus.FAILED
        assert record.updated_at == clock.now()
    finally:
        await store.close()
        await leases.close()


async def test_a_run_parked_by_a_process_that_exited_is_listed_and_answered_from_another(
    redis_prefix: RedisPrefix,
) -> None:
    url = _url(redis_prefix)
    parker = subprocess.run(
        [sys.executable, str(WORKER), "park", url, "s-parked"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    (line,) = parker.stdout.splitlines()
    run_id = line.split()[1]

    store = RedisEventStore.from_request(BackendRequest(url=url))
    await store.open()
    try:
        page = await store.list_runs(RunQuery(status=RunStatus.WAITING_ANSWER))
        assert [record.run_id for record in page.runs] == [run_id]
        holder = await store.find_key(None, "order-7")
        assert holder is not None and holder.run_id == run_id
        assert (await store.open_run(new_run(session_id="s-parked"))).busy is not None
        state = fold(await store.read(run_id))
        assert state.pending is not None and state.pending.payload == "Refund 20 EUR?"
        answered = await store.append(
            run_id,
            [AnswerRecorded(interrupt_id="q1", value=True), RunResumed(interrupt_id="q1")],
            expect={RunStatus.WAITING_ANSWER},
        )
        assert [event.kind for event in answered] == ["answer.recorded", "run.resumed"]
        record = await store.get_run(run_id)
        assert record is not None and record.status is RunStatus.RUNNING
    finally:
        await store.close()
