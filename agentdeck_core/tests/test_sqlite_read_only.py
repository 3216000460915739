"""Read-only opens (``BackendRequest.read_only``) of the SQLite backends create nothing.

Commands that only read (``runs list``/``show``/``tail``, the console's reads) open the state
this way: an existing file is read (and never written), a file named explicitly that does not
exist is an error naming it, and the default file that nothing has created yet reads as empty.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdeck.errors import ConfigError, StoreError
from agentdeck.plugins.host import default_host
from agentdeck.ports import BackendRequest, RunQuery
from agentdeck.settings import Settings
from agentdeck.sqlite.store import SqliteEventStore
from agentdeck.testing import new_run
from agentdeck.vocabulary import ControlVerb


def _request(url: str, settings: Settings | None = None) -> BackendRequest:
    return BackendRequest(url=url, settings=settings, read_only=True)


async def test_an_explicit_path_that_does_not_exist_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "not-here" / "state.db"
    settings = Settings(env={"AGENTDECK_STATE": f"sqlite:///{path}"})
    store = default_host().event_store(_request(settings.events_url, settings))

    with pytest.raises(ConfigError, match=str(path)) as refused:
        await store.open()

    assert "does not exist" in str(refused.value)
    assert not path.parent.exists()  # neither the file nor its directory was made


async def test_the_default_file_before_anything_created_it_is_an_empty_store(
    tmp_path: Path,
) -> None:
    settings = Settings(project=tmp_path / ".agentdeck")
    assert settings.state_is_default
    host = default_host()
    store = host.event_store(_request(settings.events_url, settings))
    control = host.control_port(_request(settings.control_url, settings))
    leases = host.lease_port(_request(settings.control_url, settings))
    for backend in (store, control, leases):
        await backend.open()
    try:
        assert (await store.list_runs(RunQuery())).runs == []
        assert await store.get_run("run-1") is None
        assert await control.pending("run-1") == ()
    finally:
        for backend in (store, control, leases):
            await backend.close()
    assert list(tmp_path.iterdir()) == []  # no .agentdeck/, no state.db


async def test_an_existing_file_is_read_and_never_written(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/state.db"
    writer = SqliteEventStore(url)
    await writer.open()
    await writer.open_run(new_run(run_id="run-1"))
    await writer.close()
    settings = Settings(env={"AGENTDECK_STATE": url})

    reader = default_host().event_store(_request(url, settings))
    assert isinstance(reader, SqliteEventStore) and reader.read_only
    await reader.open()
    try:
        record = await reader.get_run("run-1")
        assert record is not None and record.run_id == "run-1"
        assert [r.run_id for r in (await reader.list_runs(RunQuery())).runs] == ["run-1"]
        with pytest.raises(StoreError, match="read-only"):
            await reader.open_run(new_run(run_id="run-2"))
    finally:
        await reader.close()
    again = SqliteEventStore(url)
    await again.open()
    try:
        assert await again.get_run("run-2") is None
    finally:
        await again.close()


async def test_a_read_only_control_port_refuses_requests(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/state.db"
    creator = SqliteEventStore(url)
    await creator.open()
    await creator.close()
    control = default_host().control_port(_request(url))
    await control.open()
    try:
        with pytest.raises(StoreError, match="read-only"):
            await control.request("run-1", ControlVerb.CANCEL)
        assert await control.pending("run-1") == ()
    finally:
        await control.close()


async def test_a_file_with_no_agentdeck_schema_is_refused_not_initialised(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    store = default_host().event_store(_request(f"sqlite:///{path}"))
    with pytest.raises(ConfigError, match="no AgentDeck state"):
        await store.open()
    assert path.read_bytes() == b""
