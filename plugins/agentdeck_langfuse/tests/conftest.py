"""Test configuration: the shared Hypothesis profiles, a loopback receiver standing in for a
Langfuse server's OTLP endpoint, and settings pointing at it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdeck.settings import Settings
from agentdeck.testing.otlp import OTLPReceiver
from agentdeck.testing.profiles import load_profile

pytest_plugins = ["agentdeck.testing.fixtures"]

load_profile()


@pytest.fixture
def receiver() -> Iterator[OTLPReceiver]:
    """Accepts the Langfuse SDK's real OTLP POSTs (``/api/public/otel/v1/traces``)."""
    with OTLPReceiver() as running:
        yield running


@pytest.fixture
def public_key() -> str:
    """A key no other test uses: the Langfuse SDK keeps one client per public key per process."""
    return f"pk-lf-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def langfuse_env(receiver: OTLPReceiver, public_key: str) -> dict[str, str]:
    return {
        "AGENTDECK_LANGFUSE_PUBLIC_KEY": public_key,
        "AGENTDECK_LANGFUSE_SECRET_KEY": "sk-lf-test-secret",
        "AGENTDECK_LANGFUSE_BASE_URL": receiver.url,
    }


@pytest.fixture
def settings(langfuse_env: dict[str, str]) -> Settings:
    return Settings(env=langfuse_env)


@pytest.fixture(autouse=True)
def _state_stays_in_the_test(isolated_state: Path) -> None:
    """Decks built with no state setting keep their default state file in this test's own
    working directory, never in the checkout."""
