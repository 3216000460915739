"""Conversation sessions: the spec's session example holds for the local and the Redis factory.

The spec (Sessions and Memory) prints ``items after turn 1: 2``, ``items after turn 2: 4`` and
``turn 1 is still there: user my name is Sagi``; here a real ``Runner.run`` with the session from
each factory produces those numbers against the loopback server, and the second model call is
shown to carry the first turn.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from agents import Agent, OpenAIResponsesModel, Runner, SQLiteSession
from agents.extensions.memory import RedisSession
from openai import AsyncOpenAI
from redis.asyncio import Redis

from agentdeck.errors import ConfigError, ExtraNotInstalledError, InvalidInputError, StoreError
from agentdeck.ports import BackendRequest, SessionFactory
from agentdeck.settings import Settings
from agentdeck.testing.fixtures import RedisPrefix
from agentdeck_openai.sessions import (
    LocalSessionFactory,
    RedisSessionFactory,
    SqliteSessionFactory,
)
from agentdeck_openai.testing import API_KEY, MODEL, LoopbackModelServer, reply


@pytest.fixture
async def greeter(model_server: LoopbackModelServer) -> AsyncIterator[Agent[None]]:
    client = AsyncOpenAI(base_url=model_server.base_url, api_key=API_KEY)
    yield Agent(
        name="Greeter",
        instructions="You are a friendly scheduling assistant. Keep replies to one short sentence.",
        model=OpenAIResponsesModel(MODEL, client),
    )
    await client.close()


@pytest.fixture
async def redis_factory(redis_prefix: RedisPrefix) -> AsyncIterator[RedisSessionFactory]:
    factory = redis_factory_for(redis_prefix)
    yield factory
    await factory.close()


def redis_factory_for(redis_prefix: RedisPrefix, ttl: int | None = None) -> RedisSessionFactory:
    """A factory built as a deck builds it: from AGENTDECK_SESSION* settings."""
    env = {"AGENTDECK_SESSION_REDIS_KEY_PREFIX": f"{redis_prefix.prefix}sessions"}
    if ttl is not None:
        env["AGENTDECK_SESSION_REDIS_TTL"] = str(ttl)
    request = BackendRequest(url=redis_prefix.url, settings=Settings(env=env))
    return RedisSessionFactory.from_request(request)


async def two_turns(
    factory: SessionFactory, greeter: Agent[None], model_server: LoopbackModelServer
) -> tuple[int, int, dict[str, object]]:
    """The spec's example: two turns on session "wa-1"; the item counts and the first item."""
    model_server.script.add(reply("Nice to meet you, Sagi!"), reply("Your name is Sagi."))
    await Runner.run(greeter, "my name is Sagi", session=factory.session_for("wa-1"))
    first_turn = await factory.session_for("wa-1").get_items()
    await Runner.run(greeter, "what is my name?", session=factory.session_for("wa-1"))
    second_turn = await factory.session_for("wa-1").get_items()
    return len(first_turn), len(second_turn), dict(second_turn[0])


def assert_the_model_was_sent_turn_one(model_server: LoopbackModelServer) -> None:
    _, second = model_server.requests
    assert second.user_texts == ["my name is Sagi", "what is my name?"]
    assert "Nice to meet you, Sagi!" in str(second.items)


# --------------------------------------------------------------------------- local


async def test_local_sessions_print_what_the_spec_example_prints(
    greeter: Agent[None], model_server: LoopbackModelServer
) -> None:
    factory = LocalSessionFactory.from_request(BackendRequest(url="local://"))
    try:
        after_one, after_two, first_item = await two_turns(factory, greeter, model_server)
    finally:
        await factory.close()
    assert (after_one, after_two) == (2, 4)
    assert first_item == {"role": "user", "content": "my name is Sagi"}
    assert_the_model_was_sent_turn_one(model_server)


async def test_a_local_session_is_one_object_per_id_and_ids_do_not_share_history() -> None:
    factory = LocalSessionFactory()
    wa1 = factory.session_for("wa-1")
    assert isinstance(wa1, SQLiteSession)
    assert factory.session_for("wa-1") is wa1
    await wa1.add_items([{"role": "user", "content": "hello"}])
    assert await factory.session_for("wa-2").get_items() == []
    await factory.close()
    await factory.close()  # idempotent
    with pytest.raises(StoreError, match="factory is closed"):
        factory.session_for("wa-1")


