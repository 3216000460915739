"""Reading a run back from PostgreSQL (`agentdeck_stores._pg_events`): exactly the events, or the
error, that reading every row whole with `stored_event` (``Event.from_json``) gives.

Rows are written straight into ``agentdeck_events`` (the store's own writes cover only what a
run's lifecycle allows), either as the store writes them or altered, and every read is held to
the whole-row reading of the same rows: equality, repr, JSON, payload type and fields set, the
UTC zone object and field order.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import psycopg
import pytest

from agentdeck.errors import EventSchemaError
from agentdeck.model.events import Event
from agentdeck.model.payloads import PAYLOAD_TYPES, RunFailed, TextDelta, UnknownEvent
from agentdeck.ports import BackendRequest
from agentdeck.storage.codec import stored_event
from agentdeck.testing import event_examples as ex
from agentdeck.testing import new_run
from agentdeck.testing.fixtures import PostgresSchema
from agentdeck_stores import _pg_events
from agentdeck_stores._pg_events import HEADER, NotPlain, events_from, read_params
from agentdeck_stores.postgres import PostgresEventStore

Connection = psycopg.AsyncConnection[Any]


class Run:
    """A run opened by the store, and a raw connection to write and read its rows."""

    def __init__(self, store: PostgresEventStore, raw: Connection, event: Event) -> None:
        self.store = store
        self.raw = raw
        self.id = event.run_id
        self.started = event

    def envelope(self, payload: Any, seq: int) -> Event:
        """``payload`` recorded as the store records it on this run."""
        return Event.record(
            payload,
            seq=seq,
            run_id=self.id,
            ts=ex.TS,
            session_id=self.started.session_id,
            namespace=self.started.namespace,
            parent_run_id=self.started.parent_run_id,
            origin=self.started.origin,
        )

    async def write(self, rows: list[tuple[int, str]]) -> None:
        """Insert rows (seq, envelope JSON) as the store's writer does."""
        async with self.raw.cursor() as cursor:
            await cursor.executemany(
                "INSERT INTO agentdeck_events (run_id, seq, data) VALUES (%s, %s, %s::jsonb)",
                [(self.id, seq, data) for seq, data in rows],
            )

    async def whole(self, from_seq: int = 0, limit: int | None = None) -> list[str]:
        query = "SELECT data::text FROM agentdeck_events WHERE run_id = %s AND seq >= %s "
        query += "ORDER BY seq" + (" LIMIT %s" if limit is not None else "")
        params: tuple[Any, ...] = (self.id, from_seq) + ((limit,) if limit is not None else ())
        cursor = await self.raw.execute(query, params)
        return [data for (data,) in await cursor.fetchall()]

    async def fast_rows(self) -> list[tuple[Any, ...]]:
        """What :data:`READ_LOG` returns for the whole run."""
        query, params = read_params(self.id, 0, None)
        cursor = await self.raw.execute(query, params)
        return await cursor.fetchall()


@pytest.fixture
async def run(postgres_schema: PostgresSchema) -> AsyncIterator[Run]:
    store = PostgresEventStore.from_request(BackendRequest(url=postgres_schema.url))
    await store.open()
    raw = await psycopg.AsyncConnection.connect(postgres_schema.url, autocommit=True)
    try:
        outcome = await store.open_run(
            new_run(session_id="wa-1", namespace="acme", parent_run_id="run-parent")
        )
        assert outcome.event is not None
        yield Run(store, raw, outcome.event)
    finally:
        await raw.close()
        await store.close()


def _same(read: Event, whole: Event) -> None:
    """Everything a caller can observe of the two events is the same (the envelope's fields
    set aside: a recorded event leaves its defaulted ``v`` unset, as every store's appends do)."""
    assert type(read) is Event
    assert read == whole
    assert repr(read) == repr(whole)
    assert read.to_json() == whole.to_json()
    assert read.model_fields_set - {"v"} == whole.model_fields_set - {"v"}
    assert type(read.payload) is type(whole.payload)
    assert read.payload.model_fields_set == whole.payload.model_fields_set
    assert read.ts.tzinfo is whole.ts.tzinfo
    assert list(read.__dict__) == list(whole.__dict__)
    assert list(read.payload.__dict__) == list(whole.payload.__dict__)
    for name in type(whole.payload).model_fields:
        assert type(getattr(read.payload, name)) is type(getattr(whole.payload, name)), name


