"""What an ask accepts as its answer, and the check an answer passes before the body sees it.

``ctx.ask(question, schema=..., options=...)`` declares the answer's shape. The shape is
recorded on ``run.interrupted.expected`` (an :class:`~agentdeck.model.payloads.AnswerShape`) so the
runtime can refuse a bad answer before recording it; the engine checks again when the body
replays to the ask, because only the body holds the Python type (a pydantic model's own
validators go beyond its JSON Schema) and because the log may have been written by a runtime
that did not check. An answer that fails here is refused in the log (``answer.refused``) and the
ask parks again.

* ``schema`` a type (a pydantic model, ``int``, ``list[str]``, a ``TypedDict``...): its JSON
  Schema is recorded and the answer handed to the body is validated *into* that type.
* ``schema`` a mapping: a JSON Schema, recorded as given; the answer is checked against it
  (``jsonschema``, the draft the schema's ``$schema`` names, 2020-12 by default) and handed over
  as JSON.
* ``options``: the only values accepted (compared as JSON), checked before ``schema``.

A refusal reason names what was expected -- the type, the failing schema keyword and where, or
the options -- and never echoes the value that was given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for
from pydantic import TypeAdapter, ValidationError
from pydantic.errors import PydanticUserError

from agentdeck.authoring.context_check import type_label
from agentdeck.model.payloads import AnswerShape

__all__ = ["Accepted", "AnswerSpec", "Refused"]


@dataclass(frozen=True, slots=True)
class Accepted:
    """The answer fits; ``value`` is what the body receives (a model instance for a type)."""

    value: Any


@dataclass(frozen=True, slots=True)
class Refused:
    """The answer does not fit; ``reason`` names what would have been accepted."""

    reason: str


@dataclass(frozen=True, slots=True)
class AnswerSpec:
    """One ask's declared answer shape, ready to record and to check answers against.

    Build it with :meth:`build`, which raises ``ValueError`` naming the mistake when the
    declaration itself is unusable (an options string, a type pydantic cannot describe, an
    invalid JSON Schema).
    """

    shape: AnswerShape | None = None
    adapter: TypeAdapter[Any] | None = None
    type_name: str | None = None
    json_schema: Mapping[str, Any] | None = None
    options: tuple[Any, ...] | None = None

    @classmethod
    def build(
        cls,
        schema: type[Any] | Mapping[str, Any] | None = None,
        options: Sequence[Any] | None = None,
    ) -> AnswerSpec:
        adapter: TypeAdapter[Any] | None = None
        type_name: str | None = None
        raw_schema: Mapping[str, Any] | None = None
        recorded_schema: dict[str, Any] | None = None
        if isinstance(schema, Mapping):
            raw_schema = schema
            recorded_schema = dict(schema)
            try:
                validator_for(recorded_schema).check_schema(recorded_schema)
            except SchemaError as invalid:
                where = "/".join(str(part) for part in invalid.absolute_path) or "the top level"
                raise ValueError(
                    f"ask(schema=...) is not a valid JSON Schema (at {where}: fails "
                    f"'{invalid.validator}'); pass a JSON Schema mapping or a type"
                ) from None
            except Exception:  # jsonschema trips over some malformed schemas ($schema: 5)
                raise ValueError(
                    "ask(schema=...) is not a valid JSON Schema; pass a JSON Schema mapping or a "
                    "type"
                ) from None
        elif schema is not None:
            type_name = type_label(schema)
            try:
                adapter = TypeAdapter(schema)
                recorded_schema = adapter.json_schema()
            except (PydanticUserError, TypeError):
                raise ValueError(
                    f"ask(schema={type_name}) is not a type pydantic can describe as JSON "
                    "Schema; pass a pydantic model, a JSON-compatible type or a JSON Schema "
                    "mapping"
                ) from None
        choices: tuple[Any, ...] | None = None
        if options is not None:
            if isinstance(options, str | bytes) or not isinstance(options, Sequence):
                raise ValueError(
                    f"ask(options=...) takes a list of the accepted answers, not a "
                    f"{type(options).__name__}"
                )
            if not options:
                raise ValueError("ask(options=[]) would accept no answer; list at least one")
            choices = tuple(options)
        shape = None
        if recorded_schema is not None or choices is not None:
            try:
                shape = AnswerShape(
                    json_schema=recorded_schema,
                    options=list(choices) if choices is not None else None,
                )
            except ValidationError:
                raise ValueError(
                    "ask(options=...) and ask(schema=...) are recorded in the run's log, so "
                    "they must be JSON data (options: a list of strings, numbers, booleans...)"
                ) from None
        return cls(
            shape=shape,
            adapter=adapter,
            type_name=type_name,
            json_schema=raw_schema,
            # Compare against the recorded (JSON) form: that is what an answer is matched to.
            options=tuple(shape.options) if shape is not None and shape.options else None,
        )

    def check(self, value: Any) -> Accepted | Refused:
        """Check an answer (JSON, as recorded) against this shape."""
        if self.options is not None and value not in self.options:
            listed = ", ".join(_json_label(option) for option in self.options)
            return Refused(f"expected one of the options {listed}")
        if self.adapter is not None:
            try:
                return Accepted(self.adapter.validate_python(value))
            except ValidationError as invalid:
                return Refused(f"expected {self.type_name}: {_pydantic_problems(invalid)}")
        if self.json_schema is not None:
            schema = dict(self.json_schema)
            error = next(iter(validator_for(schema)(schema).iter_errors(value)), None)
            if error is not None:
                where = "/".join(str(part) for part in error.absolute_path) or "the top level"
                return Refused(
                    f"does not fit the declared JSON Schema: at {where} it fails "
                    f"'{error.validator}' ({_json_label(error.validator_value)})"
                )
        return Accepted(value)


def _pydantic_problems(invalid: ValidationError) -> str:
    """Where and what, from pydantic's errors; never the input (``msg`` does not carry it)."""
    problems = []
    for error in invalid.errors(include_url=False, include_input=False)[:3]:
        where = ".".join(str(part) for part in error["loc"]) or "the top level"
        problems.append(f"{where}: {error['msg']}")
    more = len(invalid.errors()) - len(problems)
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")


def _json_label(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
