"""Test configuration: the Hypothesis profiles every AgentDeck suite shares, and the core's
per-test isolation fixtures on the real servers (``postgres_schema``, ``redis_prefix``,
``sqlite_path``)."""

from __future__ import annotations

from agentdeck.testing.profiles import load_profile

pytest_plugins = ["agentdeck.testing.fixtures"]

load_profile()
