"""Test configuration: the Hypothesis profiles every AgentDeck suite shares, and the core's
per-test isolation fixtures on the real servers (``postgres_schema``, ``redis_prefix``,
``sqlite_path``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdeck.testing.profiles import load_profile

pytest_plugins = ["agentdeck.testing.fixtures"]

load_profile()


@pytest.fixture(autouse=True)
def _state_stays_in_the_test(isolated_state: Path) -> None:
    """Decks built with no state setting keep their default state file in this test's own
    working directory, never in the checkout."""
