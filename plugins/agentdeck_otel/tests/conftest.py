"""Test configuration: the shared Hypothesis profiles, and a loopback OTLP receiver."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdeck.testing.otlp import OTLPReceiver
from agentdeck.testing.profiles import load_profile

pytest_plugins = ["agentdeck.testing.fixtures"]

load_profile()


@pytest.fixture
def receiver() -> Iterator[OTLPReceiver]:
    """An OTLP/HTTP endpoint on 127.0.0.1 that keeps what the exporter really sent."""
    with OTLPReceiver() as running:
        yield running


@pytest.fixture(autouse=True)
def _state_stays_in_the_test(isolated_state: Path) -> None:
    """Decks built with no state setting keep their default state file in this test's own
    working directory, never in the checkout."""
