"""``JournalEventStore``: an AgentDeck event store kept in one append-only journal file.

The design is a write-ahead log with its state in memory. Every change is decided against the
in-memory state under one lock, written to the journal (and fsynced) while the lock is held, and
only then applied to memory and announced to followers. So:

* a change is all-or-nothing: a refused batch, or one the disk rejected, changes nothing;
* an acknowledged change survives a crash: opening the store replays the journal;
* the status of every run is :func:`agentdeck.model.status.apply` folded over its own events, the
  same fold every store and the runtime use, kept per run so lookups never read a log.

It is **durable** but not **shared**: one process owns a journal at a time (see
:mod:`agentdeck_journal.journal`). Pruned runs leave the journal's records behind until a
compaction rewrites it, which this example does not implement.

URLs: ``journal://<path>`` -- ``journal://state/runs.jsonl`` is relative to the working
directory, ``journal:///var/lib/app/runs.jsonl`` absolute.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from agentdeck.errors import ConfigError
from agentdeck.model.clock import Clock, SystemClock, utc
from agentdeck.model.events import Event
from agentdeck.model.payloads import Payload, RunStarted
from agentdeck.model.status import RunState, apply
from agentdeck.ports import (
    BackendRequest,
    EventStore,
    NewRun,
    OpenOutcome,
    PruneQuery,
    RunPage,
    RunQuery,
    RunRecord,
    Takeover,
)
from agentdeck.storage import (
    append_time,
    check_batch,
    checked_limit,
    checked_payloads,
    checked_started,
    compose_batch,
    decode_cursor,
    may_step_over,
    no_such_run,
    prunable,
    run_filter,
    run_id_taken,
    run_page,
    started_event,
)
from agentdeck.vocabulary import TERMINAL, TERMINAL_KINDS, RunStatus

from agentdeck_journal.journal import JournalFile

__all__ = ["SCHEME", "JournalEventStore", "journal_path"]

SCHEME = "journal"


def journal_path(url: str) -> Path:
    """The file a ``journal://`` URL names; a :class:`ConfigError` for anything else."""
    scheme, separator, rest = url.partition("://")
    if scheme.lower() != SCHEME or not separator or not rest.strip("/"):
        raise ConfigError(
            f"{url!r} is not a journal URL; write journal://relative/path.jsonl or "
            "journal:///absolute/path.jsonl",
            accepted=["journal://<path>"],
        )
    return Path(rest.partition("?")[0])


@dataclass(slots=True, eq=False)
class _Run:
    """One run in memory: its identity, its log, and the status folded from the log."""

    ordinal: int
    """Position in open order: listings are oldest first, and cursors point at it."""
    started: Event
    events: list[Event]
    state: RunState = field(default_factory=RunState)

    @property
    def run_id(self) -> str:
        return self.started.run_id

    @property
    def payload(self) -> RunStarted:
        assert isinstance(self.started.payload, RunStarted)
        return self.started.payload

    def record(self) -> RunRecord:
        state = self.state
        assert state.status is not None and state.last_ts is not None
        return RunRecord(
            run_id=self.run_id,
            name=self.payload.name,
            invocable_kind=self.payload.invocable_kind,
            status=state.status,
            created_at=self.started.ts,
            updated_at=state.last_ts,
            last_seq=state.last_seq,
            namespace=self.started.namespace,
            session_id=self.started.session_id,
            key=self.payload.key,
            parent_run_id=self.started.parent_run_id,
            wake_at=state.wake_at,
        )


