"""The Redis backend against the core's contract kits and its Hypothesis state machine.

Every test gets its own key prefix on the shared server (the core's ``redis_prefix`` fixture),
deleted afterwards; the state machine takes a fresh prefix per example and deletes it after.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest
import redis.asyncio as aioredis

from agentdeck.model.clock import ManualClock
from agentdeck.ports import BackendRequest, ControlPort, EventStore, LeasePort
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


def _url(redis_prefix: RedisPrefix) -> str:
    return f"{redis_prefix.url}?prefix={redis_prefix.prefix}"


class TestRedisStore(StoreContract):
    # The runs live in the server, not in the process: they survive the process and a reopen.
    durable = True
    shared = True

    @pytest.fixture
    async def store(
        self, clock: ManualClock, redis_prefix: RedisPrefix
    ) -> AsyncIterator[EventStore]:
        store = RedisEventStore.from_request(BackendRequest(url=_url(redis_prefix), clock=clock))
        await store.open()
        yield store
        await store.close()

    @pytest.fixture
    def reopen_store(
        self, clock: ManualClock, redis_prefix: RedisPrefix
    ) -> Callable[[], Awaitable[EventStore]]:
        async def reopen() -> EventStore:
            other = RedisEventStore.from_request(
                BackendRequest(url=_url(redis_prefix), clock=clock)
            )
            await other.open()
            return other

        return reopen


class TestRedisControl(ControlContract):
    shared = True

    @pytest.fixture
    async def control(
        self, clock: ManualClock, redis_prefix: RedisPrefix
    ) -> AsyncIterator[ControlPort]:
        port = RedisControlPort.from_request(BackendRequest(url=_url(redis_prefix), clock=clock))
        await port.open()
        yield port
        await port.close()

    @pytest.fixture
    def reopen(
        self, clock: ManualClock, redis_prefix: RedisPrefix
    ) -> Callable[[], Awaitable[ControlPort]]:
        async def reopen() -> ControlPort:
            other = RedisControlPort.from_request(
                BackendRequest(url=_url(redis_prefix), clock=clock)
            )
            await other.open()
            return other

        return reopen


class TestRedisLeases(LeaseContract):
    shared = True

    @pytest.fixture
    async def leases(
        self, clock: ManualClock, redis_prefix: RedisPrefix
    ) -> AsyncIterator[LeasePort]:
        port = RedisLeasePort.from_request(BackendRequest(url=_url(redis_prefix), clock=clock))
        await port.open()
        yield port
        await port.close()

    @pytest.fixture
    def reopen(
        self, clock: ManualClock, redis_prefix: RedisPrefix
    ) -> Callable[[], Awaitable[LeasePort]]:
        async def reopen() -> LeasePort:
            other = RedisLeasePort.from_request(BackendRequest(url=_url(redis_prefix), clock=clock))
            await other.open()
            return other

        return reopen


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
