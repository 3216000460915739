"""The public-API property of the core (no exception outside ``AgentDeckError``, whatever is
thrown at a deck's calls) on each durable store: SQLite, PostgreSQL and Redis each refuse or
accept the same values, and none answers a caller's mistake with its own error."""

from __future__ import annotations

from pathlib import Path

from agentdeck.settings import Settings
from agentdeck.testing.api_fuzz import fuzz_public_api
from agentdeck.testing.fixtures import PostgresSchema, RedisPrefix, in_ci

EXAMPLES = 120 if in_ci() else 60


def _on(url: str) -> None:
    fuzz_public_api({"settings": Settings(env={"AGENTDECK_STATE": url})}, examples=EXAMPLES)


def test_sqlite(sqlite_path: Path) -> None:
    _on(f"sqlite:///{sqlite_path}")


def test_postgresql(postgres_schema: PostgresSchema) -> None:
    _on(postgres_schema.url)


def test_redis(redis_prefix: RedisPrefix) -> None:
    _on(f"{redis_prefix.url}?prefix={redis_prefix.prefix}")
