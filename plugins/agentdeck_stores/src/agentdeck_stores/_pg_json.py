"""An event as PostgreSQL's ``jsonb`` keeps it, numbers included.

``jsonb`` stores a JSON number as a ``numeric`` and writes it back in ``numeric``'s own
spelling, which has no exponent: ``1e20`` comes back as ``100000000000000000000``, and a JSON
reader then hands back an ``int`` where a ``float`` was written -- a different value for a
caller that checks types, and for the next store the run is copied into. ``numeric`` keeps the
digits after the point it is given, though (``1.0`` stays ``1.0``), so a float written without
an exponent and with a ``.0`` reads back as the same float.

Only floats written with a positive exponent are affected (every one of them is a whole
number, which ``numeric`` then prints as an integer); a negative exponent already comes back as
a decimal fraction, which reads as a float. So :func:`jsonb_text` rewrites exactly those number
tokens -- never text inside a JSON string -- and leaves every other byte as ``Event.to_json``
wrote it. A quick scan skips the rewrite for the envelopes (nearly all) that have none.
"""

from __future__ import annotations

import re

from agentdeck.model.events import Event

__all__ = ["jsonb_text"]

_MAYBE = re.compile(r"[:,\[]-?[0-9]+(?:\.[0-9]+)?[eE]\+?[0-9]")
"""A number with a positive exponent where a JSON value starts: present in every envelope
:func:`jsonb_text` changes, and in next to no other (a hex run id has digits around an ``e``,
but inside a string, after a letter or a quote)."""
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|(-?[0-9]+(?:\.[0-9]+)?[eE]\+?[0-9]+)')
"""A JSON string (kept as it is), or a number with a positive exponent (group 1)."""


def _plain(match: re.Match[str]) -> str:
    number = match.group(1)
    if number is None:
        return match.group()
    return f"{int(float(number))}.0"


def jsonb_text(event: Event) -> str:
    """``event.to_json()``, with every float that has a positive exponent written out in full
    (``1e20`` as ``100000000000000000000.0``), so ``jsonb`` gives back the float it was given."""
    text = event.to_json()
    if _MAYBE.search(text) is None:
        return text
    return _TOKENS.sub(_plain, text)
