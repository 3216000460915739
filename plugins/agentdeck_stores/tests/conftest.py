"""Test configuration: the Hypothesis profiles every AgentDeck suite shares, the core's
per-test isolation fixtures on the real servers (``postgres_schema``, ``redis_prefix``,
``sqlite_path``), and this directory on ``sys.path``, so the contract modules import the kit
fixtures of ``contract_fixtures.py`` by name (importlib mode leaves a test directory off it)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentdeck.testing.profiles import load_profile

pytest_plugins = ["agentdeck.testing.fixtures"]

load_profile()

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture(autouse=True)
def _state_stays_in_the_test(isolated_state: Path) -> None:
    """Decks built with no state setting keep their default state file in this test's own
    working directory, never in the checkout."""
