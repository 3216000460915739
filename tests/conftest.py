"""Cross-package tests: the core's isolation fixtures, and each test in a working directory of its
own, so a deck built with no state setting never writes ``.agentdeck/state.db`` into the
checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["agentdeck.testing.fixtures"]


@pytest.fixture(autouse=True)
def _state_stays_in_the_test(isolated_state: Path) -> None:
    """Decks built with no state setting keep their default state file in this test's own
    working directory, never in the checkout."""
