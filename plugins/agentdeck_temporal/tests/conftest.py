"""Fixtures of the Temporal plugin's tests: one private dev server per session.

``AGENTDECK_TEST_TEMPORAL=HOST:PORT`` points the tests at a server already running instead
(CI may start one beside PostgreSQL and Redis); otherwise the session starts its own on a free
port and stops it by PID at the end.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from agentdeck_temporal.testing import DevServer


@pytest.fixture(scope="session")
def temporal_target() -> Iterator[str]:
    """``host:port`` of a Temporal frontend the tests may use."""
    given = os.environ.get("AGENTDECK_TEST_TEMPORAL")
    if given:
        yield given
        return
    server = DevServer.start()
    try:
        yield server.target
    finally:
        server.stop()
