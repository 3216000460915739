"""The core's contract kits against the PostgreSQL backends, on a fresh schema per test."""

from __future__ import annotations

import pytest
from contract_fixtures import port_fixtures

from agentdeck.testing import ControlContract, LeaseContract, StoreContract
from agentdeck.testing.fixtures import PostgresSchema
from agentdeck_stores.postgres import PostgresControlPort, PostgresEventStore, PostgresLeasePort


@pytest.fixture
def url(postgres_schema: PostgresSchema) -> str:
    """Every port of a test on the test's own schema."""
    return postgres_schema.url


class TestPostgresStore(StoreContract):
    durable = True
    shared = True

    store, reopen_store = port_fixtures(PostgresEventStore.from_request)


class TestPostgresControl(ControlContract):
    shared = True

    control, reopen = port_fixtures(PostgresControlPort.from_request)


class TestPostgresLeases(LeaseContract):
    shared = True

    leases, reopen = port_fixtures(PostgresLeasePort.from_request)
