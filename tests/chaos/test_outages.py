"""A store's server killed mid-run and restarted, on a private Redis or PostgreSQL server.

What an operator must see, and what must not be left behind:

* a call made during the outage fails with a ``StoreError`` naming the backend within the
  configured ``stores.connect_timeout_seconds`` (here 1 s), not after a 30 s pool timeout;
* one warning when the server becomes unreachable and one "back" line when it returns
  (logger ``agentdeck.stores.outage``), however many calls failed in between;
* the run that was playing, whose ending could not be written, is closed once the server is
  back (its lease lapses and a sweep closes it): no run stays ``running`` with no owner;
* the same deck, never restarted, plays a new run to its end afterwards;
* a follower of the run ends, with the run's ending or a ``StoreError``, never waits for ever;
* no task dies with an exception nobody retrieved (asyncio's handler is watched).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from typing import Any

import pytest
from chaos_servers import PrivatePostgres, PrivateRedis
from support import CONNECT_TIMEOUT, LEASE_TTL, SLACK, SWEEP_INTERVAL, deck_on, eventually

from agentdeck import Run, RunStatus, StoreError
from agentdeck.model.payloads import Report

OUTAGE = 2.0
"""Seconds the server stays down: several sweeps and lease renewals fail meanwhile."""
RECONNECT_BACKOFF = 7.0
"""Seconds a PostgreSQL pool may wait between reconnect attempts after an outage this long."""


async def _follow(run: Run) -> str:
    """How following the run ended: its last event's kind, or the error that ended it."""
    last = ""
    try:
        async for event in run.events(follow=True):
            last = event.kind
    except StoreError:
        return "StoreError"
    return last


@pytest.fixture(params=["redis", "postgresql"])
def server(request: pytest.FixtureRequest) -> PrivateRedis | PrivatePostgres:
    fixture = "private_redis" if request.param == "redis" else "private_postgres"
    found: PrivateRedis | PrivatePostgres = request.getfixturevalue(fixture)
    return found


async def test_a_server_killed_mid_run_fails_fast_and_strands_no_run(
    server: PrivateRedis | PrivatePostgres, caplog: pytest.LogCaptureFixture
) -> None:
    backend = "redis" if isinstance(server, PrivateRedis) else "postgresql"
    unretrieved: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: unretrieved.append(context))
    caplog.set_level(logging.WARNING)
    async with deck_on(server.url) as deck:
        run = await deck.runs.start("ticking", {"count": 1_000_000})

        async def ticked() -> bool | None:
            events = [event async for event in run.events()]
            return True if sum(isinstance(e.payload, Report) for e in events) >= 5 else None

        await eventually(ticked, within=30)
        follower = asyncio.create_task(_follow(run))
        server.kill()
        started = time.monotonic()
        with pytest.raises(StoreError) as refused:
            await deck.runs.list()
        took = time.monotonic() - started
        assert refused.value.backend == backend
        assert took <= CONNECT_TIMEOUT + SLACK, took
        await asyncio.sleep(OUTAGE)  # sweeps, renewals and the play's appends fail meanwhile
        server.start()
        restarted = time.monotonic()

        async def ended() -> RunStatus | None:
            try:
                status = await run.status()
            except StoreError:
                return None  # the pool is still finding its connections again
            return status if status is not RunStatus.RUNNING else None

        # After the restart the pools must connect again; psycopg_pool's reconnect attempts
        # back off (1 s, 2 s, 4 s, ... with jitter), so PostgreSQL may take a few seconds more.
        bound = LEASE_TTL + SWEEP_INTERVAL + CONNECT_TIMEOUT + RECONNECT_BACKOFF
        status, _ = await eventually(ended, within=bound + SLACK)
        closed_after = time.monotonic() - restarted
        assert status is RunStatus.FAILED
        stranded = await deck.runs.list(status=RunStatus.RUNNING)
        assert [r.id for r in stranded] == []
        assert await deck.run("ticking", {"count": 3}) == 3  # the same deck recovered
        # A follower of the run ends: with the run's ending, or with a StoreError once the
        # server had been unreachable for the timeout -- it never waits for ever.
        done, _ = await asyncio.wait({follower}, timeout=CONNECT_TIMEOUT + SLACK)
        assert follower in done, "the follower is still waiting"
        followed = follower.result()
        assert followed in ("StoreError", "run.failed"), followed
    gc.collect()  # an unretrieved task exception is reported when its task is collected
    await asyncio.sleep(0)
    outage = [r.getMessage() for r in caplog.records if r.name == "agentdeck.stores.outage"]
    assert len([line for line in outage if "unreachable" in line]) == 1, outage
    assert len([line for line in outage if "is back after" in line]) == 1, outage
    never_retrieved = [
        r for r in caplog.records if "exception was never retrieved" in r.getMessage()
    ]
    assert unretrieved == [] and never_retrieved == [], (unretrieved, never_retrieved)
    for record in caplog.records:
        print(f"[chaos] {record.name} {record.levelname}: {record.getMessage()[:160]}")
    print(
        f"\n[chaos] {backend} outage: StoreError after {took:.2f} s; in-flight run closed "
        f"{closed_after:.2f} s after the restart; its follower ended with {followed}; "
        f"{len(caplog.records)} warning(s) in all"
    )
