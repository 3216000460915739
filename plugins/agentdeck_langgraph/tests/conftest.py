"""Test configuration: the Hypothesis profiles every AgentDeck suite shares."""

from __future__ import annotations

from agentdeck.testing.profiles import load_profile

load_profile()
