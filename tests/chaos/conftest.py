"""Fixtures of the chaos suite: private servers, started per test and stopped by PID."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from chaos_servers import PrivatePostgres, PrivateRedis

from agentdeck.testing.fixtures import (  # the fixtures are used by name
    PostgresSchema,
    RedisPrefix,
    postgres_schema,  # noqa: F401
    redis_prefix,  # noqa: F401
)


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    server = PrivateRedis()
    server.start()
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    server = PrivatePostgres()
    server.start()
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture(params=["sqlite", "postgresql", "redis"])
def durable_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """One durable state every process of the test shares, on the shared servers (tests that
    break a server use a private one instead)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'shared.db'}"
    if request.param == "postgresql":
        schema: PostgresSchema = request.getfixturevalue("postgres_schema")
        return schema.url
    prefix: RedisPrefix = request.getfixturevalue("redis_prefix")
    return f"{prefix.url}?prefix={prefix.prefix}"