def test_a_local_url_is_exactly_local_and_anything_else_is_refused() -> None:
    assert isinstance(
        LocalSessionFactory.from_request(BackendRequest(url="local://")), SessionFactory
    )
    with pytest.raises(ConfigError) as refused:
        LocalSessionFactory.from_request(BackendRequest(url="local://somewhere"))
    assert refused.value.setting == "AGENTDECK_SESSION"
    assert refused.value.accepted == ("local://",)


def test_a_session_id_must_be_a_non_empty_string() -> None:
    with pytest.raises(InvalidInputError) as refused:
        LocalSessionFactory().session_for("")
    assert refused.value.field == "session_id"


# --------------------------------------------------------------------------- SQLite file


async def test_a_sqlite_session_survives_a_new_factory_on_the_same_file(
    greeter: Agent[None], model_server: LoopbackModelServer, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path}/sessions/conversations.db"  # the directory does not exist yet
    before_restart = SqliteSessionFactory.from_request(BackendRequest(url=url))
    model_server.script.add(reply("Nice to meet you, Sagi!"), reply("Your name is Sagi."))
    await Runner.run(greeter, "my name is Sagi", session=before_restart.session_for("wa-1"))
    await before_restart.close()
    assert (tmp_path / "sessions" / "conversations.db").is_file()

    after_restart = SqliteSessionFactory.from_request(BackendRequest(url=url))
    try:
        session = after_restart.session_for("wa-1")
        assert session is after_restart.session_for("wa-1")
        assert len(await session.get_items()) == 2
        assert await after_restart.session_for("wa-2").get_items() == []
        await Runner.run(greeter, "what is my name?", session=session)
        items = await session.get_items()
    finally:
        await after_restart.close()
    assert len(items) == 4
    assert items[0] == {"role": "user", "content": "my name is Sagi"}
    assert_the_model_was_sent_turn_one(model_server)
    with pytest.raises(StoreError, match="factory is closed"):
        after_restart.session_for("wa-1")


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "sqlite:///a.db?x=1"])
def test_a_sqlite_session_url_must_name_a_file(url: str) -> None:
    with pytest.raises(ConfigError) as refused:
        SqliteSessionFactory.from_request(BackendRequest(url=url))
    assert refused.value.setting == "AGENTDECK_SESSION"
    assert url in str(refused.value)


def test_agentdeck_session_sqlite_gives_the_deck_file_backed_sessions(tmp_path: Path) -> None:
    from agentdeck import Deck

    path = tmp_path / "sessions.db"
    env = {"AGENTDECK_SESSION": f"sqlite:///{path}", "AGENTDECK_STATE": "memory://"}
    deck = Deck(settings=Settings.load(env=env, config_file=None))

    session = deck.session_for("wa-1")
    assert isinstance(session, SQLiteSession)
    assert Path(session.db_path) == path


# --------------------------------------------------------------------------- Redis


async def test_redis_sessions_print_what_the_spec_example_prints(
    greeter: Agent[None], model_server: LoopbackModelServer, redis_factory: RedisSessionFactory
) -> None:
    after_one, after_two, first_item = await two_turns(redis_factory, greeter, model_server)
    assert isinstance(redis_factory.session_for("wa-1"), RedisSession)
    assert (after_one, after_two) == (2, 4)
    assert first_item == {"role": "user", "content": "my name is Sagi"}
    assert_the_model_was_sent_turn_one(model_server)


async def test_a_redis_session_survives_a_new_factory(
    greeter: Agent[None], model_server: LoopbackModelServer, redis_prefix: RedisPrefix
) -> None:
    before_restart = redis_factory_for(redis_prefix)
    model_server.script.add(reply("Nice to meet you, Sagi!"), reply("Your name is Sagi."))
    await Runner.run(greeter, "my name is Sagi", session=before_restart.session_for("wa-1"))
    await before_restart.close()

    after_restart = redis_factory_for(redis_prefix)
    try:
        session = after_restart.session_for("wa-1")
        assert len(await session.get_items()) == 2
        await Runner.run(greeter, "what is my name?", session=session)
        items = await session.get_items()
    finally:
        await after_restart.close()
    assert len(items) == 4
    assert items[0] == {"role": "user", "content": "my name is Sagi"}
    assert_the_model_was_sent_turn_one(model_server)


