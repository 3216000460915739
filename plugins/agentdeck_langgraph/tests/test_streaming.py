"""The shapes a custom stream write can take, mapped without running a graph."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk

from agentdeck.model.payloads import Custom, Report, TextDelta
from agentdeck.vocabulary import ReportLevel
from agentdeck_langgraph import emit
from agentdeck_langgraph.streaming import custom_payload, message_payloads

RECORD = "langgraph stream write"


@pytest.mark.parametrize(
    ("written", "payload"),
    [
        ("text", Report(message="text")),
        ({"name": "app.done"}, Custom(name="app.done")),
        ({"name": "app.done", "data": [1]}, Custom(name="app.done", data=[1])),
        ({"message": "m", "level": "error"}, Report(level=ReportLevel.ERROR, message="m")),
        ({"message": "m", "fields": {"k": 1}}, Report(message="m", fields={"k": 1})),
        # Not quite either shape: kept whole as a record, never dropped.
        (
            {"name": "not-namespaced", "data": 1},
            Report(level="record", message=RECORD, fields={"name": "not-namespaced", "data": 1}),
        ),
        (
            {"message": "m", "level": 5},
            Report(level="record", message=RECORD, fields={"message": "m", "level": 5}),
        ),
        (
            {"message": "m", "extra": True},
            Report(level="record", message=RECORD, fields={"message": "m", "extra": True}),
        ),
        ({1: "x"}, Report(level="record", message=RECORD, fields={"value": {"1": "x"}})),
        ([1, 2], Report(level="record", message=RECORD, fields={"value": [1, 2]})),
    ],
)
def test_a_custom_write_maps_by_its_shape(written: Any, payload: Any) -> None:
    assert custom_payload(written) == payload


def test_emit_refuses_a_name_that_is_not_namespaced() -> None:
    with pytest.raises(ValueError, match="namespaced"):
        emit("progress")


def test_only_streamed_ai_text_becomes_a_delta() -> None:
    chunk = AIMessageChunk(content="tok", id="m-1")
    assert list(message_payloads((chunk, {}))) == [TextDelta(message_id="m-1", text="tok")]
    assert list(message_payloads((AIMessageChunk(content="", id="m-1"), {}))) == []
    assert list(message_payloads((AIMessage(content="whole"), {}))) == []
