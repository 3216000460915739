"""The Redis backend against the core's contract kits and its Hypothesis state machine.

Every test gets its own key prefix on the shared server (the core's ``redis_prefix`` fixture),
deleted afterwards; the state machine takes a fresh prefix per example and deletes it after.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import redis.asyncio as aioredis
from contract_fixtures import port_fixtures

from agentdeck.model.clock import ManualClock
from agentdeck.ports import BackendRequest, EventStore
from agentdeck.testing import (
    ControlContract,
    LeaseContract,
    StoreContract,
    make_store_state_machine,
)
from agentdeck.testing.fixtures import RedisPrefix, redis_url
from agentdeck_stores.redisstore import RedisControlPort, RedisEventStore, RedisLeasePort

# The core's per-test isolation fixtures (redis_prefix: a fresh key prefix, deleted after).
pytest_plugins = ["agentdeck.testing.fixtures"]


@pytest.fixture
def url(redis_prefix: RedisPrefix) -> str:
    """Every port of a test under the test's own key prefix."""
    return f"{redis_prefix.url}?prefix={redis_prefix.prefix}"


class TestRedisStore(StoreContract):
    # The runs live in the server, not in the process: they survive the process and a reopen.
    durable = True
    shared = True

    store, reopen_store = port_fixtures(RedisEventStore.from_request)


class TestRedisControl(ControlContract):
    shared = True

    control, reopen = port_fixtures(RedisControlPort.from_request)


class TestRedisLeases(LeaseContract):
    shared = True

    leases, reopen = port_fixtures(RedisLeasePort.from_request)


@asynccontextmanager
async def _fresh_store(clock: ManualClock) -> AsyncIterator[EventStore]:
    """A store on a prefix of its own for one Hypothesis example, deleted after it."""
    prefix = f"adk_test_sm_{secrets.token_hex(6)}:"
    store = RedisEventStore.from_request(
        BackendRequest(url=f"{redis_url()}?prefix={prefix}", clock=clock)
    )
    await store.open()
    try:
        yield store
    finally:
        await store.close()
        cleaner = aioredis.Redis.from_url(redis_url())
        try:
            keys = [key async for key in cleaner.scan_iter(match=f"{prefix}*", count=500)]
            if keys:
                await cleaner.delete(*keys)
        finally:
            await cleaner.aclose()


TestRedisStoreMachine = make_store_state_machine(_fresh_store, name="RedisStoreMachine")
