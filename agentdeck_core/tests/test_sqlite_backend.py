"""What the SQLite backends promise beyond the contract kits: URLs, files, errors, retention."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agentdeck.errors import ConfigError, StoreError
from agentdeck.model.clock import ManualClock
from agentdeck.model.payloads import RunCompleted
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import BackendRequest, LeaseState, PruneQuery
from agentdeck.sqlite.schema import SCHEMA_VERSION, parse_url
from agentdeck.sqlite.store import SqliteControlPort, SqliteEventStore, SqliteLeasePort
from agentdeck.testing import new_run
from agentdeck.vocabulary import ControlVerb


@pytest.mark.parametrize(
    ("url", "relative"),
    [
        ("sqlite:///state/agentdeck.db", "state/agentdeck.db"),
        ("sqlite://state/agentdeck.db", "state/agentdeck.db"),
        ("sqlite:///my%20state.db", "my state.db"),
    ],
)
def test_relative_urls_resolve_against_the_working_directory_when_built(
    url: str, relative: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = SqliteEventStore.from_request(BackendRequest(url=url))
    monkeypatch.chdir(tmp_path.parent)  # a later chdir does not move the state
    assert store.path == str(tmp_path / relative)


def test_four_slashes_make_an_absolute_path(tmp_path: Path) -> None:
    target = parse_url(f"sqlite:///{tmp_path}/x.db")  # "sqlite:///" + "/tmp/..."
    assert target.path == f"{tmp_path}/x.db"
    # Survives a crash of the process (not a power cut) unless asked for more.
    assert target.synchronous == "NORMAL"
    assert parse_url(f"sqlite:///{tmp_path}/x.db?synchronous=full").synchronous == "FULL"


@pytest.mark.parametrize(
    "url",
    [
        "sqlite://",
        "sqlite:///",
        "sqlite:///:memory:",
        "sqlite:///state.db?journal=off",
        "sqlite:///state.db?synchronous=sometimes",
        "postgresql:///state.db",
    ],
)
def test_urls_that_name_no_usable_file_are_refused(url: str) -> None:
    with pytest.raises(ConfigError) as refused:
        SqliteEventStore.from_request(BackendRequest(url=url))
    assert refused.value.accepted


async def test_the_file_and_its_directory_are_created_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "state.db"
    store = SqliteEventStore.from_request(BackendRequest(url=f"sqlite:///{path}"))
    await store.open()
    try:
        await store.open_run(new_run())
    finally:
        await store.close()
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert connection.execute("SELECT version FROM agentdeck_schema").fetchall() == [
            (SCHEMA_VERSION,)
        ]


async def test_a_file_that_cannot_be_opened_is_a_store_error_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the database's directory should be")
    url = f"sqlite:///{blocker}/state.db"
    for port in (
        SqliteEventStore.from_request(BackendRequest(url=url)),
        SqliteControlPort.from_request(BackendRequest(url=url)),
        SqliteLeasePort.from_request(BackendRequest(url=url)),
    ):
        with pytest.raises(StoreError) as refused:
            await port.open()
        assert refused.value.backend == "sqlite"
        assert str(blocker) in str(refused.value)


async def test_a_database_written_by_a_newer_release_is_refused(sqlite_path: Path) -> None:
    url = f"sqlite:///{sqlite_path}"
    store = SqliteEventStore.from_request(BackendRequest(url=url))
    await store.open()
    await store.close()
    with sqlite3.connect(sqlite_path) as connection:
        connection.execute("UPDATE agentdeck_schema SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="newer AgentDeck"):
        await SqliteEventStore.from_request(BackendRequest(url=url)).open()


async def test_using_a_store_before_open_or_after_close_is_a_store_error(
    sqlite_path: Path,
) -> None:
    store = SqliteEventStore.from_request(BackendRequest(url=f"sqlite:///{sqlite_path}"))
    with pytest.raises(StoreError, match="open"):
        await store.get_run("r")
    await store.open()
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.append("r", [RunCompleted()])


async def test_prune_drops_the_control_requests_and_leases_of_pruned_runs(
    sqlite_path: Path,
) -> None:
    url = f"sqlite:///{sqlite_path}"
    clock = ManualClock()
    store = SqliteEventStore.from_request(BackendRequest(url=url, clock=clock))
    control = SqliteControlPort.from_request(BackendRequest(url=url, clock=clock))
    leases = SqliteLeasePort.from_request(BackendRequest(url=url, clock=clock))
    for port in (store, control, leases):
        await port.open()
    try:
        done, live = new_run(), new_run()
        for new in (done, live):
            assert (await store.open_run(new)).opened
            await control.request(new.run_id, ControlVerb.PAUSE)
            await leases.acquire(new.run_id, "worker", 10)
        await store.append(done.run_id, [RunCompleted()])
        assert await store.prune(PruneQuery()) == 1
        assert await control.pending(done.run_id) == ()
        assert await leases.state(done.run_id) is LeaseState.NONE
        assert len(await control.pending(live.run_id)) == 1
        assert await leases.state(live.run_id) is LeaseState.ALIVE
    finally:
        for port in (store, control, leases):
            await port.close()


def test_the_core_plugin_builds_each_sqlite_backend(tmp_path: Path) -> None:
    host = PluginHost.discover()
    sqlite = BackendRequest(url=f"sqlite:///{tmp_path}/state.db")
    assert isinstance(host.event_store(sqlite), SqliteEventStore)
    assert isinstance(host.control_port(sqlite), SqliteControlPort)
    assert isinstance(host.lease_port(sqlite), SqliteLeasePort)