class JournalEventStore(EventStore):
    """An :class:`~agentdeck.ports.EventStore` in one journal file, owned by one process."""

    durable: ClassVar[bool] = True
    shared: ClassVar[bool] = False

    def __init__(self, path: str | Path, *, clock: Clock | None = None, url: str = "") -> None:
        self.path = Path(path)
        self.url = url or f"{SCHEME}://{path}"
        self._clock = clock if clock is not None else SystemClock()
        self._journal = JournalFile(self.path, self.url)
        self._lock = asyncio.Lock()
        self._runs: dict[str, _Run] = {}
        self._keys: dict[tuple[str | None, str], str] = {}
        self._sessions: dict[tuple[str | None, str], str] = {}
        """The run that last claimed each ``(namespace, session)``; it holds it until terminal."""
        self._state: dict[tuple[str, str], bytes] = {}
        self._next_ordinal = 0
        self._waiters: dict[str, set[asyncio.Future[None]]] = {}
        self._closed = False

    @classmethod
    def from_request(cls, request: BackendRequest) -> JournalEventStore:
        """The factory the plugin registers for ``journal://``."""
        return cls(journal_path(request.url), clock=request.clock, url=request.url)

    # -- lifecycle ----------------------------------------------------------------------------

    async def open(self) -> None:
        await asyncio.to_thread(self._journal.open)
        records = await asyncio.to_thread(lambda: list(self._journal.replay()))
        for record in records:
            self._apply(record)

    async def close(self) -> None:
        self._closed = True
        self._wake(*self._waiters)
        async with self._lock:  # a write in flight finishes before the file goes
            await asyncio.to_thread(self._journal.close)

    # -- writing: decide, journal, apply --------------------------------------------------------

    async def _commit(self, record: dict[str, Any]) -> None:
        """Journal ``record`` (the caller holds the lock), then apply it and wake followers."""
        await asyncio.to_thread(self._journal.write, record)
        self._apply(record)

    def _apply(self, record: dict[str, Any]) -> None:
        """Apply one journal record to memory: used by writes and by replay alike."""
        op = record["op"]
        if op == "events":
            events = [Event.from_json(text) for text in record["events"]]
            if events[0].seq == 0:
                self._add_run(events[0])
                events = events[1:]
            run = self._runs[record["run"]]
            for event in events:
                run.events.append(event)
                run.state = apply(run.state, event)
            self._wake(run.run_id)
        elif op == "put_state":
            self._state[(record["run"], record["name"])] = base64.b64decode(record["value"])
        elif op == "delete_state":
            self._state.pop((record["run"], record["name"]), None)
        elif op == "prune":
            for run_id in record["runs"]:
                self._forget(run_id)

    def _add_run(self, started: Event) -> None:
        run = _Run(ordinal=self._next_ordinal, started=started, events=[started])
        run.state = apply(run.state, started)
        self._next_ordinal += 1
        self._runs[run.run_id] = run
        namespace = started.namespace
        if started.session_id is not None:
            self._sessions[(namespace, started.session_id)] = run.run_id
        if run.payload.key is not None:
            self._keys[(namespace, run.payload.key)] = run.run_id

    def _forget(self, run_id: str) -> None:
        run = self._runs.pop(run_id)
        namespace, session_id, key = run.started.namespace, run.started.session_id, run.payload.key
        if session_id is not None and self._sessions.get((namespace, session_id)) == run_id:
            del self._sessions[(namespace, session_id)]
        if key is not None and self._keys.get((namespace, key)) == run_id:
            del self._keys[(namespace, key)]
        for slot in [slot for slot in self._state if slot[0] == run_id]:
            del self._state[slot]

    # -- opening runs -------------------------------------------------------------------------

    async def open_run(self, new: NewRun, *, takeover: Takeover | None = None) -> OpenOutcome:
        checked_started(new)
        async with self._lock:
            if new.run_id in self._runs:
                raise run_id_taken(new.run_id, self._runs[new.run_id].state.status)
            stepped_over = self._holder(new.namespace, new.session_id)
            if stepped_over is not None:
                state = stepped_over.state
                if not may_step_over(stepped_over.run_id, state.status, state.last_ts, takeover):
                    return OpenOutcome(busy=stepped_over.record())
            claimed = self._keys.get((new.namespace, new.key)) if new.key is not None else None
            if claimed is not None:
                return OpenOutcome(key_holder=self._runs[claimed].record())
            started = started_event(new, self._clock.now())
            await self._commit({"op": "events", "run": new.run_id, "events": [started.to_json()]})
        return OpenOutcome(
            event=started, stepped_over=stepped_over.record() if stepped_over else None
        )

    def _holder(self, namespace: str | None, session_id: str | None) -> _Run | None:
        """The live run holding a session, if any (a finished holder has let it go)."""
        if session_id is None:
            return None
        run_id = self._sessions.get((namespace, session_id))
        run = self._runs.get(run_id) if run_id is not None else None
        return run if run is not None and run.state.status not in TERMINAL else None

    # -- appending ----------------------------------------------------------------------------

    async def append(
        self,
        run_id: str,
        payloads: Sequence[Payload],
        *,
        expect: Collection[RunStatus] | None = None,
        expect_seq: int | None = None,
    ) -> list[Event]:
        checked = checked_payloads(payloads)
        async with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                raise no_such_run(run_id)
            state = run.state
            check_batch(
                run_id, state.status, state.last_seq, checked, expect=expect, expect_seq=expect_seq
            )
            if not checked:
                return []
            events, _ = compose_batch(
                state,
                checked,
                run_id=run_id,
                ts=append_time(self._clock.now(), state.last_ts),
                session_id=run.started.session_id,
                namespace=run.started.namespace,
                parent_run_id=run.started.parent_run_id,
                origin=run.started.origin,
            )
            await self._commit(
                {"op": "events", "run": run_id, "events": [e.to_json() for e in events]}
            )
            return events

    # -- reading ------------------------------------------------------------------------------

    async def read(
        self, run_id: str, *, from_seq: int = 0, limit: int | None = None
    ) -> list[Event]:
        run = self._runs.get(run_id)
        if run is None:
            return []
        end = None if limit is None else from_seq + limit
        return run.events[from_seq:end]  # seq is the list index: gapless from 0

    def follow(self, run_id: str, *, from_seq: int = 0) -> AsyncIterator[Event]:
        return self._follow(run_id, from_seq)

    async def _follow(self, run_id: str, from_seq: int) -> AsyncIterator[Event]:
        next_seq = from_seq
        while not self._closed:
            run = self._runs.get(run_id)
            if run is not None:
                for event in run.events[next_seq:]:
                    yield event
                    if event.kind in TERMINAL_KINDS:
                        return
                    next_seq = event.seq + 1
                if run.state.status in TERMINAL and next_seq > run.state.last_seq:
                    return  # followed from past the end of a finished run
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.setdefault(run_id, set()).add(waiter)
            try:
                await waiter  # resolved by the next write to this run, or by close()
            finally:
                self._waiters.get(run_id, set()).discard(waiter)

    def _wake(self, *run_ids: str) -> None:
        for run_id in run_ids:
            for waiter in self._waiters.pop(run_id, set()):
                if not waiter.done():
                    waiter.set_result(None)

    async def get_run(self, run_id: str) -> RunRecord | None:
        run = self._runs.get(run_id)
        return run.record() if run is not None else None

    async def find_key(self, namespace: str | None, key: str) -> RunRecord | None:
        run_id = self._keys.get((namespace, key))
        return self._runs[run_id].record() if run_id is not None else None

    async def list_runs(self, query: RunQuery) -> RunPage:
        limit = checked_limit(query)
        after = decode_cursor(SCHEME, query.cursor) if query.cursor is not None else -1
        matches = run_filter(query)
        # Insertion order is open order.
        if query.newest_first:
            newest = reversed(self._runs.values())
            runs = (run for run in newest if after < 0 or run.ordinal < after)
        else:
            runs = (run for run in self._runs.values() if run.ordinal > after)
        found = (run for run in runs if matches(run.record()))
        return run_page(found, limit, scheme=SCHEME, ordinal=_ordinal, record=_Run.record)

    # -- pruning and engine state ---------------------------------------------------------------

    async def prune(self, query: PruneQuery) -> int:
        statuses = prunable(query)
        before = utc(query.finished_before) if query.finished_before is not None else None
        most = None if query.limit is None else max(0, query.limit)
        async with self._lock:
            doomed = [
                run.run_id
                for run in self._runs.values()
                if run.state.status in statuses
                and (query.all_namespaces or run.started.namespace == query.namespace)
                and (before is None or run.record().updated_at < before)
            ][:most]
            if doomed:
                await self._commit({"op": "prune", "runs": doomed})
        return len(doomed)

    async def put_state(self, run_id: str, name: str, value: bytes) -> None:
        encoded = base64.b64encode(bytes(value)).decode("ascii")
        async with self._lock:
            await self._commit({"op": "put_state", "run": run_id, "name": name, "value": encoded})

    async def get_state(self, run_id: str, name: str) -> bytes | None:
        return self._state.get((run_id, name))

    async def delete_state(self, run_id: str, name: str) -> None:
        async with self._lock:
            if (run_id, name) in self._state:
                await self._commit({"op": "delete_state", "run": run_id, "name": name})


def _ordinal(run: _Run) -> int:
    return run.ordinal
