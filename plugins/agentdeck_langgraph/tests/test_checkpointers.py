"""Where checkpoints live: ``AGENTDECK_CHECKPOINT``, else derived from the deck's state root; the
checkpointer plugins by scheme; and the engine built the way a deck builds it."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from lg_graphs import START_STATE, asking

from agentdeck.errors import ConfigError, ExtraNotInstalledError, StoreError
from agentdeck.plugins.host import CHECKPOINTERS, ENGINES, PluginHost, PluginWarning
from agentdeck.ports import BackendRequest, EngineRequest
from agentdeck.settings import Settings
from agentdeck.testing.engine_kit import check_interrupted, drive, make_invocation
from agentdeck.testing.fixtures import PostgresSchema
from agentdeck_langgraph import (
    LangGraphEngine,
    MemoryCheckpointers,
    PostgresCheckpointers,
    SqliteCheckpointers,
    Workflow,
)
from agentdeck_langgraph.checkpointers import POSTGRES_MODULES, checkpoint_url, sqlite_file


def _host() -> PluginHost:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        return PluginHost.discover(env={})


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ("memory://", "memory://"),
        ("memory://shared", "memory://"),
        ("sqlite:///var/state.db", "sqlite:///var/state-checkpoints.db"),
        ("sqlite:////abs/dir/state.sqlite3", "sqlite:////abs/dir/state-checkpoints.sqlite3"),
        ("sqlite://rel/state", "sqlite:///rel/state-checkpoints"),
        ("postgresql://u@db/app", "postgresql://u@db/app"),
        ("postgres://u@db/app?sslmode=require", "postgres://u@db/app?sslmode=require"),
    ],
)
def test_checkpoints_live_beside_the_deck_state_by_default(state: str, expected: str) -> None:
    settings = Settings(env={"AGENTDECK_STATE": state})
    assert checkpoint_url(settings, settings.state_url) == (expected, "AGENTDECK_STATE")


def test_agentdeck_checkpoint_overrides_the_derived_location() -> None:
    settings = Settings(
        env={"AGENTDECK_STATE": "memory://", "AGENTDECK_CHECKPOINT": "sqlite:///cp.db"}
    )
    assert checkpoint_url(settings, settings.state_url) == (
        "sqlite:///cp.db",
        "AGENTDECK_CHECKPOINT",
    )


def test_a_state_root_with_no_checkpointer_says_to_set_agentdeck_checkpoint() -> None:
    with pytest.raises(ConfigError) as refused:
        checkpoint_url(Settings(env={}), "redis://:secret@cache:6379/0")
    assert refused.value.setting == "AGENTDECK_CHECKPOINT"
    message = str(refused.value)
    assert "AGENTDECK_STATE" in message and "secret" not in message


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:///rel/cp.db", "rel/cp.db"),
        ("sqlite:////abs/cp.db", "/abs/cp.db"),
        ("sqlite://cp.db?x=1", "cp.db"),
    ],
)
def test_sqlite_urls_follow_the_sqlalchemy_convention(url: str, path: str) -> None:
    assert sqlite_file(url) == Path(path)


def test_a_sqlite_url_without_a_file_is_refused() -> None:
    with pytest.raises(ConfigError, match="names no file"):
        sqlite_file("sqlite:///")


def test_the_plugin_registers_its_checkpointers_and_engine() -> None:
    host = _host()
    schemes = {r.name: r for r in host.registrations(CHECKPOINTERS.key)}
    assert sorted(schemes) == ["memory", "postgres", "postgresql", "sqlite"]
    assert {r.distribution for r in schemes.values()} == {"agentdeck-langgraph"}
    assert "langgraph" in host.names(ENGINES)
    request = BackendRequest(url="sqlite:///x.db")
    assert isinstance(host.checkpointer(request), SqliteCheckpointers)
    assert isinstance(host.checkpointer(BackendRequest(url="memory://")), MemoryCheckpointers)
    assert isinstance(
        host.checkpointer(BackendRequest(url="postgres://h/db")), PostgresCheckpointers
    )


async def test_an_engine_a_deck_builds_checkpoints_beside_its_sqlite_state(tmp_path: Path) -> None:
    state = tmp_path / "state.db"
    settings = Settings(env={"AGENTDECK_STATE": f"sqlite:///{state}"})
    [engine] = [
        e
        for e in _host().engines(EngineRequest(settings=settings, state_url=settings.state_url))
        if e.name == "langgraph"
    ]
    assert isinstance(engine, LangGraphEngine) and engine.capabilities.durable_suspend
    workflow = Workflow("approval", asking())
    invocation = make_invocation(engine, workflow, START_STATE)
    await engine.open()
    try:
        check_interrupted(await drive(engine, invocation))
    finally:
        await engine.close()
    assert (tmp_path / "state-checkpoints.db").is_file() and not state.exists()


def test_an_engine_on_memory_state_cannot_suspend_durably() -> None:
    engine = LangGraphEngine(EngineRequest(settings=Settings(env={}), state_url="memory://"))
    assert engine.capabilities.durable_suspend is False
    assert engine.capabilities.interrupts and engine.capabilities.safe_points == {"node_boundary"}
    with pytest.raises(AttributeError):
        engine.capabilities = engine.capabilities


async def test_a_deck_without_langgraph_workflows_opens_whatever_its_state_is() -> None:
    request = EngineRequest(settings=Settings(env={}), state_url="redis://cache:6379/0")
    idle = LangGraphEngine(request)
    await idle.open()  # nothing compiled: no checkpointer needed, none resolved
    await idle.close()
    busy = LangGraphEngine(request)
    busy.compile(Workflow("approval", asking()))
    with pytest.raises(ConfigError, match="AGENTDECK_CHECKPOINT"):
        await busy.open()


@pytest.mark.parametrize("missing", list(POSTGRES_MODULES))
async def test_postgresql_checkpoints_without_the_extra_name_it_when_the_engine_opens(
    missing: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A None entry in sys.modules fails the import as a missing package does.
    monkeypatch.setitem(sys.modules, missing, None)
    engine = LangGraphEngine(
        EngineRequest(settings=Settings(env={}), state_url="postgresql://127.0.0.1:5432/test")
    )
    engine.compile(Workflow("approval", asking()))

    with pytest.raises(ExtraNotInstalledError) as refused:
        await engine.open()
    await engine.close()

    error = refused.value
    assert error.requirement == "agentdeck-langgraph[postgres]" and error.missing == missing
    assert "postgresql:// LangGraph checkpointer" in str(error)
    assert "pip install 'agentdeck-langgraph[postgres]'" in str(error)


async def test_sqlite_checkpoints_need_no_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in POSTGRES_MODULES:
        monkeypatch.setitem(sys.modules, module, None)
    state = f"sqlite:///{tmp_path / 'state.db'}"
    engine = LangGraphEngine(EngineRequest(settings=Settings(env={}), state_url=state))
    workflow = Workflow("approval", asking())
    invocation = make_invocation(engine, workflow, START_STATE)
    await engine.open()
    try:
        check_interrupted(await drive(engine, invocation))
    finally:
        await engine.close()
    assert (tmp_path / "state-checkpoints.db").is_file()


async def test_an_unreachable_postgresql_checkpointer_is_a_store_error_not_a_driver_error() -> None:
    factory = PostgresCheckpointers(
        "postgresql://postgres:hunter2@127.0.0.1:1/none", open_timeout=0.5
    )
    with pytest.raises(StoreError) as refused:
        async with factory.open():
            pass
    assert refused.value.retryable and "hunter2" not in str(refused.value)
    assert "postgresql checkpoint store" in str(refused.value)


async def test_an_unwritable_sqlite_checkpointer_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreError, match="sqlite checkpoint store"):
        async with SqliteCheckpointers(f"sqlite:///{blocker / 'cp.db'}").open():
            pass


async def test_the_postgresql_checkpointer_creates_its_tables_in_the_given_schema(
    postgres_schema: PostgresSchema,
) -> None:
    import psycopg

    async with PostgresCheckpointers(postgres_schema.url).open() as saver:
        assert not isinstance(saver, InMemorySaver)
    with psycopg.connect(postgres_schema.server_url) as conn:
        tables = {
            row[0]
            for row in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                (postgres_schema.schema,),
            )
        }
    assert {
        "checkpoints",
        "checkpoint_blobs",
        "checkpoint_writes",
        "checkpoint_migrations",
    } <= tables


async def test_a_factory_that_yields_no_saver_is_refused() -> None:
    from collections.abc import AsyncIterator
    from contextlib import AbstractAsyncContextManager, asynccontextmanager
    from typing import Any

    from agentdeck.ports import CheckpointerFactory

    class Wrong(CheckpointerFactory):
        def open(self) -> AbstractAsyncContextManager[Any]:
            @asynccontextmanager
            async def opened() -> AsyncIterator[Any]:
                yield object()

            return opened()

    engine = LangGraphEngine(checkpointer=Wrong())
    engine.compile(Workflow("approval", asking()))
    with pytest.raises(ConfigError, match="not a LangGraph BaseCheckpointSaver"):
        await engine.open()


async def test_memory_checkpoints_beside_durable_state_are_announced_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(
        env={
            "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}",
            "AGENTDECK_CHECKPOINT": "memory://",
        }
    )
    engine = LangGraphEngine(EngineRequest(settings=settings, state_url=settings.state_url))
    workflow = Workflow("approval", asking())
    await engine.open()
    try:
        with caplog.at_level("WARNING", logger="agentdeck.langgraph"):
            for _ in range(2):
                check_interrupted(
                    await drive(engine, make_invocation(engine, workflow, START_STATE))
                )
    finally:
        await engine.close()
    [warning] = [r for r in caplog.records if r.name == "agentdeck.langgraph"]
    assert "will not survive this process" in warning.getMessage()
    assert "AGENTDECK_CHECKPOINT=memory://" in warning.getMessage()


async def test_nothing_extra_is_announced_when_the_whole_deck_is_in_memory(
    caplog: pytest.LogCaptureFixture,
) -> None:
    engine = LangGraphEngine(EngineRequest(settings=Settings(env={}), state_url="memory://"))
    await engine.open()
    try:
        with caplog.at_level("WARNING", logger="agentdeck.langgraph"):
            invocation = make_invocation(engine, Workflow("approval", asking()), START_STATE)
            check_interrupted(await drive(engine, invocation))
    finally:
        await engine.close()
    assert not [r for r in caplog.records if r.name == "agentdeck.langgraph"]
