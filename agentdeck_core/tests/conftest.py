"""Shared test configuration for agentdeck-core: the Hypothesis profiles every suite shares
(``agentdeck.testing.profiles``: 200 examples and no deadline under CI)."""

from __future__ import annotations

from agentdeck.testing.profiles import load_profile

load_profile()
