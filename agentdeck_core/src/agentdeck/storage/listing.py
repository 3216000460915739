"""Listing and pruning helpers: a query's checks and filters, written once for every store.

A store that answers :meth:`~agentdeck.ports.EventStore.list_runs` from its own index (SQL
builds a ``WHERE``, Redis a script's filters) still checks the page size with
:func:`checked_limit`. A store that filters in Python -- the memory store, a small third-party
store -- builds one :func:`run_filter` per query and applies it to each candidate run, and takes
the page with :func:`take_page`; :func:`run_page` turns what a listing read (one run past the
page, if there is one) into the :class:`~agentdeck.ports.RunPage` with its cursor.
:func:`prunable` is the set of statuses a prune may delete.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TypeVar

from agentdeck.errors import InvalidInputError
from agentdeck.model.clock import utc
from agentdeck.ports import PruneQuery, RunPage, RunQuery, RunRecord
from agentdeck.storage.cursors import encode_cursor
from agentdeck.storage.records import RunFacts
from agentdeck.vocabulary import TERMINAL, RunStatus

__all__ = ["checked_limit", "prunable", "run_filter", "run_page", "take_page"]

_T = TypeVar("_T")


def checked_limit(query: RunQuery) -> int:
    """The page size of ``query``; :class:`InvalidInputError` (``field="limit"``) below 1."""
    if query.limit < 1:
        raise InvalidInputError(
            f"list_runs limit must be at least 1, not {query.limit}", field="limit"
        )
    return query.limit


def _moment(value: datetime | None) -> datetime | None:
    return utc(value) if value is not None else None


def run_filter(query: RunQuery) -> Callable[[RunFacts], bool]:
    """Every filter of ``query`` as one predicate over a run (its times read once, in UTC)."""
    namespace = None if query.all_namespaces else (query.namespace,)
    statuses = query.statuses()
    session_id, key, name, parent = query.session_id, query.key, query.name, query.parent_run_id
    created_after, created_before = _moment(query.created_after), _moment(query.created_before)
    updated_before, wake_before = _moment(query.updated_before), _moment(query.wake_before)

    def matches(run: RunFacts) -> bool:
        if namespace is not None and run.namespace != namespace[0]:
            return False
        if statuses is not None and run.status not in statuses:
            return False
        if session_id is not None and run.session_id != session_id:
            return False
        if key is not None and run.key != key:
            return False
        if name is not None and run.name != name:
            return False
        if parent is not None and run.parent_run_id != parent:
            return False
        if created_after is not None and not run.created_at > created_after:
            return False
        if created_before is not None and not run.created_at < created_before:
            return False
        if updated_before is not None and not run.updated_at < updated_before:
            return False
        if wake_before is None:
            return True
        wake_at = run.wake_at
        return wake_at is not None and wake_at < wake_before

    return matches


def take_page(runs: Iterable[_T], limit: int) -> tuple[list[_T], bool]:
    """The first ``limit`` of ``runs`` (already filtered, in open order), and whether more
    follow -- which it knows by reading one run past the page, never further."""
    page: list[_T] = []
    for run in runs:
        if len(page) == limit:
            return page, True
        page.append(run)
    return page, False


def run_page(
    runs: Iterable[_T],
    limit: int,
    *,
    scheme: str,
    ordinal: Callable[[_T], int],
    record: Callable[[_T], RunRecord],
) -> RunPage:
    """The page of the first ``limit`` of ``runs`` (filtered, in open order), whose cursor --
    when another run follows -- points past the last one (:func:`~agentdeck.storage.cursors.
    encode_cursor` of ``scheme`` and its ``ordinal``)."""
    page, more = take_page(runs, limit)
    cursor = encode_cursor(scheme, ordinal(page[-1])) if more else None
    return RunPage(runs=[record(run) for run in page], next_cursor=cursor)


def prunable(query: PruneQuery) -> frozenset[RunStatus]:
    """The statuses ``query`` prunes: only terminal runs are ever deleted."""
    return frozenset(query.statuses) & TERMINAL
