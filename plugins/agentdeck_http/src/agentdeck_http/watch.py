"""A namespace's run changes as one stream: what a live list of runs follows.

A run's own log says everything about that run, but nothing says "a run was started" or "some
run changed status" across runs, and a store's log is per run. The index does know: every
record carries its status and latest seq. So the watcher looks at the index -- the newest runs
and every run not yet finished -- and reports each record whose status or latest seq differs
from its previous look. Looking at the store rather than at this process's events means runs
started, answered or finished by another worker or process show up too. The looks are the
server's, every ``interval`` seconds; the client just holds one event stream open.

Why the server looks instead of following a feed: the event store port tails one run at a time
(``EventStore.follow(run_id)``) and has no feed across runs, and following this process's own
runtime would miss every run another worker or process moves. Each open stream therefore costs
two index listings per interval (newest and unfinished, both answered from the index); when the
store port gains a cross-run change feed (PostgreSQL's NOTIFY, Redis streams, SQLite's writer
could each serve one), this generator should follow it and keep the looks as its fallback.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from agentdeck.deck.serving import Exposure
from agentdeck.errors import NotFoundError
from agentdeck.ports import RunQuery, RunRecord
from agentdeck.vocabulary import TERMINAL, RunStatus

__all__ = ["NEWEST_WATCHED", "run_changes"]

NEWEST_WATCHED = 50
"""How many of the newest runs each look reads (new runs appear among them)."""

_UNFINISHED = frozenset(RunStatus) - TERMINAL
_UNFINISHED_WATCHED = 500


async def run_changes(
    exposure: Exposure, namespace: str | None, *, interval: float
) -> AsyncIterator[RunRecord]:
    """Records of ``namespace``'s runs as they change: first the current ones (newest and
    unfinished), then each one again whenever its status or latest seq moves."""
    service = exposure.service
    seen: dict[str, tuple[RunStatus, int]] = {}
    while not exposure.streams_closing:
        newest = await service.list_runs(
            RunQuery(namespace=namespace, newest_first=True, limit=NEWEST_WATCHED)
        )
        unfinished = await service.list_runs(
            RunQuery(namespace=namespace, status=_UNFINISHED, limit=_UNFINISHED_WATCHED)
        )
        records = {record.run_id: record for record in [*newest.runs, *unfinished.runs]}
        # A run that was unfinished and is no longer among them finished since: read it once.
        for run_id, (status, _) in seen.items():
            if run_id not in records and status not in TERMINAL:
                try:
                    records[run_id] = await service.find(run_id, namespace=namespace)
                except NotFoundError:  # pruned meanwhile
                    continue
        moved = [
            record
            for record in records.values()
            if seen.get(record.run_id) != (record.status, record.last_seq)
        ]
        seen = {record.run_id: (record.status, record.last_seq) for record in records.values()}
        for record in sorted(moved, key=lambda r: r.created_at):
            yield record
        try:
            await asyncio.wait_for(exposure.wait_streams_closing(), interval)
        except TimeoutError:
            continue
