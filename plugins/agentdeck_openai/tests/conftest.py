"""Test configuration: the Hypothesis profiles every AgentDeck suite shares, the core's isolation
fixtures (real Redis/PostgreSQL), and this package's own loopback-model-server fixtures."""

from __future__ import annotations

from agentdeck.testing.profiles import load_profile

pytest_plugins = ["agentdeck.testing.fixtures", "agentdeck_openai.pytest_plugin"]

load_profile()


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
