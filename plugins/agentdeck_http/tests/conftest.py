"""Test configuration: the shared Hypothesis profiles, the isolation fixtures, and this
package's helpers (``support.py``, importable as ``http_test_support``)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentdeck.testing.profiles import load_profile

pytest_plugins = ["agentdeck.testing.fixtures"]

load_profile()


def _load_support() -> Any:
    name = "http_test_support"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("support.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


support = _load_support()


@pytest.fixture
def loopback_model() -> Iterator[Any]:
    """A started loopback OpenAI-compatible model server (agentdeck-openai)."""
    testing = support.require_openai()
    from agents import set_trace_processors

    set_trace_processors([])
    with testing.LoopbackModelServer(testing.Script()) as server:
        yield server


@pytest.fixture(autouse=True)
def _state_stays_in_the_test(isolated_state: Path) -> None:
    """Decks built with no state setting keep their default state file in this test's own
    working directory, never in the checkout."""
