"""Opt-in pytest fixtures for testing agents offline against the loopback model server.

Enable it in a ``conftest.py``::

    pytest_plugins = ["agentdeck_openai.pytest_plugin"]

``model_server``
    a started :class:`~agentdeck_openai.testing.LoopbackModelServer` with an empty script;
    extend it with ``model_server.script.add(reply("hi"), ...)``. Stopped after the test.
``openai_env``
    the settings environment pointing a deck at that server: ``OPENAI_BASE_URL``,
    ``OPENAI_API_KEY="sk-loopback"`` and ``OPENAI_MODEL="loopback-model"``, for
    ``Settings(env=openai_env)`` or ``monkeypatch.setenv``.

Loading the plugin also removes the Agents SDK's default trace exporter (the processor that
uploads traces to OpenAI) for the test session, so no test ever tries to reach a provider. Tracing
itself stays on: a processor a test registers with ``agents.add_trace_processor`` still sees
every span.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentdeck_openai.testing import LoopbackModelServer, Script

__all__ = ["model_server", "openai_env", "pytest_configure"]


def pytest_configure(config: pytest.Config) -> None:
    """Drop the SDK's exporter before any test (or module-level code) can create a trace."""
    from agents import set_trace_processors

    set_trace_processors([])


@pytest.fixture
def model_server() -> Iterator[LoopbackModelServer]:
    """A loopback OpenAI-compatible server with an empty script, stopped after the test."""
    with LoopbackModelServer(Script()) as server:
        yield server


@pytest.fixture
def openai_env(model_server: LoopbackModelServer) -> dict[str, str]:
    """``OPENAI_BASE_URL``/``OPENAI_API_KEY``/``OPENAI_MODEL`` pointing at ``model_server``."""
    return model_server.env()
