"""What the chaos tests share: the durable states, the deck worker, and waiting on a deadline."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from agentdeck import Deck
from agentdeck.settings import CoreSettings, Settings
from agentdeck.testing.processes import JsonLinesWorker, start_all

WORKER = Path(__file__).with_name("deck_worker.py")

LEASE_TTL = 1.0
"""Seconds: short, so that a dead worker's run is closed within a test's patience."""
SWEEP_INTERVAL = 0.5
CONNECT_TIMEOUT = 1.0
"""The stores' ``connect_timeout_seconds`` in the outage tests (the default is 5)."""
SLACK = 3.0
"""Seconds allowed on top of a bound for a loaded two-core machine: process start-up aside,
the loop of a deck under test may run late by this much."""

_T = TypeVar("_T")


def runtime_env() -> dict[str, str]:
    """Settings of every deck in the chaos suite, as environment variables."""
    return {
        "AGENTDECK_RUNTIME_LEASE_TTL_SECONDS": str(LEASE_TTL),
        "AGENTDECK_RUNTIME_SWEEP_INTERVAL_SECONDS": str(SWEEP_INTERVAL),
        "AGENTDECK_RUNTIME_STALE_RUN_AFTER_SECONDS": "3600",  # the backstop must not help
        "AGENTDECK_STORES_CONNECT_TIMEOUT_SECONDS": str(CONNECT_TIMEOUT),
    }


def trials(name: str, default: int) -> int:
    """How many trials a test runs: ``default``, or ``AGENTDECK_CHAOS_<NAME>`` when set."""
    return int(os.environ.get(f"AGENTDECK_CHAOS_{name.upper()}", default))


def deck_on(url: str, **options: Any) -> Deck:
    """A deck in this process on ``url`` (events, control, leases), with the suite's settings."""
    from deck_worker import approval, hold, ticking

    settings = Settings.load(
        env={**os.environ, **runtime_env()},
        overrides={CoreSettings.section: {"events": url, "control": url}},
    )
    return Deck(workflows=[hold, approval, ticking], settings=settings, observers=(), **options)


def spawn(url: str, *flags: str) -> JsonLinesWorker:
    """A deck worker process on ``url``, still starting (see :func:`start_all`)."""
    return JsonLinesWorker(WORKER, url, *flags, env=runtime_env())


def worker_on(url: str, *flags: str) -> JsonLinesWorker:
    """A deck worker process on ``url``, started (its ``ready`` line read)."""
    worker = spawn(url, *flags)
    start_all([worker])
    return worker


async def eventually(
    check: Callable[[], Awaitable[_T | None]], *, within: float, every: float = 0.05
) -> tuple[_T, float]:
    """Poll ``check`` until it returns something other than ``None``; that and the seconds it
    took. An ``AssertionError`` past ``within`` seconds."""
    started = time.monotonic()
    while True:
        found = await check()
        if found is not None:
            return found, time.monotonic() - started
        if time.monotonic() - started > within:
            raise AssertionError(f"still not so after {within:g} s")
        await asyncio.sleep(every)
