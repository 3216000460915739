"""Test configuration: the Hypothesis profiles every AgentDeck suite shares and the core's isolation
fixtures (real Redis/PostgreSQL). This package's loopback-model-server fixtures (``model_server``,
``openai_env``) come from its own pytest plugin, which pytest loads through the ``pytest11`` entry
point of the installed distribution, as it does for a user's suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdeck.testing.profiles import load_profile

pytest_plugins = ["agentdeck.testing.fixtures"]

load_profile()


def pytest_configure(config: pytest.Config) -> None:
    """Every test here is offline: drop the Agents SDK's default trace exporter before any test
    (or module-level code) can create a trace, not only in tests that ask for ``model_server``."""
    from agents import set_trace_processors

    set_trace_processors([])


def _load_engine_support() -> None:
    """Make ``engine_support.py`` (the engine tests' shared helpers) importable by name: the
    suite runs in importlib mode, where a test directory is not on ``sys.path``."""
    import importlib.util
    import sys
    from pathlib import Path

    if "engine_support" in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(
        "engine_support", Path(__file__).with_name("engine_support.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["engine_support"] = module
    spec.loader.exec_module(module)


_load_engine_support()


@pytest.fixture(autouse=True)
def _state_stays_in_the_test(isolated_state: Path) -> None:
    """Decks built with no state setting keep their default state file in this test's own
    working directory, never in the checkout."""
