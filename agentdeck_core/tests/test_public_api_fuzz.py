"""The public API answers every bad value with an ``AgentDeckError`` (issue 20, item 6), on the
in-memory store; the stores plugin runs the same property on SQLite, PostgreSQL and Redis."""

from __future__ import annotations

from agentdeck.settings import Settings
from agentdeck.testing.api_fuzz import fuzz_public_api
from agentdeck.testing.fixtures import in_ci


def test_no_public_deck_call_raises_outside_the_hierarchy() -> None:
    fuzz_public_api(
        {"settings": Settings(env={"AGENTDECK_STATE": "memory://"})},
        examples=400 if in_ci() else 150,
    )
