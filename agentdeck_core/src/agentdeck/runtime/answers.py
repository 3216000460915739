"""What an answer must fit: which open question it answers, and whether its value has the shape
the question declared.

Pure functions of a run's folded state, used by :meth:`Continuation.answer
<agentdeck.runtime.continuation.Continuation.answer>` before anything is written. A refusal
never echoes the value: it may be anything a person typed.
"""

from __future__ import annotations

from typing import Any

from agentdeck.errors import InvalidInputError
from agentdeck.model.payloads import AnswerShape
from agentdeck.model.status import OpenInterrupt, RunState

__all__ = ["choose_interrupt", "refusal"]


def choose_interrupt(run_id: str, state: RunState, interrupt_id: str | None) -> OpenInterrupt:
    """The open question ``interrupt_id`` names -- needed only when several are open."""
    open_ids = [i.interrupt_id for i in state.interrupts]
    if interrupt_id is None:
        if len(state.interrupts) == 1:
            return state.interrupts[0]
        raise InvalidInputError(
            f"run '{run_id}' has {len(open_ids)} open questions "
            f"({', '.join(open_ids)}); say which with answer(value, interrupt_id=...)",
            name=run_id,
            field="interrupt_id",
        )
    for interrupt in state.interrupts:
        if interrupt.interrupt_id == interrupt_id:
            return interrupt
    raise InvalidInputError(
        f"run '{run_id}' has no open question '{interrupt_id}'; open: "
        + (", ".join(open_ids) or "none"),
        name=run_id,
        field="interrupt_id",
    )


def refusal(expected: Any, value: Any) -> str | None:
    """Why ``value`` does not fit the interrupt's declared shape (never echoing the value)."""
    if not isinstance(expected, AnswerShape):
        return None
    if expected.options is not None and value not in expected.options:
        return "the answer must be one of the offered options: " + ", ".join(
            repr(option) for option in expected.options
        )
    if expected.json_schema is not None:
        import jsonschema

        validator = jsonschema.Draft202012Validator(expected.json_schema)
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
        if errors:
            first = errors[0]
            where = "/".join(str(p) for p in first.absolute_path) or "the answer"
            return f"{where} does not match the expected schema ({first.validator} failed)"
    return None
