"""agentdeck-stores installs as an AgentDeck plugin."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points, version

import agentdeck.sqlite
import agentdeck_stores
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import BackendRequest
from agentdeck_stores.postgres import PostgresControlPort, PostgresEventStore, PostgresLeasePort


def test_package_imports_and_its_entry_point_is_declared() -> None:
    assert agentdeck_stores.__version__ == version("agentdeck-stores")

    (entry_point,) = [ep for ep in entry_points(group="agentdeck") if ep.name == "stores"]
    assert entry_point.value == "agentdeck_stores.plugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "agentdeck-stores"
    assert entry_point.load() is importlib.import_module("agentdeck_stores.plugin")


def test_the_plugin_builds_each_server_backend_by_scheme() -> None:
    host = PluginHost.discover()
    for scheme in ("postgresql", "postgres"):
        postgres = BackendRequest(url=f"{scheme}://agentdeck@db.internal/agentdeck")
        assert isinstance(host.event_store(postgres), PostgresEventStore)
        assert isinstance(host.control_port(postgres), PostgresControlPort)
        assert isinstance(host.lease_port(postgres), PostgresLeasePort)


def test_sqlite_is_the_cores_and_the_old_import_path_still_names_it() -> None:
    from agentdeck_stores import plugin
    from agentdeck_stores.sqlite import SqliteControlPort, SqliteEventStore, SqliteLeasePort

    assert "sqlite" not in plugin.BACKENDS
    assert SqliteEventStore is agentdeck.sqlite.SqliteEventStore
    assert SqliteControlPort is agentdeck.sqlite.SqliteControlPort
    assert SqliteLeasePort is agentdeck.sqlite.SqliteLeasePort
    (registration,) = [
        r for r in PluginHost.discover().registrations("event_stores") if r.name == "sqlite"
    ]
    assert (registration.plugin, registration.distribution) == ("sqlite", "agentdeck-core")
