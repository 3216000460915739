"""What a LangGraph stream item becomes in a run's log, and the helpers nodes write through.

The engine streams a graph with the modes ``updates`` (one ``node.updated`` per completed node),
``custom`` (what a node writes to LangGraph's stream writer), ``messages`` (tokens of LangChain
chat models called inside nodes) and ``checkpoints`` (where one superstep ends; see the engine).
This module maps the first three to payloads and nothing else, so the mapping is testable alone.

Custom stream writes (``get_stream_writer()(value)`` or ``runtime.stream_writer(value)``), by
shape:

* a string: ``report`` at level ``info`` with that message;
* ``{"name": "app.thing", "data": ...}`` (a namespaced name, ``data`` optional, no other key):
  ``custom`` with that name and data -- what :func:`emit` writes;
* ``{"message": str, "level": ..., "fields": {...}}`` (``level``/``fields`` optional, no other
  key): ``report`` with those -- what :func:`report` writes;
* any other value: ``report`` at level ``record`` (data kept for later) whose ``fields`` are the
  mapping itself, or ``{"value": value}`` for a non-mapping.

Data fields hold JSON (see ``docs/architecture.md``): :func:`json_safe` converts what a graph
produces (LangChain messages, pydantic models, dataclasses, tuples, datetimes) to its JSON form,
and names anything JSON cannot carry by its type instead of failing the run over it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from langchain_core.messages import AIMessageChunk
from langgraph.config import get_stream_writer
from pydantic import ValidationError
from pydantic_core import from_json, to_json

from agentdeck.model.field_types import KIND_PATTERN
from agentdeck.model.payloads import Custom, Payload, Report, TextDelta
from agentdeck.vocabulary import ReportLevel

__all__ = [
    "STREAM_WRITE_MESSAGE",
    "custom_payload",
    "emit",
    "json_safe",
    "message_payloads",
    "report",
]

STREAM_WRITE_MESSAGE = "langgraph stream write"
"""The ``report.message`` of a custom stream write that is neither text nor a report shape."""

_REPORT_KEYS = frozenset({"message", "level", "fields"})
_CUSTOM_KEYS = frozenset({"name", "data"})


def json_safe(value: Any) -> Any:
    """``value`` in its JSON form: models and dataclasses as objects, tuples as lists, NaN as
    ``null``; an object JSON has no form for becomes the string ``"<unserializable TypeName>"``
    (its type, never its ``repr``, which may carry anything)."""
    return from_json(to_json(value, fallback=_unserializable, inf_nan_mode="null"))


def _unserializable(value: Any) -> str:
    return f"<unserializable {type(value).__name__}>"


# =========================================================================== custom writes


def report(message: str, *, level: ReportLevel | str = ReportLevel.INFO, **fields: Any) -> None:
    """Record progress from inside a node as a ``report`` event (``level``: info, warning,
    error, record; ``fields``: JSON data). Outside a streamed run it does nothing."""
    get_stream_writer()({"message": message, "level": str(level), "fields": fields})


def emit(name: str, data: Any = None) -> None:
    """Record application data from inside a node as a ``custom`` event named ``name``
    (namespaced, like ``app.progress``). Outside a streamed run it does nothing."""
    if "." not in name or not KIND_PATTERN.match(name):
        raise ValueError(f"custom event name {name!r} must be namespaced, like 'app.thing'")
    get_stream_writer()({"name": name, "data": data})


def custom_payload(value: Any) -> Payload:
    """The payload one custom stream write becomes (see the module doc for the shapes)."""
    if isinstance(value, str):
        return Report(message=value)
    if isinstance(value, Mapping):
        keys = set(value)
        name = value.get("name")
        if "name" in keys and keys <= _CUSTOM_KEYS and isinstance(name, str):
            try:
                return Custom(name=name, data=json_safe(value.get("data")))
            except ValidationError:
                pass  # not a namespaced name: kept below as a record
        message = value.get("message")
        fields = value.get("fields", {})
        shaped = keys <= _REPORT_KEYS and isinstance(fields, Mapping)
        if isinstance(message, str) and shaped and all(isinstance(k, str) for k in fields):
            try:
                return Report(
                    message=message,
                    level=value.get("level", ReportLevel.INFO),
                    fields=json_safe(fields),
                )
            except ValidationError:
                pass
        if all(isinstance(key, str) for key in keys):
            return Report(
                level=ReportLevel.RECORD, message=STREAM_WRITE_MESSAGE, fields=json_safe(value)
            )
    return Report(
        level=ReportLevel.RECORD, message=STREAM_WRITE_MESSAGE, fields={"value": json_safe(value)}
    )


# =========================================================================== model tokens


def message_payloads(chunk: Any) -> Iterator[Payload]:
    """``text.delta`` for a token a chat model streamed inside a node.

    ``chunk`` is a ``messages`` stream item, ``(message, metadata)``. Only streamed pieces of an
    AI message become deltas (their ``message_id`` is the model call's id, shared by every piece
    of one reply); whole messages a node returns are already in its ``node.updated``.
    """
    message = chunk[0] if isinstance(chunk, tuple) and chunk else chunk
    if not isinstance(message, AIMessageChunk):
        return
    text = str(message.text)
    if text:
        yield TextDelta(message_id=message.id or "message", text=text)
