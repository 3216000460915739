"""Hypothesis profiles every AgentDeck test suite shares, plugins' included.

Under CI (env ``CI`` set) the ``ci`` profile runs 200 examples per property and prints a
reproduction blob for every failure, so a red run can be replayed locally. Locally ``dev`` keeps
the loop fast. Neither has a per-example deadline: time in these tests is an injected clock, and
a deadline would only turn a slow CI machine into flakiness. ``HYPOTHESIS_PROFILE`` overrides the
choice.

``ci-repeat`` is for CI sessions that repeat a suite another session already runs at full depth:
the dependency-floor sessions and the other interpreters. They are there to catch an API or
interpreter difference, which the first examples of every property meet; searching 200 examples
again only on older releases would buy little and cost most of CI's time (the stores' stateful
machines alone take minutes per session). The noxfile selects it for those sessions.

A plugin's ``conftest.py`` calls :func:`load_profile` once (the core's does the same).
"""

from __future__ import annotations

import os

from hypothesis import settings

__all__ = ["load_profile"]

settings.register_profile("ci", deadline=None, max_examples=200, print_blob=True)
settings.register_profile("ci-repeat", deadline=None, max_examples=25, print_blob=True)
settings.register_profile("dev", deadline=None, max_examples=50)


def load_profile() -> str:
    """Load the profile for this environment and return its name."""
    name = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
    settings.load_profile(name)
    return name
