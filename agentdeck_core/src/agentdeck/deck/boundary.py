"""What the public API accepts, checked once where a caller's value comes in.

Every door to a run -- ``Deck.run``/``stream``, ``deck.runs``, a ``Run`` handle, and the surfaces
built on the run service (the HTTP binding, the command line) -- passes its caller's values
through these checks before anything is resolved or written, so a bad value is an
:class:`~agentdeck.errors.InvalidInputError` naming the field, never a driver's error, a
pydantic ``ValidationError`` or a bare ``TypeError`` from deep inside a store.

The rule for text is the same on every store: **text no backend can hold is refused, everything
else is stored and read back exactly.** Two things are refused, wherever text goes (a run's
input, its session id, namespace and key, a run id, a query's filters, an answer, a reason):

* the NUL character (``"\\x00"``): PostgreSQL cannot store it in ``text`` or ``jsonb``, and a
  store that escaped it would hand back something other than what the next store does;
* lone surrogates (``"\\ud800"``): they are not Unicode text, have no UTF-8 form and no JSON
  form, so no store can write them.

JSON data (a workflow's input, an answer) is held to JSON's own limits besides: no NaN or
infinity, no integer too long to be written as text (over 4,300 digits), no value that is not
data at all (an arbitrary object). The store contract kit
(:mod:`agentdeck.testing.store.text`) holds every store to the other half of the rule: whatever
passes here comes back unchanged.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from agentdeck.errors import InvalidInputError
from agentdeck.model.content import ContentBlock
from agentdeck.vocabulary import RunStatus

__all__ = [
    "MAX_INT_DIGITS",
    "checked_blocks",
    "checked_datetime",
    "checked_json",
    "checked_limit",
    "checked_seq",
    "checked_statuses",
    "checked_text",
    "optional_text",
    "unstorable_text",
]

MAX_INT_DIGITS = 4300
"""The longest integer JSON data may carry, in decimal digits: Python's own limit for turning an
integer into text (``sys.get_int_max_str_digits()``'s default), past which no store can write it."""

_INT_LIMIT = 10**MAX_INT_DIGITS
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable_text(value: str) -> str | None:
    """Why no store can hold ``value`` (``None`` when every store can)."""
    found = _UNSTORABLE.search(value)
    if found is None:
        return None
    if found.group() == "\x00":
        return f"contains a NUL character (at index {found.start()}), which no store can hold"
    return (
        f"contains a lone surrogate (U+{ord(found.group()):04X} at index {found.start()}), "
        "which is not Unicode text"
    )


def checked_text(value: object, field: str, *, name: str | None = None) -> str:
    """``value`` if it is text every store can hold; otherwise :class:`InvalidInputError`."""
    if not isinstance(value, str):
        raise InvalidInputError(
            f"{field} must be a string, not {type(value).__name__}", name=name, field=field
        )
    problem = unstorable_text(value)
    if problem is not None:
        raise InvalidInputError(f"{field} {problem}", name=name, field=field)
    return value


def optional_text(value: object, field: str, *, name: str | None = None) -> str | None:
    """:func:`checked_text`, with ``None`` allowed (the field was not given)."""
    return None if value is None else checked_text(value, field, name=name)


def checked_json(value: Any, field: str, *, name: str | None = None) -> Any:
    """``value`` if it is JSON data every store holds exactly; otherwise
    :class:`InvalidInputError` naming the field and the first offending place in it.

    The value is returned as given: normalizing it to its JSON form stays the event model's job.
    """
    problem = _json_problem(value, field, depth=0)
    if problem is not None:
        raise InvalidInputError(problem, name=name, field=field)
    return value


def checked_blocks(
    blocks: Iterable[ContentBlock], field: str = "input", *, name: str | None = None
) -> list[ContentBlock]:
    """A run's prepared input, refused if any text in any block is text no store can hold."""
    checked = list(blocks)
    for index, block in enumerate(checked):
        where = f"{field}[{index}]"
        problem = _json_problem(block.model_dump(), where, depth=0)
        if problem is not None:
            raise InvalidInputError(problem, name=name, field=field)
    return checked


def checked_datetime(value: object, field: str) -> datetime | None:
    """``None`` or a timezone-aware time (a naive one has no single meaning across workers)."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidInputError(
            f"{field} must be a timezone-aware datetime, not {type(value).__name__}", field=field
        )
    if value.utcoffset() is None:
        raise InvalidInputError(
            f"{field} must be timezone-aware (e.g. datetime.now(UTC) + timedelta(...)); "
            "a naive datetime means different moments to different workers",
            field=field,
        )
    return value


def checked_limit(value: object, field: str = "limit") -> int | None:
    """``None`` or a positive integer."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"{field} must be a positive integer or None", field=field)
    return value


def checked_seq(value: object, field: str = "from_seq") -> int:
    """A sequence number to read from: an integer of zero or more."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInputError(f"{field} must be an integer of 0 or more", field=field)
    return value


def checked_statuses(value: object, field: str = "status") -> Any:
    """``None``, a :class:`RunStatus` (or its value), or a collection of them, as members."""
    if value is None:
        return None
    if isinstance(value, str):
        return _status(value, field)
    if isinstance(value, Iterable) and not isinstance(value, bytes | Mapping):
        return frozenset(_status(item, field) for item in value)
    raise InvalidInputError(
        f"{field} must be a run status or a collection of them, not {type(value).__name__}",
        field=field,
    )


def _status(value: object, field: str) -> RunStatus:
    if isinstance(value, str) and value in _STATUS_VALUES:
        return RunStatus(value)
    accepted = ", ".join(sorted(_STATUS_VALUES))
    got = "an unknown status" if isinstance(value, str) else type(value).__name__
    raise InvalidInputError(f"{field} must be one of {accepted}; got {got}", field=field)


_STATUS_VALUES = frozenset(status.value for status in RunStatus)


_MAX_DEPTH = 200
"""Nesting past this is refused: JSON readers (and Python's own) give up around here."""


def _json_problem(value: Any, where: str, *, depth: int) -> str | None:
    """What is wrong with ``value`` as stored JSON data, with its place (``None``: nothing).

    Walks exactly the shapes the event model turns into JSON (mappings, sequences, scalars,
    pydantic models); anything else is handed to the model's own normalization, whose refusal
    is reported here instead of escaping as a ``ValidationError``.
    """
    if depth > _MAX_DEPTH:
        return f"{where} is nested more than {_MAX_DEPTH} levels deep"
    kind = type(value)
    if value is None or kind is bool:
        return None
    if isinstance(value, str):
        problem = unstorable_text(value)
        return f"{where} {problem}" if problem else None
    if isinstance(value, int):
        if abs(value) >= _INT_LIMIT:
            return f"{where} is an integer of more than {MAX_INT_DIGITS} digits"
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where} is {value}, which JSON cannot carry"
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str):
                problem = unstorable_text(key)
                if problem:
                    return f"{where} has a key that {problem}"
            elif not isinstance(key, int | float | bool) and key is not None:
                return f"{where} has a {type(key).__name__} key; JSON keys are strings"
            found = _json_problem(item, f"{where}.{key}", depth=depth + 1)
            if found:
                return found
        return None
    if isinstance(value, list | tuple | set | frozenset):
        for index, item in enumerate(value):
            found = _json_problem(item, f"{where}[{index}]", depth=depth + 1)
            if found:
                return found
        return None
    if isinstance(value, BaseModel):
        return _json_problem(value.model_dump(), where, depth=depth + 1)
    return _normalized_problem(value, where)


def _normalized_problem(value: Any, where: str) -> str | None:
    """Whether the event model can turn ``value`` (a time, bytes, a dataclass...) into JSON."""
    from pydantic_core import from_json, to_json

    try:
        normalized = from_json(to_json(value), allow_inf_nan=False)
    except (ValueError, ValidationError) as exc:
        return f"{where} ({type(value).__name__}) is not JSON data: {exc}"
    return _json_problem(normalized, where, depth=0)
