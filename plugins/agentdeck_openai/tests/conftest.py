"""Test configuration: the Hypothesis profiles every AgentDeck suite shares, the core's isolation
fixtures (real Redis/PostgreSQL), and this package's own loopback-model-server fixtures."""

from __future__ import annotations

from agentdeck.testing.profiles import load_profile

pytest_plugins = ["agentdeck.testing.fixtures", "agentdeck_openai.pytest_plugin"]

load_profile()
