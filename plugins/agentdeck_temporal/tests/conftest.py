"""Fixtures of the Temporal plugin's tests: the machine's Temporal dev server, or a private one.

``.ci/services`` runs a dev server on 127.0.0.1:7233 beside PostgreSQL and Redis; the tests use it
when it answers there, and ``AGENTDECK_TEST_TEMPORAL=HOST:PORT`` names another. Otherwise the
session starts a private server on a free port and stops it by PID at the end. Every test uses a
task queue of its own, so tests never see each other's workflows on a shared server.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from agentdeck_temporal.testing import DevServer, serving

MACHINE_SERVER = "127.0.0.1:7233"
"""Where ``.ci/services`` runs the machine's dev server."""


@pytest.fixture(scope="session")
def temporal_target() -> Iterator[str]:
    """``host:port`` of a Temporal frontend the tests may use."""
    given = os.environ.get("AGENTDECK_TEST_TEMPORAL")
    if given:
        yield given
        return
    if serving(MACHINE_SERVER):
        yield MACHINE_SERVER
        return
    server = DevServer.start()
    try:
        yield server.target
    finally:
        server.stop()
