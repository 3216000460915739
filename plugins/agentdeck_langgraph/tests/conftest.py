"""Test configuration: the Hypothesis profiles every AgentDeck suite shares, the core's isolation
fixtures (real PostgreSQL, SQLite paths), and this package's graph helpers on ``sys.path``.

``lg_graphs`` holds the graphs the tests (and the child processes of the cross-process tests)
build; it is imported by name, so its directory is put on ``sys.path`` here.
"""

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
