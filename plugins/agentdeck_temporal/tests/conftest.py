"""Fixtures of the Temporal plugin's tests: the machine's Temporal dev server, or a private one.

``.ci/services`` runs a dev server on 127.0.0.1:7233 beside PostgreSQL and Redis; the tests use it
when it answers there, and ``AGENTDECK_TEST_TEMPORAL=HOST:PORT`` names another. Otherwise the
session starts a private server on a free port and stops it by PID at the end. Every test uses a
task queue of its own, so tests never see each other's workflows on a shared server.

This directory is put on ``sys.path`` too, so tests import ``worker_support.py`` (the hand-over
tests' helpers) by name: the suite runs in importlib mode, which leaves a test directory off it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdeck_temporal.testing import DevServer, serving

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

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
