"""The field types the event schema is built from: kind syntax, UTC times, open vocabularies.

The envelope (:mod:`agentdeck.model.events`) and the payloads (:mod:`agentdeck.model.payloads`)
declare their fields with these, and readers that build events without validating them (the
stored-event codec) recognise them by identity, so each is defined once, here:

* :data:`KIND_PATTERN` -- what a kind (or a ``custom`` event's name) may look like, with the
  same syntax for JSON Schema readers;
* :data:`UtcDatetime` -- a timezone-aware time, converted to UTC when the event is built, so what
  is written never depends on the writer's zone;
* the open vocabularies (:data:`OPEN_VOCABULARIES`) -- a known value becomes its
  :mod:`agentdeck.vocabulary` member, and a value a newer minor added stays a plain string instead
  of failing the whole event.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, PlainValidator
from pydantic_core import PydanticCustomError

from agentdeck.vocabulary import (
    AnswerOrigin,
    ControlVerb,
    ErrorCode,
    InterruptReason,
    ReportLevel,
    SafePoint,
    WaitKind,
)

__all__ = [
    "CUSTOM_NAME_JSON_PATTERN",
    "KIND_JSON_PATTERN",
    "KIND_PATTERN",
    "OPEN_VOCABULARIES",
    "OpenAnswerOrigin",
    "OpenControlVerb",
    "OpenErrorCode",
    "OpenInterruptReason",
    "OpenReportLevel",
    "OpenSafePoint",
    "OpenWaitKind",
    "UtcDatetime",
]

_KIND_SYNTAX = r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*"
KIND_PATTERN = re.compile(rf"\A{_KIND_SYNTAX}\Z")
"""What a kind may look like: dotted lower-case words (``run.started``, ``app.thing``).

Anchored with ``\\A``/``\\Z`` (not ``^``/``$``, which would let a trailing newline through), so
``KIND_PATTERN.match`` checks the whole string.
"""

KIND_JSON_PATTERN = r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$"
"""The same syntax in the regex subset JSON Schema recommends (ECMA-262, where ``$`` is the very
end and a plain group is the portable one)."""
CUSTOM_NAME_JSON_PATTERN = r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$"
"""A kind-shaped name with at least one dot: what ``custom.name`` accepts, for the JSON Schema."""


def _to_utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


UtcDatetime = Annotated[AwareDatetime, AfterValidator(_to_utc)]
"""A timezone-aware time, kept in UTC so it is always written with ``Z``."""


# --------------------------------------------------------------------------- open vocabularies
# The vocabularies themselves live in agentdeck.vocabulary; here is how event fields accept them.


def _open_vocabulary(enum: type[StrEnum]) -> PlainValidator:
    """Validate an ``Enum | str`` field: a known value becomes the member, any other string stays.

    One validator rather than a pydantic union, so a wrong type is one error at the field itself
    (``payload.error_code``) instead of one per union member.
    """

    def validate(value: object) -> str:
        if isinstance(value, enum):
            return value
        if not isinstance(value, str):
            raise PydanticCustomError("string_type", "Input should be a valid string")
        try:
            return enum(value)
        except ValueError:
            return value

    return PlainValidator(validate, json_schema_input_type=enum | str)


OpenErrorCode = Annotated[ErrorCode | str, _open_vocabulary(ErrorCode)]
OpenControlVerb = Annotated[ControlVerb | str, _open_vocabulary(ControlVerb)]
OpenSafePoint = Annotated[SafePoint | str, _open_vocabulary(SafePoint)]
OpenInterruptReason = Annotated[InterruptReason | str, _open_vocabulary(InterruptReason)]
OpenAnswerOrigin = Annotated[AnswerOrigin | str, _open_vocabulary(AnswerOrigin)]
OpenReportLevel = Annotated[ReportLevel | str, _open_vocabulary(ReportLevel)]
OpenWaitKind = Annotated[WaitKind | str, _open_vocabulary(WaitKind)]

OPEN_VOCABULARIES: tuple[tuple[object, type[StrEnum]], ...] = (
    (OpenErrorCode, ErrorCode),
    (OpenControlVerb, ControlVerb),
    (OpenSafePoint, SafePoint),
    (OpenInterruptReason, InterruptReason),
    (OpenAnswerOrigin, AnswerOrigin),
    (OpenReportLevel, ReportLevel),
    (OpenWaitKind, WaitKind),
)
"""Each open-vocabulary field type with the enum whose members it yields."""
