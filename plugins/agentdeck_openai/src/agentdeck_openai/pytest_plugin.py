"""pytest fixtures for testing agents offline against the loopback model server.

Installing ``agentdeck-openai`` registers this module with pytest (the ``pytest11`` entry point
``agentdeck_openai``), so a test suite gets the fixtures without a ``conftest.py`` line. They are
opt-in: registering defines them and imports nothing else -- not the Agents SDK, not the
server -- and nothing runs until a test names a fixture. ``-p no:agentdeck_openai`` turns the
plugin off.

``model_server``
    a started :class:`~agentdeck_openai.testing.LoopbackModelServer` with an empty script;
    extend it with ``model_server.script.add(reply("hi"), ...)``. Stopped after the test.
``openai_env``
    the settings environment pointing a deck at that server: ``OPENAI_BASE_URL``,
    ``OPENAI_API_KEY="sk-loopback"`` and ``OPENAI_MODEL="loopback-model"``, for
    ``Settings(env=openai_env)`` or ``monkeypatch.setenv``.
``no_openai_trace_export``
    removes the Agents SDK's default trace exporter (the processor that uploads traces to
    OpenAI) for the rest of the session, so an offline test never tries to reach the provider
    -- which it would the moment ``OPENAI_API_KEY`` is set, even to the loopback key.
    ``model_server`` asks for it. Tracing itself stays on: a processor a test registers with
    ``agents.add_trace_processor`` still sees every span. Session-scoped because the SDK offers
    no way to read its processors back, so the exporter cannot be put back afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from agentdeck_openai.testing import LoopbackModelServer

__all__ = ["model_server", "no_openai_trace_export", "openai_env"]


@pytest.fixture(scope="session")
def no_openai_trace_export() -> None:
    """Drop the Agents SDK's default exporter for the rest of the test session."""
    from agents import set_trace_processors

    set_trace_processors([])


@pytest.fixture
def model_server(no_openai_trace_export: None) -> Iterator[LoopbackModelServer]:
    """A loopback OpenAI-compatible server with an empty script, stopped after the test."""
    from agentdeck_openai.testing import LoopbackModelServer, Script

    with LoopbackModelServer(Script()) as server:
        yield server


@pytest.fixture
def openai_env(model_server: LoopbackModelServer) -> dict[str, str]:
    """``OPENAI_BASE_URL``/``OPENAI_API_KEY``/``OPENAI_MODEL`` pointing at ``model_server``."""
    return model_server.env()
