"""The event schema as JSON Schema, for readers that are not Python.

:func:`event_json_schema` is generated from :class:`~agentdeck.model.events.Event` itself, so it
cannot describe anything the Python reader does not accept. It is the *reader's* schema (validation
mode): a field with a default may be absent, because an event written by an older minor lacks the
fields a newer one added. What tells payloads (and content blocks) apart is ``kind`` (``type``),
which is always required, and the schemas for unknown kinds and block types exclude the known
ones, so ``oneOf`` matches exactly one branch for any event this release reads.

The same schema ships as package data, ``agentdeck/event.schema.json``, read with
``importlib.resources.files("agentdeck") / "event.schema.json"``. After changing the event models,
regenerate it from the ``agentdeck_core`` directory with::

    PYTHONPATH=src python -m agentdeck.model.schema > src/agentdeck/event.schema.json

(a test fails while the committed file and the models disagree).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from agentdeck.model.events import SCHEMA_VERSION, Event
from agentdeck.model.payloads import PAYLOAD_TYPES

__all__ = [
    "EVENT_SCHEMA_ID",
    "JSON_SCHEMA_DIALECT",
    "event_json_schema",
    "render_event_json_schema",
]

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
"""The JSON Schema dialect pydantic generates, and the one :func:`event_json_schema` declares."""

EVENT_SCHEMA_ID = f"urn:agentdeck:schema:event:{SCHEMA_VERSION.major}"
"""``$id`` of the event schema: one per schema major (a minor only adds, so it keeps the id)."""


def event_json_schema() -> dict[str, Any]:
    """The JSON Schema of one event envelope (with its payload), as a fresh dict.

    ``x-agentdeck-schema-version`` is the ``{major, minor}`` this release writes; ``v.major`` is
    pinned to that major, since readers refuse another.
    """
    generated = Event.model_json_schema()
    properties = generated["properties"]
    properties["v"] = {
        "allOf": [{"$ref": "#/$defs/SchemaVersion"}],
        "properties": {"major": {"const": SCHEMA_VERSION.major}},
        "default": SCHEMA_VERSION.model_dump(),
        "description": "Schema version the event was written with; readers refuse another major.",
    }
    # JSON Schema cannot compare two values, so "the payload repeats the envelope's kind" is
    # spelled out per known kind (an unknown kind's payload is checked by the Python reader only).
    generated["allOf"] = [
        {
            "if": {"properties": {"kind": {"const": payload.KIND}}, "required": ["kind"]},
            "then": {"properties": {"payload": {"properties": {"kind": {"const": payload.KIND}}}}},
        }
        for payload in PAYLOAD_TYPES
    ]
    generated.pop("title", None)
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "$id": EVENT_SCHEMA_ID,
        "title": "AgentDeck event",
        "x-agentdeck-schema-version": SCHEMA_VERSION.model_dump(),
        **generated,
    }


def render_event_json_schema() -> str:
    """:func:`event_json_schema` as the exact text of the committed ``event.schema.json``."""
    return json.dumps(event_json_schema(), indent=2, ensure_ascii=True) + "\n"


def main() -> None:
    """Write the schema to stdout: ``python -m agentdeck.model.schema > event.schema.json``."""
    sys.stdout.write(render_event_json_schema())


if __name__ == "__main__":
    main()
