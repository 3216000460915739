"""Leases of runs that finish quickly, on every durable store.

On these stores a lease is a round trip, taken alongside the run's play. A trivial run can end
in the same event-loop turn as its lease lands (SQLite commits both in one batch); such a run
must not be held for renewal after it gave its lease back -- once it was, every burst of quick
runs was renewed a renewal period later and reported "lost its lease", one warning per run.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from agentdeck import Deck, workflow
from agentdeck.settings import Settings
from agentdeck.testing.fixtures import PostgresSchema, RedisPrefix


@workflow
async def echo(n: int) -> int:
    return n


@pytest.fixture(params=["sqlite", "postgresql", "redis"])
def state_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'state.db'}"
    if request.param == "postgresql":
        schema: PostgresSchema = request.getfixturevalue("postgres_schema")
        return schema.url
    prefix: RedisPrefix = request.getfixturevalue("redis_prefix")
    return f"{prefix.url}?prefix={prefix.prefix}"


async def test_quick_runs_are_never_renewed_after_they_finish(
    state_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    # A TTL of 1.2 s renews every 0.2 s, so three bursts span several renewal periods.
    settings = Settings(
        env={"AGENTDECK_STATE": state_url, "AGENTDECK_RUNTIME_LEASE_TTL_SECONDS": "1.2"}
    )
    caplog.set_level(logging.WARNING, logger="agentdeck")
    async with Deck(workflows=[echo], settings=settings) as deck:
        for _ in range(3):
            results = await asyncio.gather(*(deck.run("echo", {"n": i}) for i in range(150)))
            assert results == list(range(150))
            await asyncio.sleep(0.5)  # past two renewal periods, and the batched releases
    lost = [r for r in caplog.records if "lost its lease" in r.getMessage()]
    assert lost == [], f"{len(lost)} of 450 finished runs were renewed and reported lost"
