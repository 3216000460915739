"""The control-verb check every control port makes before it records a request.

A control backend (memory, SQL, Redis, a third party's) takes a verb as a
:class:`~agentdeck.vocabulary.ControlVerb` or its string; anything else is an
:class:`~agentdeck.errors.InvalidInputError` on ``verb`` naming the verbs there are.
"""

from __future__ import annotations

from agentdeck.errors import InvalidInputError
from agentdeck.vocabulary import ControlVerb

__all__ = ["checked_verb"]


def checked_verb(verb: ControlVerb | str) -> ControlVerb:
    """``verb`` as a :class:`ControlVerb`; :class:`InvalidInputError` (``field="verb"``) if
    it names none."""
    try:
        return ControlVerb(verb)
    except ValueError:
        raise InvalidInputError(
            f"{verb!r} is not a control verb; use one of {', '.join(v.value for v in ControlVerb)}",
            field="verb",
        ) from None
