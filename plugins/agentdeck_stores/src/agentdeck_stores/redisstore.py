"""The Redis backend for ``redis://`` / ``rediss://``: the event store, and (re-exported from
:mod:`agentdeck_stores._redis_control`) the control and lease ports the plugin finds here.

One run is a stream of events (entry id ``<seq>-1``) and a hash holding its record: identity and
the status folded by :func:`agentdeck.model.status.apply`. Sorted sets scored by open order index
the records by namespace, status, session, name, parent and key, so a listing reads index entries
and records, never logs; a sorted set scored by wake time finds due timers. The key layout is
described in :mod:`agentdeck_stores._redis_lua`.

Writes are decided atomically by Lua scripts. The fold is Python's, so an append is optimistic:
Python folds the batch onto the run's state as it last saw it and the script records it only if
the run's ``last_seq`` is still the one that state ended at; otherwise the script answers with
the current record and Python folds again (a bounded number of times). Within one process,
appends to one run queue behind a per-run lock, so they do not race each other; across
processes the script decides. Opening a run (session claim, key claim, takeover) is one script.
Script calls made while a round trip is in flight share the next one (group commit, see
:class:`~agentdeck_stores._redis_base.ScriptBatcher`), so many runs appending at once cost a
share of a round trip each.

Followers block in ``XREAD`` on the run's stream, each on a connection of its own, so they are
woken by the append itself in whichever process made it.

Timestamps, staleness and lease expiry come from the clock the backend was built with
(``BackendRequest.clock``), never from the server's ``TIME``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator, Collection, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from agentdeck.errors import StoreError
from agentdeck.model.clock import Clock, utc
from agentdeck.model.events import Event
from agentdeck.model.payloads import Payload
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
    batch_refusal,
    checked_limit,
    checked_payloads,
    checked_started,
    compose_batch,
    decode_cursor,
    no_such_run,
    prunable,
    run_id_taken,
    run_page,
    started_event,
)
from agentdeck.storage.codec import stored_events
from agentdeck.vocabulary import TERMINAL, TERMINAL_KINDS, RunStatus
from agentdeck_stores import _redis_lua as lua
from agentdeck_stores._redis_base import (
    BACKEND,
    RedisBackend,
    RedisTarget,
    ScriptBatcher,
    as_text,
    from_micros,
    micros,
    token,
    translate_errors,
)
from agentdeck_stores._redis_control import RedisControlPort, RedisLeasePort
from agentdeck_stores.settings import connect_timeout

__all__ = ["RedisControlPort", "RedisEventStore", "RedisLeasePort"]

_ATTEMPTS = 64
"""How often an append re-folds after another process moved the run before giving up."""
_CACHE_SIZE = 4096
"""Runs whose folded state an event store remembers between appends (least recently used go)."""
_FOLLOW_PAGE = 500
"""Events one blocking read hands a follower at most (a long log is caught up in pages)."""
_LIST_BUDGET = 2000
"""Runs one listing script call examines before handing control back (keeps Redis responsive)."""
_PRUNE_BATCH = 200
"""Runs one pruning script call deletes at most (each deletion is atomic on its own)."""
_log = logging.getLogger("agentdeck.stores.redis")


# =========================================================================== helpers


def _setting(config: Any, name: str) -> str | None:
    """One value from a ``CONFIG GET`` reply (keys are bytes or str by protocol)."""
    return as_text(config.get(name) or config.get(name.encode()))


_NEWEST = 2**52
"""Where a newest-first listing starts: above every ordinal a store will hand out."""


def _entry_id(seq: int) -> str:
    return f"{seq}-1"


def _after(position: int) -> str:
    """The stream id just before ``seq == position`` (exclusive start for ``XREAD``)."""
    return _entry_id(position - 1) if position > 0 else "0-0"


def _stream_entries(reply: Any) -> list[Any]:
    """The entries of the one stream an ``XREAD`` asked for (RESP2 list or RESP3 map)."""
    if not reply:
        return []
    if isinstance(reply, dict):
        (entries,) = reply.values()
        return list(entries[0]) if entries and isinstance(entries[0], list) else list(entries)
    return list(reply[0][1])


def _events(entries: Sequence[Any]) -> list[Event]:
    return stored_events([fields[b"e"] for _, fields in entries])


def _as_sent(response: Any, **_: Any) -> Any:
    return response


def _logged_events(entries: Sequence[Any]) -> list[Event]:
    """The events of ``XRANGE`` entries as the server sent them: ``[id, [field, value, ...]]``.

    The event is the ``e`` field, which the append script always writes first.
    """
    rows = [
        fields[1] if fields[0] == b"e" else dict(zip(fields[::2], fields[1::2], strict=True))[b"e"]
        for _, fields in entries
    ]
    return stored_events(rows)


# =========================================================================== records


@dataclass(slots=True)
class _Run:
    """What an append needs to know of a run: its identity and its folded state."""

    run_id: str
    name: str
    namespace: str | None
    session_id: str | None
    parent_run_id: str | None
    state: RunState


def _record(reply: Sequence[Any]) -> RunRecord:
    """A :class:`RunRecord` from a script's ``run id, *RECORD_FIELDS`` reply."""
    run_id, name, kind, ns, sid, key, parent, created, updated, last_seq, status, wake, _ = reply
    return RunRecord(
        run_id=as_text(run_id) or "",
        name=as_text(name) or "",
        invocable_kind=as_text(kind) or "",
        status=RunStatus(as_text(status) or ""),
        created_at=from_micros(created),
        updated_at=from_micros(updated),
        last_seq=int(last_seq),
        namespace=as_text(ns),
        session_id=as_text(sid),
        key=as_text(key),
        parent_run_id=as_text(parent),
        wake_at=from_micros(wake) if wake is not None else None,
    )


