"""Payload checks: what a store accepts from ``append`` and ``open_run``, checked before any I/O.

``append`` takes payload models, and also plain dicts (parsed as the schema says) and
:class:`~agentdeck.model.payloads.UnknownEvent` for kinds this release does not know. Anything
else -- another pydantic model, a payload subclass, an ``UnknownEvent`` wearing a known kind --
is an :class:`~agentdeck.errors.EventSchemaError` naming what was passed, the same from every store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentdeck.errors import EventSchemaError
from agentdeck.model.events import parse_payload
from agentdeck.model.payloads import PAYLOAD_TYPES, Payload, RunStarted, UnknownEvent, payload_type
from agentdeck.ports import NewRun

__all__ = ["KNOWN_PAYLOADS", "checked_payload", "checked_payloads", "checked_started"]

KNOWN_PAYLOADS: frozenset[type] = frozenset(PAYLOAD_TYPES)
"""The payload model classes: ``type(p) in KNOWN_PAYLOADS`` is the fast path of a check."""


def checked_payload(payload: Any) -> Payload:
    """``payload`` as a validated payload model (a dict is parsed; a model is checked)."""
    if type(payload) in KNOWN_PAYLOADS:
        return payload  # type: ignore[no-any-return]
    if isinstance(payload, UnknownEvent):
        known = payload_type(payload.kind)
        if known is not None:
            raise EventSchemaError(
                f"an UnknownEvent cannot carry the known kind {payload.kind!r}; "
                f"build a {known.__name__} instead",
                kind=payload.kind,
            )
        return payload
    if isinstance(payload, dict):
        return parse_payload(payload)
    kind = getattr(payload, "kind", None)
    raise EventSchemaError(
        f"{type(payload).__name__} is not an event payload; append payload models from "
        "agentdeck.model.payloads (TextDelta, RunCompleted, ...)",
        kind=kind if isinstance(kind, str) else None,
    )


def checked_payloads(payloads: Sequence[Any]) -> list[Payload]:
    """Every payload of an ``append`` batch checked as :func:`checked_payload` does."""
    for payload in payloads:
        if type(payload) not in KNOWN_PAYLOADS:
            return [checked_payload(payload) for payload in payloads]
    return list(payloads)


def checked_started(new: NewRun) -> RunStarted:
    """``new.started``, which must be a :class:`RunStarted` (the event ``open_run`` records)."""
    started = new.started
    if not isinstance(started, RunStarted):
        raise EventSchemaError(
            f"NewRun.started must be a RunStarted payload, not {type(started).__name__}",
            kind=getattr(started, "kind", None),
        )
    return started
