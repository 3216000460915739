"""A failing or missing collector never reaches the caller, and closing is bounded."""

from __future__ import annotations

import logging

import pytest

from agentdeck.errors import ConfigError
from agentdeck.testing.otlp import OTLPReceiver
from agentdeck.testing.trace_scenarios import agent_turn_with_tool, failed_run
from agentdeck_otel import OTelObserver


async def test_a_collector_answering_errors_never_raises_into_the_caller(
    receiver: OTLPReceiver, caplog: pytest.LogCaptureFixture
) -> None:
    receiver.status = 503
    observer = OTelObserver(receiver.url, timeout=1.0)
    await observer.start()
    for event in agent_turn_with_tool().events:
        await observer.emit(event)
    with caplog.at_level(logging.WARNING):
        await observer.close()

    assert receiver.requests("/v1/traces"), "the exporter did try"
    assert any(  # the failure is the exporter's to log, not the run's to raise
        r.name.startswith("opentelemetry.exporter") and r.levelno >= logging.ERROR
        for r in caplog.records
    )


async def test_an_unreachable_collector_never_raises_into_the_caller() -> None:
    with OTLPReceiver() as gone:
        url = gone.url  # a loopback port nothing listens on once the receiver stops
    observer = OTelObserver(url, timeout=0.5)
    await observer.start()
    for event in failed_run().events:
        await observer.emit(event)
    await observer.close()


async def test_constructing_and_starting_contact_nothing(receiver: OTLPReceiver) -> None:
    observer = OTelObserver(receiver.url)
    await observer.start()
    assert receiver.requests() == []
    await observer.close()


async def test_an_event_before_start_is_refused_clearly() -> None:
    observer = OTelObserver("http://127.0.0.1:4318")
    [event] = failed_run().events[:1]
    with pytest.raises(ConfigError, match="before start"):
        await observer.emit(event)


async def test_closing_twice_is_harmless(receiver: OTLPReceiver) -> None:
    observer = OTelObserver(receiver.url)
    await observer.start()
    await observer.close()
    await observer.close()