_WIDTH = 1 + len(lua.RECORD_FIELDS)


def _listed_ordinal(reply: Sequence[Any]) -> int:
    """The ordinal a listing script appends to each record it returns."""
    return int(reply[-1])


def _run(record: RunRecord) -> _Run:
    return _Run(
        run_id=record.run_id,
        name=record.name,
        namespace=record.namespace,
        session_id=record.session_id,
        parent_run_id=record.parent_run_id,
        state=RunState(
            status=record.status,
            last_seq=record.last_seq,
            last_ts=record.updated_at,
            wake_at=record.wake_at,
        ),
    )


# =========================================================================== the event store


class RedisEventStore(RedisBackend, EventStore):
    """An :class:`~agentdeck.ports.EventStore` on a Redis server, shared by every process that
    uses the same server, database and key prefix.

    ``durable`` is true in the sense the port defines it: appended events live in the server,
    not in this process, so they survive the process (and a restart of it). Whether they also
    survive a restart of the *server* is the server's persistence setting (``appendonly yes``,
    ``appendfsync always`` for every write); :meth:`open` logs a warning when the server says it
    keeps nothing on disk.
    """

    durable: ClassVar[bool] = True
    shared: ClassVar[bool] = True
    role: ClassVar[str] = "store"

    def __init__(
        self, target: RedisTarget, *, clock: Clock | None = None, read_only: bool = False
    ) -> None:
        super().__init__(target, clock=clock, read_only=read_only)
        client = self.client
        self._open_script = client.register_script(lua.OPEN_RUN)
        self._append_script = client.register_script(lua.APPEND)
        self._append_many_script = client.register_script(lua.APPEND_MANY)
        self._find_key_script = client.register_script(lua.FIND_KEY)
        self._list_script = client.register_script(lua.LIST_RUNS)
        self._prune_script = client.register_script(lua.PRUNE)
        self._batcher = ScriptBatcher(
            lambda: self.client, combined={self._append_script: self._append_many_script}
        )
        self._cache: OrderedDict[str, _Run] = OrderedDict()
        self._locks: dict[str, tuple[asyncio.Lock, list[int]]] = {}
        self._followers: set[aioredis.Redis] = set()
        self._raw_reader: aioredis.Redis | None = None

    @classmethod
    def from_request(cls, request: BackendRequest) -> RedisEventStore:
        """The factory the ``redis``/``rediss`` schemes register."""
        return cls(
            RedisTarget.parse(request.url, timeout=connect_timeout(request.settings)),
            clock=request.clock,
            read_only=request.read_only,
        )

    # -- keys ---------------------------------------------------------------------------------

    def _run_key(self, run_id: str) -> str:
        return f"{self.prefix}run:{run_id}"

    def _log_key(self, run_id: str) -> str:
        return f"{self.prefix}log:{run_id}"

    def _status_key(self, ns: str, status: RunStatus | str) -> str:
        return f"{self.prefix}ix:st:{ns}:{status}"

    def _wake_key(self, ns: str) -> str:
        return f"{self.prefix}ix:wake:{ns}"

    # -- lifecycle ----------------------------------------------------------------------------

    async def open(self) -> None:
        await super().open()
        with contextlib.suppress(RedisError, OSError):  # CONFIG may be disabled: then say nothing
            appendonly = _setting(await self.client.config_get("appendonly"), "appendonly")
            if appendonly == "no" and not _setting(await self.client.config_get("save"), "save"):
                _warn_nothing_on_disk(self.target)

    async def close(self) -> None:
        """Release connections and end every follower. Idempotent."""
        followers, self._followers = self._followers, set()
        await super().close()
        for follower in followers:
            with contextlib.suppress(RedisError, OSError):
                await follower.aclose(close_connection_pool=True)

    # -- opening runs -------------------------------------------------------------------------

    async def open_run(self, new: NewRun, *, takeover: Takeover | None = None) -> OpenOutcome:
        self.check_writable("opening a run")
        started = checked_started(new)
        run_id, namespace, session_id, key = new.run_id, new.namespace, new.session_id, new.key
        ns, prefix = token(namespace), self.prefix
        ts = utc(self._clock.now())
        event = started_event(new, ts)
        name = token(started.name)
        indexes = [
            f"{prefix}ix:all",
            f"{prefix}ix:ns:{ns}",
            f"{prefix}ix:name:{ns}:{name}",
            f"{prefix}ix:name:*:{name}",
        ]
        session_key = f"{prefix}ses:{ns}:{token(session_id)}"
        key_key = f"{prefix}key:{ns}:{token(key)}"
        if new.parent_run_id is not None:
            indexes.append(f"{prefix}ix:parent:{token(new.parent_run_id)}")
        if session_id is not None:
            indexes.append(f"{prefix}ix:ses:{ns}:{token(session_id)}")
            indexes.append(f"{prefix}ix:ses:*:{token(session_id)}")
        if key is not None:
            indexes.append(f"{prefix}ix:key:{token(key)}")
        fields: list[str | int] = [
            "name",
            started.name,
            "kind",
            started.invocable_kind,
            "created",
            micros(ts),
            "updated",
            micros(ts),
            "last_seq",
            0,
            "status",
            RunStatus.RUNNING.value,
            "nst",
            ns,
            "ixs",
            "\n".join(indexes),
        ]
        for field, value in (
            ("ns", namespace),
            ("sid", session_id),
            ("key", key),
            ("parent", new.parent_run_id),
        ):
            if value is not None:
                fields += [field, value]
        if session_id is not None:
            fields += ["sesk", session_key]
        if key is not None:
            fields += ["keyk", key_key]
        dead = sorted(takeover.dead_run_ids) if takeover is not None else []
        stale = (
            micros(utc(takeover.stale_before))
            if takeover is not None and takeover.stale_before is not None
            else ""
        )
        keys = [
            self._run_key(run_id),
            self._log_key(run_id),
            f"{prefix}ord",
            session_key,
            key_key,
            self._status_key(ns, RunStatus.RUNNING),
            self._status_key("*", RunStatus.RUNNING),
            *indexes,
        ]
        args = [
            prefix,
            run_id,
            event.to_json(),
            secrets.token_hex(8),
            int(session_id is not None),
            int(key is not None),
            stale,
            len(dead),
            *dead,
            *fields,
        ]
        with translate_errors(self.target, "open a run"):
            reply = await self._batcher.call(self._open_script, keys, args)
        outcome = as_text(reply[0])
        rest = reply[1:]
        if outcome in ("ok", "again"):
            self._remember(
                _Run(
                    run_id,
                    started.name,
                    namespace,
                    session_id,
                    new.parent_run_id,
                    apply(RunState(), event),
                )
            )
            return OpenOutcome(event=event, stepped_over=_record(rest) if rest else None)
        if outcome == "busy":
            return OpenOutcome(busy=_record(rest))
        if outcome == "key":
            return OpenOutcome(key_holder=_record(rest))
        raise run_id_taken(run_id, None)

    # -- appending ----------------------------------------------------------------------------

    def _remember(self, run: _Run) -> None:
        cache = self._cache
        if run.state.status in TERMINAL:
            cache.pop(run.run_id, None)  # nothing more is appended to it
            return
        cache[run.run_id] = run
        cache.move_to_end(run.run_id)
        if len(cache) > _CACHE_SIZE:
            cache.popitem(last=False)

    async def _load(self, run_id: str) -> _Run:
        record = await self.get_run(run_id)
        if record is None:
            self._cache.pop(run_id, None)
            raise no_such_run(run_id)
        return _run(record)

    async def append(
        self,
        run_id: str,
        payloads: Sequence[Payload],
        *,
        expect: Collection[RunStatus] | None = None,
        expect_seq: int | None = None,
    ) -> list[Event]:
        self.check_writable("appending")
        checked = checked_payloads(payloads)
        locks = self._locks
        held = locks.get(run_id)
        if held is None:
            held = locks[run_id] = (asyncio.Lock(), [0])
        lock, users = held
        users[0] += 1
        try:
            async with lock:
                return await self._append(run_id, checked, expect, expect_seq)
        finally:
            users[0] -= 1
            if not users[0]:
                del locks[run_id]

    async def _append(
        self,
        run_id: str,
        payloads: list[Any],
        expect: Collection[RunStatus] | None,
        expect_seq: int | None,
    ) -> list[Event]:
        run = self._cache.get(run_id)
        fresh = False
        for _ in range(_ATTEMPTS):
            if run is None:
                run = await self._load(run_id)
                fresh = True
            state = run.state
            refusal = batch_refusal(
                run_id, state.status, state.last_seq, payloads, expect=expect, expect_seq=expect_seq
            )
            if refusal is not None or not payloads:
                if not fresh:  # decided on a remembered state: confirm it with the server
                    run = None
                    continue
                if refusal is not None:
                    raise refusal
                return []
            events, state = self._compose(run, payloads)
            reply = await self._record_batch(run, state, events)
            outcome = as_text(reply[0])
            if outcome in ("ok", "again"):
                run.state = state
                self._remember(run)
                return events
            if outcome == "missing":  # pruned by another process since we looked
                self._cache.pop(run_id, None)
                raise no_such_run(run_id)
            run = _run(_record(reply[1:]))  # another writer moved it: fold onto what it wrote
            fresh = True
        raise StoreError(
            f"run '{run_id}' kept moving under {_ATTEMPTS} attempts to append; too many writers "
            "are appending to it at once from other processes",
            backend=BACKEND,
            url=self.url,
            retryable=True,
        )

    def _compose(self, run: _Run, payloads: list[Any]) -> tuple[list[Event], RunState]:
        state = run.state
        return compose_batch(
            state,
            payloads,
            run_id=run.run_id,
            ts=append_time(self._clock.now(), state.last_ts),
            session_id=run.session_id,
            namespace=run.namespace,
            parent_run_id=run.parent_run_id,
            origin=run.name,
        )

    async def _record_batch(
        self, run: _Run, state: RunState, events: list[Event], *, batch_token: str | None = None
    ) -> Any:
        """Record ``events`` if the run's last seq is still ``run.state``'s (one script call).

        ``batch_token`` marks the batch, so that the same call replayed after its reply was lost is
        answered ``again`` rather than recorded twice or refused as ``moved``.
        """
        before = run.state
        assert state.status is not None and state.last_ts is not None
        wake = micros(state.wake_at) if state.wake_at is not None else "-"
        keys = [self._run_key(run.run_id), self._log_key(run.run_id)]
        header = (
            f"{before.last_seq} {batch_token or secrets.token_hex(8)} {state.status.value} "
            f"{micros(state.last_ts)} {wake} {int(state.wake_at != before.wake_at)}"
        )
        args = [run.run_id, header, *(event.to_json() for event in events)]
        with translate_errors(self.target, f"append to run '{run.run_id}'"):
            return await self._batcher.call(self._append_script, keys, args)

    # -- reading ------------------------------------------------------------------------------

    async def read(
        self, run_id: str, *, from_seq: int = 0, limit: int | None = None
    ) -> list[Event]:
        if limit is not None and limit <= 0:
            return []
        with translate_errors(self.target, f"read run '{run_id}'"):
            entries = await self._log_reader().xrange(
                self._log_key(run_id), _entry_id(max(0, from_seq)), "+", count=limit
            )
        return _logged_events(entries or [])

    def _log_reader(self) -> aioredis.Redis:
        """A client over the store's own pool whose ``XRANGE`` replies come back as sent.

        redis-py turns every entry of a reply into a tuple and a dict before the store reads one
        field of it; reading the entries as sent is most of the driver's cost of a long read.
        """
        client = self.client  # refuses once the store is closed
        reader = self._raw_reader
        if reader is None or reader.connection_pool is not client.connection_pool:
            reader = aioredis.Redis(connection_pool=client.connection_pool)
            reader.set_response_callback("XRANGE", _as_sent)
            self._raw_reader = reader
        return reader

    async def follow(self, run_id: str, *, from_seq: int = 0) -> AsyncIterator[Event]:
        position = max(0, from_seq)
        record = await self.get_run(run_id)
        if record is not None and record.is_terminal and position > record.last_seq:
            return  # finished, and from_seq is past its end
        log_key = self._log_key(run_id)
        waiter: aioredis.Redis | None = None
        failures = 0
        down_since = 0.0
        loop = asyncio.get_running_loop()
        try:
            while not self._closed:
                if waiter is None:
                    waiter = self._waiter()
                try:
                    reply = await waiter.xread(
                        {log_key: _after(position)}, count=_FOLLOW_PAGE, block=0
                    )
                except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
                    if self._closed:
                        return
                    failures += 1
                    if failures == 1:
                        down_since = loop.time()
                    await self._drop_waiter(waiter)
                    waiter = None
                    if failures > 1 and loop.time() - down_since >= self.target.timeout:
                        # As long as any other call waits for the server: the stores'
                        # connect_timeout_seconds, not a count of attempts.
                        raise StoreError(
                            f"lost the connection while following run '{run_id}' and could "
                            f"not get it back within {self.target.timeout:g} s "
                            f"({type(exc).__name__}: {exc})",
                            backend=BACKEND,
                            url=self.url,
                            retryable=True,
                        ) from exc
                    await asyncio.sleep(min(1.0, 0.02 * 2**failures))  # reconnect backoff
                    continue
                except RedisError as exc:
                    if self._closed:
                        return
                    raise StoreError(
                        f"cannot follow run '{run_id}': the server refused "
                        f"({type(exc).__name__}: {exc})",
                        backend=BACKEND,
                        url=self.url,
                    ) from exc
                failures = 0
                for event in _events(_stream_entries(reply)):
                    position = event.seq + 1
                    yield event
                    if event.kind in TERMINAL_KINDS:
                        return
        finally:
            if waiter is not None:
                await self._drop_waiter(waiter)

    def _waiter(self) -> aioredis.Redis:
        """A client with one connection of its own for a follower's blocking ``XREAD``.

        Its socket timeout is off (the read blocks until an append) and it never retries by
        itself: the follower reconnects, resuming from the last event it yielded, for as long
        as the stores' ``connect_timeout_seconds`` (which also bounds each connect).
        """
        if self._closed:
            raise StoreError("the store was closed", backend=BACKEND, url=self.url)
        pool = aioredis.ConnectionPool.from_url(
            self.target.client_url,
            client_name=self.client_name,
            max_connections=1,
            retry=Retry(NoBackoff(), 0),
            socket_connect_timeout=self.target.timeout,  # a URL's own value wins
        )
        # No read timeout, whatever the URL says: the read is meant to wait for the next append.
        pool.connection_kwargs = {**pool.connection_kwargs, "socket_timeout": None}
        waiter = aioredis.Redis(connection_pool=pool)
        self._followers.add(waiter)
        return waiter

    async def _drop_waiter(self, waiter: aioredis.Redis) -> None:
        self._followers.discard(waiter)
        with contextlib.suppress(RedisError, OSError):
            await waiter.aclose(close_connection_pool=True)

    async def get_run(self, run_id: str) -> RunRecord | None:
        with translate_errors(self.target, f"read run '{run_id}'"):
            fields = await self.client.hmget(self._run_key(run_id), list(lua.RECORD_FIELDS))
        if fields[8] is None:
            return None
        return _record([run_id, *fields])

    async def find_key(self, namespace: str | None, key: str) -> RunRecord | None:
        with translate_errors(self.target, f"look up key '{key}'"):
            reply = await self._find_key_script(
                keys=[f"{self.prefix}key:{token(namespace)}:{token(key)}"], args=[self.prefix]
            )
        return _record(reply) if reply else None

    # -- listing ------------------------------------------------------------------------------

    async def list_runs(self, query: RunQuery) -> RunPage:
        limit = checked_limit(query)
        if query.cursor is not None:
            after = decode_cursor(BACKEND, query.cursor)
        else:
            after = _NEWEST if query.newest_first else -1
        filters, groups = self._plan(query)
        keys = [key for _, group in groups for key in group]
        spec: list[str | int] = []
        for kind, group in groups:
            spec += [kind, len(group)]
        flat_filters = [part for pair in filters.items() for part in pair]
        found: list[Any] = []  # flat record replies, ordinal last
        wanted = limit + 1
        with translate_errors(self.target, "list runs"):
            while True:
                reply = await self._list_script(
                    keys=keys,
                    args=[
                        self.prefix,
                        after,
                        wanted - len(found),
                        _LIST_BUDGET,
                        "desc" if query.newest_first else "asc",
                        len(filters),
                        *flat_filters,
                        *spec,
                    ],
                )
                flat = reply[2:]
                found.extend(flat[i : i + _WIDTH] for i in range(0, len(flat), _WIDTH))
                if as_text(reply[0]) != "budget" or len(found) >= wanted:
                    break
                after = int(reply[1])
        return run_page(found, limit, scheme=BACKEND, ordinal=_listed_ordinal, record=_record)

    def _plan(self, query: RunQuery) -> tuple[dict[str, str], list[tuple[str, list[str]]]]:
        """The filters the script checks on each record, and the indexes that could answer."""
        prefix = self.prefix
        ns = "*" if query.all_namespaces else token(query.namespace)
        filters: dict[str, str] = {}
        groups: list[tuple[str, list[str]]] = []
        if not query.all_namespaces:
            filters["nst"] = ns
            groups.append(("o", [f"{prefix}ix:ns:{ns}"]))
        else:
            groups.append(("o", [f"{prefix}ix:all"]))
        statuses = query.statuses()
        if statuses is not None:
            ordered = sorted(status.value for status in statuses)
            filters["st"] = ",".join(ordered)
            groups.append(("o", [self._status_key(ns, status) for status in ordered]))
        if query.session_id is not None:
            filters["sid"] = query.session_id
            groups.append(("o", [f"{prefix}ix:ses:{ns}:{token(query.session_id)}"]))
        if query.key is not None:
            filters["key"] = query.key
            groups.append(("o", [f"{prefix}ix:key:{token(query.key)}"]))
        if query.name is not None:
            filters["name"] = query.name
            groups.append(("o", [f"{prefix}ix:name:{ns}:{token(query.name)}"]))
        if query.parent_run_id is not None:
            filters["parent"] = query.parent_run_id
            groups.append(("o", [f"{prefix}ix:parent:{token(query.parent_run_id)}"]))
        if query.wake_before is not None:
            filters["wb"] = str(micros(utc(query.wake_before)))
            groups.append(("w", [self._wake_key(ns)]))
        if query.created_after is not None:
            filters["ca"] = str(micros(utc(query.created_after)))
        if query.created_before is not None:
            filters["cb"] = str(micros(utc(query.created_before)))
        if query.updated_before is not None:
            filters["ub"] = str(micros(utc(query.updated_before)))
        return filters, groups

    # -- pruning ------------------------------------------------------------------------------

    async def prune(self, query: PruneQuery) -> int:
        self.check_writable("pruning")
        statuses = sorted(status.value for status in prunable(query))
        if not statuses or (query.limit is not None and query.limit <= 0):
            return 0
        ns = "*" if query.all_namespaces else token(query.namespace)
        keys = [self._status_key(ns, status) for status in statuses]
        before = (
            str(micros(utc(query.finished_before))) if query.finished_before is not None else ""
        )
        removed, after = 0, -1
        with translate_errors(self.target, "prune runs"):
            while query.limit is None or removed < query.limit:
                most = _PRUNE_BATCH
                if query.limit is not None:
                    most = min(most, query.limit - removed)
                deleted, resume = await self._prune_script(
                    keys=keys, args=[self.prefix, after, before, most, _PRUNE_BATCH * 5]
                )
                removed += int(deleted)
                if not as_text(resume):
                    if int(deleted) < most:
                        break
                    continue  # a full batch: there may be more from the same position
                after = int(resume)
        return removed

    # -- engine state -------------------------------------------------------------------------

    def _state_key(self, run_id: str) -> str:
        return f"{self.prefix}state:{run_id}"

    async def put_state(self, run_id: str, name: str, value: bytes) -> None:
        self.check_writable("writing engine state")
        with translate_errors(self.target, f"store engine state of run '{run_id}'"):
            await self.client.hset(self._state_key(run_id), name, bytes(value))

    async def get_state(self, run_id: str, name: str) -> bytes | None:
        with translate_errors(self.target, f"read engine state of run '{run_id}'"):
            value = await self.client.hget(self._state_key(run_id), name)
        return value if isinstance(value, bytes) else None  # bytes: responses are not decoded

    async def delete_state(self, run_id: str, name: str) -> None:
        self.check_writable("deleting engine state")
        with translate_errors(self.target, f"delete engine state of run '{run_id}'"):
            await self.client.hdel(self._state_key(run_id), name)


_warned: set[str] = set()


def _warn_nothing_on_disk(target: RedisTarget) -> None:
    if target.client_url in _warned:
        return
    _warned.add(target.client_url)
    _log.warning(
        "Redis at %s keeps nothing on disk (appendonly no, no save points): runs survive this "
        "process but not a restart of the server; enable appendonly for that",
        target.shown,
    )
