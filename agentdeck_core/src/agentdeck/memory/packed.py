"""Finished runs' logs in a form the cyclic garbage collector never walks.

A stored event is a handful of objects the collector tracks (the envelope, its ``__dict__``, the
payload, its lists and nested models), and the memory store keeps every run it recorded until
it is pruned. Every full collection walks all of them again: with thousands of finished runs
stored that was the largest single cost of a short run (~380 ns per tracked object per walk, and
a full collection comes round each time the objects promoted to the oldest generation grow by a
quarter of those in it).

A finished run's log never changes again and is seldom read, so the store keeps it *packed*:
the times (``datetime`` objects, which the collector does not track) and each payload's JSON
(:func:`~agentdeck.storage.codec.payload_to_json`), in plain tuples. The collector stops tracking a
plain tuple of untracked objects once it has looked at it, so a packed log costs it nothing from
then on. The envelope's other fields are the run's own (its id, session, namespace, parent and
origin) or its position (``seq``), which the store holds anyway. Reading a packed log back
builds the events again (:func:`~agentdeck.storage.codec.stored_payload`): equal to what was
appended, as a durable store's events are.

Runs are packed in batches (:class:`Packer`), not one by one as they end: packing a run alone
runs the packing code with every cache cold from the rest of the run's work, which costs
several times what the same work costs a batch at a time. A batch still comes round long before
the collector would move the runs' objects to its oldest generation, which is where they cost.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import datetime

from agentdeck.model.events import Event
from agentdeck.model.payloads import Payload
from agentdeck.storage.codec import collector_paused, payload_to_json, stored_payload

__all__ = ["PACK_BATCH", "Packed", "Packer", "pack", "unpack"]

Packed = tuple[tuple[datetime, ...], tuple[bytes, ...]]
"""A run's events by position (``seq``): their times, and their payloads' JSON."""

PACK_BATCH = 32
"""Finished runs packed together. A run's objects are freed within this many run endings; a
collection of the youngest generation comes round every ~700 objects left alive, so most of
them never even reach the middle generation."""


def pack(events: Sequence[Event]) -> Packed:
    """``events`` (a whole run, from seq 0) packed."""
    times = tuple([event.ts for event in events])
    payloads = tuple([payload_to_json(event.payload) for event in events])
    return (times, payloads)  # built after its items, so one look untracks all three


def unpack(packed: Packed, start: int, stop: int | None) -> list[tuple[int, datetime, Payload]]:
    """``(seq, ts, payload)`` of the packed events in ``[start, stop)``, in order."""
    times, payloads = packed[0][start:stop], packed[1][start:stop]
    with collector_paused(len(payloads)):  # a long run builds many objects at once
        return [
            (seq, ts, stored_payload(payload))
            for seq, ts, payload in zip(
                range(start, start + len(times)), times, payloads, strict=True
            )
        ]


class Packer:
    """Collects finished runs and packs them a batch at a time.

    ``add`` is called as each run ends (from any thread sharing the store); whichever call
    completes a batch packs it, outside the store's lock. ``pack`` is each run's own method, so
    the store decides what packing a run means.
    """

    def __init__(self, batch: int = PACK_BATCH) -> None:
        self._batch = batch
        self._lock = threading.Lock()
        self._waiting: list[Callable[[], None]] = []

    def add(self, pack_run: Callable[[], None]) -> None:
        with self._lock:
            self._waiting.append(pack_run)
            if len(self._waiting) < self._batch:
                return
            due, self._waiting = self._waiting, []
        for pack_run in due:
            pack_run()
