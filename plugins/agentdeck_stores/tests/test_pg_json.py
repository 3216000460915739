"""``jsonb_text``: floats with a positive exponent are written out in full, nothing else moves."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from agentdeck.model.content import DataBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunStarted
from agentdeck_stores._pg_json import jsonb_text


def _event(data: object, run_id: str = "4e5a7e9c") -> Event:
    started = RunStarted(name="n", invocable_kind="workflow", input=[DataBlock(data=data)])
    return Event.record(started, seq=0, run_id=run_id, ts=datetime(2026, 1, 1, tzinfo=UTC))


def test_positive_exponents_are_written_out_and_read_back_as_the_same_floats() -> None:
    data = {"big": [1e20, -1.5e300, 1.7976931348623157e308], "small": [1e-300, 0.5], "n": 10**30}
    text = jsonb_text(_event(data))
    assert "e+" not in text and "1e20" not in text
    assert "100000000000000000000.0" in text
    assert json.loads(text)["payload"]["input"][0]["data"] == data


def test_text_that_looks_like_a_number_is_left_alone() -> None:
    event = _event({"note": "1e20, [2e5", "1e9": ":3e7"})
    assert jsonb_text(event) == event.to_json()
