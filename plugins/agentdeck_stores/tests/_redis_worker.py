"""A worker process for the Redis multi-process tests, run as a script by them.

python _redis_worker.py race <url> <worker> <rounds> <gate key>
    each round: wait at the gate (a Redis list the test pushes to), then open a run on the
    round's session; print "<round> won <run id>" or "<round> busy <holder run id>".
python _redis_worker.py append <url> <session> <owner>
    open a run on the session, take its lease (1 s TTL, the real clock), print
    "run <run id>", then append forever, printing each returned seq as soon as the
    append returns, until killed.
"""

from __future__ import annotations

import asyncio
import sys
import uuid

import redis.asyncio as aioredis

from agentdeck.model.payloads import RunInterrupted, TextDelta
from agentdeck.ports import BackendRequest
from agentdeck.testing import new_run
from agentdeck_stores._redis_base import RedisTarget
from agentdeck_stores.redisstore import RedisEventStore, RedisLeasePort


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def race(url: str, worker: str, rounds: int, gate: str) -> None:
    store = RedisEventStore.from_request(BackendRequest(url=url))
    await store.open()
    gatekeeper = aioredis.Redis.from_url(RedisTarget.parse(url).client_url, socket_timeout=60)
    try:
        await gatekeeper.rpush(f"{gate}:ready", worker)
        for round_ in range(rounds):
            await gatekeeper.blpop([f"{gate}:{round_}"], timeout=30)
            new = new_run(session_id=f"contended-{round_}", run_id=f"{worker}-{uuid.uuid4().hex}")
            outcome = await store.open_run(new)
            if outcome.opened:
                say(f"{round_} won {new.run_id}")
            else:
                assert outcome.busy is not None
                say(f"{round_} busy {outcome.busy.run_id}")
    finally:
        await gatekeeper.aclose()
        await store.close()


async def append_forever(url: str, session: str, owner: str) -> None:
    store = RedisEventStore.from_request(BackendRequest(url=url))
    leases = RedisLeasePort.from_request(BackendRequest(url=url))
    await store.open()
    await leases.open()
    outcome = await store.open_run(new_run(session_id=session))
    assert outcome.event is not None
    run_id = outcome.event.run_id
    assert await leases.acquire(run_id, owner, 1.0)
    say(f"run {run_id}")
    n = 0
    while True:
        n += 1
        (event,) = await store.append(run_id, [TextDelta(message_id="m", text=str(n))])
        say(str(event.seq))


async def park(url: str, session: str) -> None:
    store = RedisEventStore.from_request(BackendRequest(url=url))
    await store.open()
    try:
        outcome = await store.open_run(new_run(session_id=session, key="order-7"))
        assert outcome.event is not None
        run_id = outcome.event.run_id
        await store.append(run_id, [RunInterrupted(interrupt_id="q1", payload="Refund 20 EUR?")])
        say(f"run {run_id}")
    finally:
        await store.close()


def main(argv: list[str]) -> None:
    mode, url, *rest = argv
    if mode == "race":
        worker, rounds, gate = rest
        asyncio.run(race(url, worker, int(rounds), gate))
    elif mode == "park":
        (session,) = rest
        asyncio.run(park(url, session))
    else:
        session, owner = rest
        asyncio.run(append_forever(url, session, owner))


if __name__ == "__main__":
    main(sys.argv[1:])
