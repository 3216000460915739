"""Run ids: what ``uuid.uuid4().hex`` gives, drawn from the operating system in bulk.

A run id is minted for every run a deck opens, and a system call for each was a noticeable part
of a short run's cost. So the randomness is drawn a few hundred ids at a time, with the version
and variant bits set for the whole draw at once.

This is process-wide state on purpose (see ``docs/process-state.md``): the pool is shared by
every deck and thread of the process, because a pool per deck would draw (and waste) a whole
batch for each short-lived deck, and nothing about an id depends on which deck asked for it. A
lock serialises the draws; a forked child drops the parent's pool (``os.register_at_fork``), so
no two processes ever hand out the same ids.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

__all__ = ["new_run_id"]

_IDS_PER_DRAW = 256


def new_run_id() -> str:
    """A fresh run id: 32 hex digits of a random, version-4 UUID."""
    with _IDS.lock:
        at = _IDS.at
        if at >= len(_IDS.pool):
            _IDS.pool, at = _random_ids(), 0
        _IDS.at = at + 16
        return _IDS.pool[at : at + 16].hex()


def _random_ids() -> bytes:
    """``_IDS_PER_DRAW`` random 16-byte ids, each with the version-4 and RFC 4122 variant bits
    set as ``uuid.uuid4`` sets them."""
    raw = bytearray(os.urandom(16 * _IDS_PER_DRAW))
    raw[6::16] = bytes([(byte & 0x0F) | 0x40 for byte in raw[6::16]])
    raw[8::16] = bytes([(byte & 0x3F) | 0x80 for byte in raw[8::16]])
    return bytes(raw)


@dataclass(slots=True, eq=False)
class _IdPool:
    lock: threading.Lock = field(default_factory=threading.Lock)
    pool: bytes = b""
    at: int = 0

    def drop(self) -> None:
        self.lock = threading.Lock()  # a lock held in the parent at the fork stays held
        self.pool, self.at = b"", 0


_IDS = _IdPool()
os.register_at_fork(after_in_child=_IDS.drop)
