"""The published event JSON Schema: committed, current, and true to what the Python reader does.

Needs ``jsonschema`` (part of the ``testing`` extra).
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from jsonschema import Draft202012Validator

from agentdeck.errors import EventSchemaError
from agentdeck.model.events import SCHEMA_VERSION, Event
from agentdeck.model.payloads import PAYLOAD_TYPES, Custom, Report, TextDelta
from agentdeck.model.schema import (
    EVENT_SCHEMA_ID,
    JSON_SCHEMA_DIALECT,
    event_json_schema,
    main,
    render_event_json_schema,
)
from agentdeck.testing import event_examples as ex

REGENERATE = (
    "src/agentdeck/event.schema.json is out of date with the event models; regenerate it from "
    "the agentdeck_core directory with:\n"
    "    PYTHONPATH=src python -m agentdeck.model.schema > src/agentdeck/event.schema.json"
)


def _committed_text() -> str:
    return (importlib.resources.files("agentdeck") / "event.schema.json").read_text("utf-8")


COMMITTED_VALIDATOR = Draft202012Validator(json.loads(_committed_text()))
"""Built once: compiling the schema costs far more than validating one event against it."""


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    return COMMITTED_VALIDATOR


def _errors(validator: Draft202012Validator, instance: Any) -> list[str]:
    return [e.message for e in validator.iter_errors(instance)]


def _event(kind: str, payload: dict[str, Any], **envelope: Any) -> dict[str, Any]:
    return {
        "v": {"major": 1, "minor": 0},
        "kind": kind,
        "seq": 0,
        "run_id": "r-1",
        "session_id": None,
        "namespace": None,
        "parent_run_id": None,
        "origin": None,
        "ts": "2025-03-04T05:06:07Z",
        **envelope,
        "payload": {"kind": kind, **payload},
    }


# --------------------------------------------------------------------------- the committed file


def test_the_committed_schema_is_the_generated_one() -> None:
    assert _committed_text() == render_event_json_schema(), REGENERATE


def test_the_committed_schema_is_package_data() -> None:
    path = Path(str(importlib.resources.files("agentdeck") / "event.schema.json"))
    assert path.parent.name == "agentdeck"
    assert path.is_file()


def test_the_generator_writes_the_committed_text(capsys: pytest.CaptureFixture[str]) -> None:
    main()
    assert capsys.readouterr().out == _committed_text()


def test_the_schema_is_valid_json_schema_of_its_dialect() -> None:
    schema = event_json_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == JSON_SCHEMA_DIALECT
    assert schema["$id"] == EVENT_SCHEMA_ID == "urn:agentdeck:schema:event:1"
    assert schema["title"] == "AgentDeck event"
    assert schema["x-agentdeck-schema-version"] == {
        "major": SCHEMA_VERSION.major,
        "minor": SCHEMA_VERSION.minor,
    }


def test_every_kind_has_its_definition() -> None:
    defs = event_json_schema()["$defs"]
    for payload_cls in PAYLOAD_TYPES:
        definition = defs[payload_cls.__name__]
        assert definition["properties"]["kind"]["const"] == payload_cls.KIND
        assert definition["required"][0] == "kind"


def test_the_schema_is_a_fresh_dict_each_time() -> None:
    first = event_json_schema()
    first["$defs"].clear()
    assert event_json_schema()["$defs"]


# --------------------------------------------------------------------------- what validates


@pytest.mark.parametrize("event", ex.EXAMPLE_EVENTS, ids=lambda e: e.kind)
def test_every_example_event_validates(validator: Draft202012Validator, event: Event) -> None:
    assert _errors(validator, json.loads(event.to_json())) == []


@pytest.mark.parametrize("payload_cls", PAYLOAD_TYPES, ids=lambda t: t.KIND)
def test_every_minimal_event_validates(
    validator: Draft202012Validator, payload_cls: type[Any]
) -> None:
    full = ex.PAYLOAD_EXAMPLES[payload_cls]
    required = {n: getattr(full, n) for n, f in payload_cls.model_fields.items() if f.is_required()}
    event = ex.record(payload_cls(**required))
    assert _errors(validator, json.loads(event.to_json())) == []


def test_an_unknown_kind_validates(validator: Draft202012Validator) -> None:
    assert _errors(validator, json.loads(ex.UNKNOWN_EVENT_JSON)) == []


def test_another_minor_validates(validator: Draft202012Validator) -> None:
    event = _event("report", {"message": "m", "new_field": 1}, v={"major": 1, "minor": 9})
    assert _errors(validator, event) == []
    Event.from_dict(event)  # and the reader agrees


def test_an_unknown_enum_value_validates(validator: Draft202012Validator) -> None:
    event = _event("run.failed", {"error_code": "quota_exhausted", "message": "m"})
    assert _errors(validator, event) == []


@given(payload=ex.PAYLOAD_STRATEGY, envelope=ex.ENVELOPE_STRATEGY)
def test_random_events_validate(
    payload: TextDelta | Report | Custom, envelope: dict[str, Any]
) -> None:
    instance = json.loads(Event.record(payload, **envelope).to_json())
    COMMITTED_VALIDATOR.validate(instance)


# --------------------------------------------------------------------------- what is refused


REFUSED = {
    "another major": _event("report", {"message": "m"}, v={"major": 2, "minor": 0}),
    "payload without kind": {**_event("report", {"message": "m"}), "payload": {"message": "m"}},
    "known kind missing a field": _event("text.delta", {"text": "x"}),
    "known kind with a wrong type": _event("text.delta", {"message_id": "m", "text": 5}),
    "invalid kind syntax": _event("Run.Started", {"x": 1}),
    "envelope and payload disagree": {
        **_event("text.delta", {}),
        "payload": {"kind": "thought.delta", "message_id": "m", "text": "x"},
    },
    "unknown block of a known type": _event(
        "input.appended", {"input": [{"type": "text", "body": "no text field"}]}
    ),
    "custom name not namespaced": _event("custom", {"name": "thing"}),
    "negative seq": _event("report", {"message": "m"}, seq=-1),
    "missing run_id": {
        k: v for k, v in _event("report", {"message": "m"}).items() if k != "run_id"
    },
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_what_the_reader_refuses_the_schema_refuses(
    validator: Draft202012Validator, case: str
) -> None:
    instance = REFUSED[case]
    assert _errors(validator, instance), f"the schema accepts an event the reader refuses: {case}"
    with pytest.raises(EventSchemaError):
        Event.from_dict(instance)
