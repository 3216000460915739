"""One warning per outage and one "back" line, however many calls fail in between."""

from __future__ import annotations

import logging
import time

import pytest

from agentdeck_stores._outage import Outage, outage_for


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "agentdeck.stores.outage"]


def test_an_outage_is_said_once_and_its_end_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="agentdeck.stores.outage")
    outage = Outage("redis", "redis://:secret@127.0.0.1:1/0")
    outage.reached(time.monotonic())  # no outage: nothing to say
    for _ in range(50):
        outage.failed(ConnectionError("refused"), time.monotonic())
    assert outage.down
    outage.reached(time.monotonic())
    outage.reached(time.monotonic())
    lines = _lines(caplog)
    assert len(lines) == 2, lines
    assert "is unreachable (ConnectionError: refused)" in lines[0]
    assert "secret" not in lines[0]  # the URL is redacted
    assert "is back after" in lines[1]
    assert not outage.down


def test_a_call_in_flight_when_the_server_died_does_not_end_the_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="agentdeck.stores.outage")
    outage = Outage("postgresql", "postgresql://127.0.0.1:1/db")
    in_flight = time.monotonic()
    outage.failed(OSError("connection lost"), in_flight)
    outage.reached(in_flight)  # began before the outage was seen: no sign the server is back
    assert outage.down
    assert len(_lines(caplog)) == 1


def test_a_call_waiting_when_the_server_came_back_does_not_start_a_new_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="agentdeck.stores.outage")
    outage = Outage("postgresql", "postgresql://127.0.0.1:4/db")
    outage.failed(OSError("connection refused"), time.monotonic())
    waiting = time.monotonic()  # a call that waits for a pooled connection from here
    outage.reached(time.monotonic())  # another call, begun later, reached the server
    outage.failed(TimeoutError("no connection within 1 s"), waiting)  # the waiter gives up
    assert not outage.down
    lines = _lines(caplog)
    assert len(lines) == 2 and "is back after" in lines[1], lines
    outage.failed(OSError("connection refused"), time.monotonic())  # a call begun afterwards
    assert outage.down
    assert len(_lines(caplog)) == 3


def test_the_ports_of_one_server_share_its_outage() -> None:
    url = "redis://127.0.0.1:2/0"
    assert outage_for("redis", url) is outage_for("redis", url)
    assert outage_for("redis", url) is not outage_for("redis", "redis://127.0.0.1:3/0")
