"""Per-test isolation on real servers, the same way in every package that tests a backend.

Load it as a pytest plugin (``pytest_plugins = ["agentdeck.testing.fixtures"]`` in a
``conftest.py``) and request what the test needs:

``postgres_schema``
    a fresh schema ``adk_test_<random>`` in the test database, dropped (with everything in it)
    after the test; its ``url`` puts the schema first on the ``search_path``.
``redis_prefix``
    a fresh key prefix ``adk_test_<random>:``; every key under it is deleted after the test.
``sqlite_path``
    a path for a SQLite file in the test's temporary directory (not created).
``isolated_state``
    runs the test in an empty working directory of its own, so a deck built with no state
    setting keeps its default ``.agentdeck/state.db`` there -- not in the checkout, where every
    test (and the developer's own runs) would share it. Make it autouse in a suite's
    ``conftest.py`` (AgentDeck's own suites do) with a fixture that requests it.

The servers default to the local ones (``postgresql://postgres@127.0.0.1:5432/test``,
``redis://127.0.0.1:6379/0``) and are overridden by ``AGENTDECK_TEST_POSTGRES_URL`` and
``AGENTDECK_TEST_REDIS_URL``. An unreachable server skips the test with the reason, except under
CI (``CI`` set to a true value), where it fails it: CI must never go green by skipping the
backends it exists to test.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import pytest

__all__ = [
    "DEFAULT_POSTGRES_URL",
    "DEFAULT_REDIS_URL",
    "PostgresSchema",
    "RedisPrefix",
    "in_ci",
    "isolated_state",
    "postgres_schema",
    "postgres_url",
    "redis_prefix",
    "redis_url",
    "sqlite_path",
    "unavailable",
]

DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
CONNECT_TIMEOUT = 3


def in_ci() -> bool:
    """Whether we run under CI (``CI`` set to anything but an empty, ``0`` or ``false`` value)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off")


def unavailable(what: str, reason: object) -> NoReturn:
    """Skip the test because ``what`` is unreachable, or fail it under CI."""
    message = f"{what} is unreachable ({reason})"
    if in_ci():
        pytest.fail(f"{message}; under CI every backend must be reachable", pytrace=False)
    pytest.skip(f"{message}; start it, or set its AGENTDECK_TEST_*_URL")


def postgres_url() -> str:
    return os.environ.get("AGENTDECK_TEST_POSTGRES_URL") or DEFAULT_POSTGRES_URL


def redis_url() -> str:
    return os.environ.get("AGENTDECK_TEST_REDIS_URL") or DEFAULT_REDIS_URL


def _token() -> str:
    return f"adk_test_{secrets.token_hex(6)}"


# =========================================================================== PostgreSQL


@dataclass(frozen=True, slots=True)
class PostgresSchema:
    """A schema that exists for one test."""

    server_url: str
    """The server's URL, without the schema."""
    schema: str

    @property
    def url(self) -> str:
        """``server_url`` with ``options=-csearch_path=<schema>``: what a store under test uses."""
        parts = urlsplit(self.server_url)
        query = [(k, v) for k, v in parse_qsl(parts.query) if k != "options"]
        query.append(("options", f"-csearch_path={self.schema}"))
        return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))


@pytest.fixture
def postgres_schema() -> Iterator[PostgresSchema]:
    """A fresh PostgreSQL schema for this test, dropped afterwards."""
    try:
        import psycopg
        from psycopg import sql
    except ImportError as exc:  # pragma: no cover - the [testing] extra installs it
        unavailable("PostgreSQL", f"psycopg is not installed: {exc}")
    server = postgres_url()
    schema = _token()
    try:
        with psycopg.connect(server, autocommit=True, connect_timeout=CONNECT_TIMEOUT) as conn:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    except psycopg.OperationalError as exc:
        unavailable(f"PostgreSQL at {_redact(server)}", exc)
    try:
        yield PostgresSchema(server_url=server, schema=schema)
    finally:
        with psycopg.connect(server, autocommit=True, connect_timeout=CONNECT_TIMEOUT) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


# =========================================================================== Redis


@dataclass(frozen=True, slots=True)
class RedisPrefix:
    """A key prefix that exists for one test."""

    url: str
    prefix: str
    """Ends with ``:``; every key the test writes must start with it."""


@pytest.fixture
def redis_prefix() -> Iterator[RedisPrefix]:
    """A fresh Redis key prefix for this test; its keys are deleted afterwards (via SCAN)."""
    try:
        import redis
    except ImportError as exc:  # pragma: no cover - the [testing] extra installs it
        unavailable("Redis", f"redis is not installed: {exc}")
    url = redis_url()
    client = redis.Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT)
    try:
        client.ping()
    except redis.RedisError as exc:
        client.close()
        unavailable(f"Redis at {_redact(url)}", exc)
    prefix = f"{_token()}:"
    try:
        yield RedisPrefix(url=url, prefix=prefix)
    finally:
        try:
            batch: list[bytes] = []
            for key in client.scan_iter(match=f"{prefix}*", count=500):
                batch.append(key)
                if len(batch) >= 500:
                    client.delete(*batch)
                    batch.clear()
            if batch:
                client.delete(*batch)
        finally:
            client.close()


# =========================================================================== SQLite


@pytest.fixture
def sqlite_path(tmp_path: Path) -> Path:
    """A path for this test's SQLite database file (in its temporary directory)."""
    return tmp_path / "agentdeck.sqlite3"


@pytest.fixture
def isolated_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """An empty working directory for this test (returned), where default state lands."""
    directory = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(directory)
    return directory


def _redact(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))
