"""Shared test configuration for agentdeck-core: the Hypothesis profiles every suite shares
(``agentdeck.testing.profiles``: 200 examples and no deadline under CI), and the per-test
isolation fixtures (``sqlite_path`` for the core's SQLite store)."""

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
