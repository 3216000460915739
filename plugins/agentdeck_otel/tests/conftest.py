"""Test configuration: the shared Hypothesis profiles, and a loopback OTLP receiver."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentdeck.testing.otlp import OTLPReceiver
from agentdeck.testing.profiles import load_profile

load_profile()


@pytest.fixture
def receiver() -> Iterator[OTLPReceiver]:
    """An OTLP/HTTP endpoint on 127.0.0.1 that keeps what the exporter really sent."""
    with OTLPReceiver() as running:
        yield running