async def _reads_as_whole(run: Run, from_seq: int = 0, limit: int | None = None) -> list[Event]:
    """The store's read, held to reading the same rows whole."""
    expected = [stored_event(data) for data in await run.whole(from_seq, limit)]
    read = await run.store.read(run.id, from_seq=from_seq, limit=limit)
    assert len(read) == len(expected)
    for got, want in zip(read, expected, strict=True):
        _same(got, want)
    return read


# =========================================================================== rows the store wrote


async def test_every_kind_reads_back_as_the_whole_row_does_without_falling_back(run: Run) -> None:
    examples = [ex.PAYLOAD_EXAMPLES[cls] for cls in PAYLOAD_TYPES]
    await run.write(
        [(seq, run.envelope(payload, seq).to_json()) for seq, payload in enumerate(examples, 1)]
    )
    rows = await run.fast_rows()
    assert rows[0][0] == HEADER
    assert all(row[5] is None for row in rows[1:])  # no envelope had to be sent whole
    assert len(events_from(run.id, rows)) == len(examples) + 1  # no NotPlain either
    read = await _reads_as_whole(run)
    assert [type(event.payload) for event in read[1:]] == list(PAYLOAD_TYPES)


async def test_the_store_s_own_appends_read_back_equal(run: Run) -> None:
    recorded = await run.store.append(
        run.id, [TextDelta(message_id="m", text=f"t{n}") for n in range(300)]
    )
    read = await _reads_as_whole(run)
    assert read == [run.started, *recorded]
    assert [event.to_json() for event in read] == [
        event.to_json() for event in [run.started, *recorded]
    ]


@pytest.mark.parametrize(("from_seq", "limit"), [(0, None), (5, None), (3, 4), (0, 0), (99, 5)])
async def test_from_seq_and_limit_pick_the_same_events(
    run: Run, from_seq: int, limit: int | None
) -> None:
    await run.store.append(run.id, [TextDelta(message_id="m", text=f"t{n}") for n in range(20)])
    read = await _reads_as_whole(run, from_seq, limit)
    if limit == 0 or from_seq > 20:
        assert read == []


async def test_payloads_read_back_share_a_fields_set_that_copies_stay_out_of(run: Run) -> None:
    await run.store.append(
        run.id, [TextDelta(message_id="m", text="a"), TextDelta(message_id="m", text="b")]
    )
    first, second = (event.payload for event in (await run.store.read(run.id))[1:])
    assert isinstance(first, TextDelta) and isinstance(second, TextDelta)
    assert first.model_fields_set is second.model_fields_set  # one set per class, not per event
    before = set(first.model_fields_set)
    changed = first.model_copy(update={"text": "c"})
    assert changed.model_fields_set == before
    assert first.model_fields_set == before and second.model_fields_set == before
    with pytest.raises(Exception, match="frozen"):
        first.text = "d"  # type: ignore[misc]  # the point: refused
    assert first.model_fields_set == before


async def test_a_run_never_opened_or_without_events_reads_empty(run: Run) -> None:
    assert await run.store.read("run-never-opened") == []
    assert await run.store.read(run.id, from_seq=1) == []


async def test_events_whose_run_row_is_gone_are_still_read_whole(run: Run) -> None:
    await run.store.append(run.id, [TextDelta(message_id="m", text="a")])
    await run.raw.execute("DELETE FROM agentdeck_runs WHERE run_id = %s", (run.id,))
    rows = await run.fast_rows()
    assert rows[0][0] != HEADER and all(row[5] is not None for row in rows)
    assert len(await _reads_as_whole(run)) == 2


# =========================================================================== rows of other shapes


def _altered(event: Event, change: Callable[[dict[str, Any]], object]) -> str:
    data = json.loads(event.to_json())
    change(data)
    return json.dumps(data)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], object]:
    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = data
        for key in parents:
            target = target[key]
        target[last] = value

    return change


_SENT_WHOLE: dict[str, Callable[[dict[str, Any]], object]] = {
    "another minor": _set("v.minor", 7),
    "another session": _set("session_id", "someone-else"),
    "no namespace": _set("namespace", None),
    "origin missing": lambda data: data.pop("origin"),
    "run id of another run": _set("run_id", "run-other"),
}
"""Alterations the server sees (the envelope is not its run's): the row arrives whole."""

