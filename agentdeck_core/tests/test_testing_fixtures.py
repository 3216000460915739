"""The isolation fixtures every backend package shares give each test its own space."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from agentdeck.testing.fixtures import PostgresSchema, RedisPrefix

# Loaded the way every backend package loads it (and imported nowhere else in this module before
# pytest does, so pytest rewrites its assertions like any plugin's).
pytest_plugins = ["agentdeck.testing.fixtures", "pytester"]


def test_postgres_schema_exists_for_the_test_and_is_first_on_the_search_path(
    postgres_schema: PostgresSchema,
) -> None:
    import psycopg

    assert postgres_schema.schema.startswith("adk_test_")
    with psycopg.connect(postgres_schema.url, autocommit=True) as conn:
        row = conn.execute("SELECT current_schema()").fetchone()
        assert row is not None and row[0] == postgres_schema.schema
        conn.execute("CREATE TABLE probe (x int)")  # lands in the test's schema


def test_redis_prefix_is_fresh(redis_prefix: RedisPrefix) -> None:
    import redis

    assert redis_prefix.prefix.startswith("adk_test_") and redis_prefix.prefix.endswith(":")
    client = redis.Redis.from_url(redis_prefix.url)
    try:
        assert list(client.scan_iter(match=f"{redis_prefix.prefix}*")) == []
        client.set(f"{redis_prefix.prefix}probe", "1")
    finally:
        client.close()


def test_sqlite_path_is_in_the_tests_own_directory(sqlite_path: Path, tmp_path: Path) -> None:
    assert sqlite_path.parent == tmp_path and not sqlite_path.exists()


def test_schema_url_keeps_other_query_parameters() -> None:
    from agentdeck.testing.fixtures import PostgresSchema

    schema = PostgresSchema(
        server_url="postgresql://u:p@h:5432/db?sslmode=disable", schema="adk_test_x"
    )
    assert schema.url == (
        "postgresql://u:p@h:5432/db?sslmode=disable&options=-csearch_path%3Dadk_test_x"
    )


@pytest.mark.parametrize(
    ("value", "ci"), [("true", True), ("1", True), ("", False), ("false", False)]
)
def test_ci_is_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str, ci: bool
) -> None:
    from agentdeck.testing.fixtures import in_ci

    monkeypatch.setenv("CI", value)
    assert in_ci() is ci


def test_an_unreachable_server_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentdeck.testing.fixtures import unavailable

    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="unreachable"):
        unavailable("PostgreSQL", "refused")


def test_an_unreachable_server_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentdeck.testing.fixtures import unavailable

    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="under CI every backend must be reachable"):
        unavailable("Redis", "refused")


def test_the_fixtures_really_fail_under_ci_when_the_server_is_down(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest('pytest_plugins = ["agentdeck.testing.fixtures"]')
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        """
        def test_pg(postgres_schema):
            pass

        def test_redis(redis_prefix):
            pass
        """
    )
    env = {
        "AGENTDECK_TEST_POSTGRES_URL": "postgresql://postgres@127.0.0.1:1/test",
        "AGENTDECK_TEST_REDIS_URL": "redis://127.0.0.1:1/0",
    }
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        patch.setenv("CI", "true")
        in_ci = pytester.runpytest_inprocess("-p", "no:cacheprovider")
        in_ci.assert_outcomes(errors=2)
        patch.delenv("CI")
        locally = pytester.runpytest_inprocess("-p", "no:cacheprovider")
        locally.assert_outcomes(skipped=2)