async def test_redis_keys_use_the_configured_prefix_and_ttl(redis_prefix: RedisPrefix) -> None:
    factory = redis_factory_for(redis_prefix, ttl=300)
    client = Redis.from_url(redis_prefix.url)
    try:
        await factory.session_for("wa-1").add_items([{"role": "user", "content": "hi"}])
        keys = [key.decode() async for key in client.scan_iter(match=f"{redis_prefix.prefix}*")]
        assert keys
        assert all(key.startswith(f"{redis_prefix.prefix}sessions:wa-1") for key in keys)
        ttls = [await client.ttl(key) for key in keys]
        assert all(0 < ttl <= 300 for ttl in ttls), ttls
    finally:
        await factory.close()
        await client.aclose()


async def test_the_redis_factory_reads_its_defaults_without_settings() -> None:
    factory = RedisSessionFactory.from_request(BackendRequest(url="redis://127.0.0.1:6379/0"))
    try:
        assert (factory.key_prefix, factory.ttl) == ("agents:session", None)
    finally:
        await factory.close()


async def test_closing_the_redis_factory_refuses_new_sessions(
    redis_factory: RedisSessionFactory,
) -> None:
    redis_factory.session_for("wa-1")
    await redis_factory.close()
    await redis_factory.close()  # idempotent
    with pytest.raises(StoreError, match="factory is closed"):
        redis_factory.session_for("wa-1")


async def test_a_client_passed_in_is_shared_and_left_open(redis_prefix: RedisPrefix) -> None:
    client = Redis.from_url(redis_prefix.url)
    factory = RedisSessionFactory(
        redis_prefix.url, key_prefix=f"{redis_prefix.prefix}s", client=client
    )
    assert factory.client is client
    await factory.session_for("a").add_items([{"role": "user", "content": "hi"}])
    await factory.close()
    assert await client.ping()  # still the caller's to close
    await client.aclose()


def test_only_redis_urls_and_positive_ttls_are_accepted() -> None:
    with pytest.raises(ConfigError) as refused:
        RedisSessionFactory("postgresql://app:s3cret@localhost/db")
    assert refused.value.setting == "AGENTDECK_SESSION"
    assert "s3cret" not in str(refused.value)
    assert "postgresql://app:***@localhost/db" in str(refused.value)
    assert refused.value.accepted == ("redis://host:port/db", "rediss://host:port/db")
    with pytest.raises(ConfigError) as refused:
        RedisSessionFactory("redis://127.0.0.1:6379/0", ttl=0)
    assert refused.value.setting == "AGENTDECK_SESSION_REDIS_TTL"


def test_redis_sessions_without_the_redis_extra_name_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentdeck import Deck

    # A None entry in sys.modules fails the import as a missing package does.
    monkeypatch.setitem(sys.modules, "redis", None)
    deck = Deck(settings=Settings.load(env={"AGENTDECK_SESSION": "redis://h:6379/0"}))

    with pytest.raises(ExtraNotInstalledError) as refused:
        deck.build()

    error = refused.value
    assert (error.requirement, error.missing) == ("agentdeck-openai[redis]", "redis")
    assert error.setting == "AGENTDECK_SESSION"
    assert "pip install 'agentdeck-openai[redis]'" in str(error)


# --------------------------------------------------------------------------- where the URL is read


@pytest.mark.parametrize("layer", ["env", "config.yaml"])
async def test_the_deck_takes_its_session_url_from_every_settings_layer(
    layer: str, tmp_path: Path
) -> None:
    from agentdeck import Deck

    url = "redis://127.0.0.1:6379/0"
    if layer == "env":
        settings = Settings.load(env={"AGENTDECK_SESSION": url}, config_file=None)
    else:
        config = tmp_path / "config.yaml"
        config.write_text(f"agentdeck:\n  session: {url}\n", encoding="utf-8")
        settings = Settings.load(env={}, config_file=config)
    deck = Deck(settings=settings)

    assert isinstance(deck.session_for("wa-1"), RedisSession)


def test_without_a_session_url_the_deck_keeps_conversations_in_process() -> None:
    from agentdeck import Deck

    deck = Deck(settings=Settings.load(env={}, config_file=None))

    assert isinstance(deck.session_for("wa-1"), SQLiteSession)
