"""Shared test configuration for agentdeck-core.

Hypothesis profiles: under CI (env ``CI`` set) the "ci" profile runs more examples and prints a
reproduction blob for every failure, so a red CI run can be replayed locally with
``@reproduce_failure``. Locally the "dev" profile keeps the loop fast. Neither has a per-example
deadline: timing-based flakiness is not a property we test (time in tests is an injected clock).
``HYPOTHESIS_PROFILE`` overrides the choice.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", deadline=None, max_examples=200, print_blob=True)
settings.register_profile("dev", deadline=None, max_examples=50)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)
