"""The run cursor codec: the opaque ``RunPage.next_cursor`` of a store that lists in open order.

A store that numbers its runs in the order they were opened (an ordinal) pages a listing by "runs
after ordinal N". The cursor carries that number, tagged with the store's scheme so a cursor from
another store is refused rather than misread; it is URL-safe base64, so it travels in a query
string untouched. Every first-party store uses this codec, so their cursors look alike.
"""

from __future__ import annotations

import base64
import binascii

from agentdeck.errors import InvalidInputError

__all__ = ["decode_cursor", "encode_cursor"]


def encode_cursor(scheme: str, ordinal: int) -> str:
    """The cursor of the page that starts after the run numbered ``ordinal``."""
    return base64.urlsafe_b64encode(f"{scheme}:{ordinal}".encode()).decode().rstrip("=")


def decode_cursor(scheme: str, cursor: str) -> int:
    """The ordinal a cursor of ``scheme`` encodes.

    Raises :class:`InvalidInputError` (``field="cursor"``) for a cursor this codec did not make
    for ``scheme``.
    """
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        prefix, _, number = raw.partition(":")
        if prefix != scheme:
            raise ValueError(prefix)
        return int(number)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidInputError(
            f"cursor {cursor!r} was not issued by this store; pass a RunPage.next_cursor "
            "from an earlier list_runs call, or None for the first page",
            field="cursor",
        ) from None
