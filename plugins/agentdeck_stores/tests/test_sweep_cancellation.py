"""A deck's sweep ends when its deck closes, wherever in the sweep the cancellation lands.

The CLI once hung for minutes on PostgreSQL: it closed its deck, the deck cancelled its sweep,
and the sweep went back to sleeping -- a driver had swallowed the cancellation. Here every
durable store's sweep is given real work (runs whose leases lapsed, runs nobody leased, due
timers none), and the deck is closed after 0, 1, 2, ... loop turns and after short real delays,
so the cancellation lands at each await point the sweep passes; every close must return.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from agentdeck import Deck, RunStatus
from agentdeck.model.payloads import RunStarted
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import BackendRequest, NewRun
from agentdeck.settings import CoreSettings, Settings
from agentdeck.testing.fixtures import PostgresSchema, RedisPrefix

TURNS = 30
"""Loop turns to cancel after (0 .. TURNS - 1)."""
DELAYS = (0.001, 0.003, 0.01, 0.03)
"""Real seconds to cancel after, for the await points that wait on the server."""
CLOSE_WITHIN = 15.0
TTL = 0.05


@pytest.fixture(params=["sqlite", "postgresql", "redis"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'sweep.db'}"
    if request.param == "postgresql":
        schema: PostgresSchema = request.getfixturevalue("postgres_schema")
        return schema.url
    prefix: RedisPrefix = request.getfixturevalue("redis_prefix")
    return f"{prefix.url}?prefix={prefix.prefix}"


def _settings(url: str) -> Settings:
    return Settings.load(
        env={
            "AGENTDECK_RUNTIME_LEASE_TTL_SECONDS": str(TTL),
            "AGENTDECK_RUNTIME_SWEEP_INTERVAL_SECONDS": "0.01",
        },
        overrides={CoreSettings.section: {"events": url, "control": url}},
    )


async def _seed(url: str, settings: Settings) -> list[str]:
    """Two runs whose worker died after taking a lease, two that died before: all lapse."""
    host = PluginHost.discover()
    store = host.event_store(BackendRequest(url=url, settings=settings))
    leases = host.lease_port(BackendRequest(url=url, settings=settings))
    await store.open()
    await leases.open()
    try:
        run_ids = []
        for leased in (True, True, False, False):
            run_id = f"dead-{uuid.uuid4().hex}"
            started = RunStarted(name="gone", invocable_kind="workflow")
            assert (await store.open_run(NewRun(run_id=run_id, started=started))).opened
            if leased:
                assert await leases.acquire(run_id, "worker-that-died", TTL)
            run_ids.append(run_id)
    finally:
        await leases.close()
        await store.close()
    await asyncio.sleep(TTL * 3)  # every lease lapsed, every run quiet for longer than one TTL
    return run_ids


async def _close_after(url: str, settings: Settings, wait: int | float) -> None:
    deck = Deck(settings=settings, observers=())
    await deck.__aenter__()
    if isinstance(wait, int):
        for _ in range(wait):
            await asyncio.sleep(0)
    else:
        await asyncio.sleep(wait)
    try:
        await asyncio.wait_for(deck.aclose(), CLOSE_WITHIN)
    except TimeoutError:
        pytest.fail(f"the deck on {url} did not close within {CLOSE_WITHIN:g} s (after {wait})")


async def test_the_sweep_ends_wherever_the_cancellation_lands(url: str) -> None:
    settings = _settings(url)
    seeded: list[str] = []
    for wait in [*range(TURNS), *DELAYS]:
        seeded += await _seed(url, settings)
        await _close_after(url, settings, wait)
    # The sweeps that ran did their work: nothing is left running once one runs to its end.
    async with Deck(settings=settings, observers=()) as deck:
        for _ in range(200):
            running = await deck.runs.list(status=RunStatus.RUNNING)
            if not running:
                break
            await asyncio.sleep(0.05)
        assert [run.id for run in running] == []