_READ_AGAIN: dict[str, Callable[[dict[str, Any]], object]] = {
    "a time with an offset": _set("ts", "2025-03-04T07:06:07.891011+02:00"),
    "a time as a number": _set("ts", 1741064767),
    "a seq with a fraction": _set("seq", 2.0),
    "an unknown kind": lambda data: data.update(
        kind="workflow.branch_taken", payload={"kind": "workflow.branch_taken", "branch": "b"}
    ),
}
"""Alterations only the client sees: the whole read goes down the plain path."""

_KEPT: dict[str, Callable[[dict[str, Any]], object]] = {
    "an extra envelope field": _set("extra", {"ignored": True}),
    "an extra payload field": _set("payload.extra", 1),
    "a version with an extra field": _set("v.patch", 3),
    "a seq as a string": _set("seq", "2"),  # lax validation reads it as the int
}
"""Alterations validation ignores: still read on the fast path, to the same event."""


@pytest.mark.parametrize("change", sorted(_SENT_WHOLE | _READ_AGAIN | _KEPT))
async def test_a_row_of_another_shape_reads_as_the_whole_row_does(run: Run, change: str) -> None:
    alter = (_SENT_WHOLE | _READ_AGAIN | _KEPT)[change]
    plain = [run.envelope(TextDelta(message_id="m", text=f"t{seq}"), seq) for seq in (1, 3)]
    odd = _altered(run.envelope(RunFailed(error_code="x", message="m"), 2), alter)
    await run.write([(1, plain[0].to_json()), (2, odd), (3, plain[1].to_json())])
    rows = await run.fast_rows()
    assert (rows[3][5] is not None) is (change in _SENT_WHOLE), rows[3]  # header, 0, 1, 2
    if change in _READ_AGAIN:
        with pytest.raises(NotPlain):
            events_from(run.id, rows)
    else:
        events_from(run.id, rows)
    read = await _reads_as_whole(run)
    if change == "an unknown kind":
        assert isinstance(read[2].payload, UnknownEvent)
    if change == "another minor":
        assert read[2].v.minor == 7


@pytest.mark.parametrize(
    "alter",
    [
        _set("payload.message", 5),  # a field of the wrong type
        lambda data: data["payload"].pop("message"),  # a required field missing
        _set("kind", "run.completed"),  # the envelope and its payload disagree
        _set("seq", -1),
        _set("parent_run_id", 5),  # sent whole: validation's error
        lambda data: data.pop("seq"),
        lambda data: data.pop("payload"),
        lambda data: data.pop("kind"),
    ],
    ids=[
        "wrong type",
        "missing field",
        "kind mismatch",
        "negative seq",
        "parent not a string",
        "no seq",
        "no payload",
        "no kind",
    ],
)
async def test_a_row_validation_refuses_raises_its_error(
    run: Run, alter: Callable[[dict[str, Any]], object]
) -> None:
    odd = _altered(run.envelope(RunFailed(error_code="x", message="m"), 1), alter)
    await run.write([(1, odd)])
    with pytest.raises(EventSchemaError) as whole:
        stored_event(odd)
    with pytest.raises(EventSchemaError) as read:
        await run.store.read(run.id)
    assert str(read.value) == str(whole.value)
    assert read.value.kind == whole.value.kind
    assert read.value.field == whole.value.field


async def test_the_read_statement_seeks_its_run_by_index(run: Run) -> None:
    """Both tables are sought by their keys: with sequential scans priced out, a statement
    that could not seek would still show one."""
    await run.raw.execute("SET enable_seqscan = off")
    for limit in (None, 10):
        query, params = read_params(run.id, 0, limit)
        cursor = await run.raw.execute(f"EXPLAIN {query}", params)
        plan = "\n".join(row[0] for row in await cursor.fetchall())
        assert "agentdeck_events_pkey" in plan, plan
        assert "agentdeck_runs_run_id_key" in plan, plan
        assert "Seq Scan" not in plan, plan


def test_every_known_kind_has_a_payload_reader() -> None:
    assert set(_pg_events._READERS) == {cls.KIND for cls in PAYLOAD_TYPES}
