"""The TTL check every lease port makes before it grants or renews a lease.

A lease backend (memory, SQL, a third party's) takes a lease's TTL as seconds; anything but a
positive number is an :class:`~agentdeck.errors.InvalidInputError` on ``ttl``, refused before
the backend reads or writes anything, worded the same whichever backend refused it.
"""

from __future__ import annotations

from datetime import timedelta

from agentdeck.errors import InvalidInputError

__all__ = ["checked_ttl"]


def checked_ttl(ttl: float) -> timedelta:
    """``ttl`` seconds as a span; :class:`InvalidInputError` (``field="ttl"``) unless it is
    positive."""
    if not ttl > 0:
        raise InvalidInputError(
            f"a lease TTL must be a positive number of seconds, not {ttl!r}", field="ttl"
        )
    return timedelta(seconds=ttl)
