"""The memory store runs the store contract, plus what only an in-process store promises."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator

import pytest

from agentdeck.errors import ConfigError, InvalidInputError, RunStateError
from agentdeck.memory import MemoryEventStore
from agentdeck.memory.log import candidates
from agentdeck.memory.store import instance_name
from agentdeck.model.clock import ManualClock
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunCancelled, RunCompleted, RunInterrupted, TextDelta
from agentdeck.ports import BackendRequest, EventStore, RunQuery
from agentdeck.testing import StoreContract, new_run
from agentdeck.testing.store_kit import ReopenStore
from agentdeck.vocabulary import RunStatus


class TestMemoryStore(StoreContract):
    """``memory://``: a fresh store per factory call."""

    @pytest.fixture
    async def store(self, clock: ManualClock) -> AsyncIterator[EventStore]:
        store = MemoryEventStore.from_request(BackendRequest(url="memory://", clock=clock))
        await store.open()
        yield store
        await store.close()


class TestNamedMemoryStore(StoreContract):
    """``memory://<name>``: handles onto one process-wide store see each other's runs."""

    shared = True  # within the process: every handle on the name shares the runs

    @pytest.fixture
    def url(self) -> str:
        return f"memory://kit-{uuid.uuid4().hex}"

    @pytest.fixture
    async def store(self, clock: ManualClock, url: str) -> AsyncIterator[EventStore]:
        store = MemoryEventStore.from_request(BackendRequest(url=url, clock=clock))
        await store.open()
        yield store
        await store.close()

    @pytest.fixture
    def reopen_store(self, clock: ManualClock, url: str) -> ReopenStore:
        async def reopen() -> EventStore:
            store = MemoryEventStore.from_request(BackendRequest(url=url, clock=clock))
            await store.open()
            return store

        return reopen


# --------------------------------------------------------------------------- URLs and instances


@pytest.mark.parametrize(
    ("url", "name"),
    [("memory://", None), ("memory:", None), ("MEMORY://", None), ("memory://shared", "shared")],
)
def test_memory_urls_name_an_instance_or_none(url: str, name: str | None) -> None:
    assert instance_name(url) == name


def test_another_scheme_is_a_config_error_naming_what_is_accepted() -> None:
    with pytest.raises(ConfigError) as error:
        instance_name("sqlite:///x.db")
    assert error.value.accepted == ("memory://", "memory://<name>")


async def test_each_unnamed_factory_call_gives_a_fresh_store() -> None:
    first = MemoryEventStore.from_request(BackendRequest(url="memory://"))
    second = MemoryEventStore.from_request(BackendRequest(url="memory://"))
    new = new_run(session_id="s")
    assert (await first.open_run(new)).opened
    assert await second.get_run(new.run_id) is None
    assert (await second.open_run(new_run(session_id="s"))).opened


async def test_a_named_store_is_shared_by_every_factory_call_in_the_process() -> None:
    url = f"memory://deck-{uuid.uuid4().hex}"
    first = MemoryEventStore.from_request(BackendRequest(url=url))
    second = MemoryEventStore.from_request(BackendRequest(url=url))
    other = MemoryEventStore.from_request(BackendRequest(url=f"{url}-other"))
    new = new_run(session_id="s")
    assert (await first.open_run(new)).opened
    record = await second.get_run(new.run_id)
    assert record is not None and record.status is RunStatus.RUNNING
    assert await other.get_run(new.run_id) is None


async def test_closing_one_handle_leaves_the_named_store_to_the_others() -> None:
    url = f"memory://deck-{uuid.uuid4().hex}"
    first = MemoryEventStore.from_request(BackendRequest(url=url))
    second = MemoryEventStore.from_request(BackendRequest(url=url))
    new = new_run()
    await first.open_run(new)
    received: list[Event] = []

    async def follow() -> None:
        async for event in second.follow(new.run_id):
            received.append(event)

    follower = asyncio.create_task(follow())
    await asyncio.sleep(0)
    await first.close()
    await second.append(new.run_id, [TextDelta(message_id="m", text="still here")])
    await asyncio.sleep(0)
    assert [event.seq for event in received] == [0, 1]
    assert not follower.done()
    await second.close()
    await asyncio.wait_for(follower, 1)


async def test_a_follower_waits_for_a_run_not_yet_opened() -> None:
    store = MemoryEventStore()
    new = new_run()
    received: list[Event] = []

    async def follow() -> None:
        async for event in store.follow(new.run_id):
            received.append(event)

    follower = asyncio.create_task(follow())
    await asyncio.sleep(0)
    await store.open_run(new)
    await asyncio.sleep(0)
    assert [event.kind for event in received] == ["run.started"]
    await store.close()
    await asyncio.wait_for(follower, 1)


async def test_a_follower_on_another_thread_is_woken_by_an_append_here() -> None:
    url = f"memory://threads-{uuid.uuid4().hex}"
    store = MemoryEventStore.from_request(BackendRequest(url=url))
    new = new_run()
    await store.open_run(new)
    seen: list[int] = []
    started = threading.Event()

    def other_thread() -> None:
        async def follow() -> None:
            handle = MemoryEventStore.from_request(BackendRequest(url=url))
            async for event in handle.follow(new.run_id):
                seen.append(event.seq)
                started.set()

        asyncio.run(follow())

    thread = threading.Thread(target=other_thread)
    thread.start()
    assert await asyncio.to_thread(started.wait, 5)
    await store.append(new.run_id, [TextDelta(message_id="m", text="x")])
    await store.append(new.run_id, [RunCompleted()])
    await asyncio.to_thread(thread.join, 5)
    assert not thread.is_alive()
    assert seen == [0, 1, 2]


# --------------------------------------------------------------------------- indexes and cursors


async def test_listing_few_waiting_among_many_reads_only_the_status_index() -> None:
    store = MemoryEventStore()
    waiting = []
    for n in range(10_000):
        new = new_run()
        await store.open_run(new)
        if n % 1000 == 0:
            await store.append(new.run_id, [RunInterrupted(interrupt_id="q")])
            waiting.append(new.run_id)
    query = RunQuery(status=RunStatus.WAITING_ANSWER)
    assert len(candidates(store._log, query)) == 10  # the status index, not the 10,000 runs
    page = await store.list_runs(query)
    assert [record.run_id for record in page.runs] == waiting


async def test_a_foreign_cursor_is_refused_by_name() -> None:
    store = MemoryEventStore()
    with pytest.raises(InvalidInputError) as error:
        await store.list_runs(RunQuery(cursor="not-ours"))
    assert error.value.field == "cursor"


async def test_events_are_built_exactly_as_event_record_builds_them() -> None:
    store = MemoryEventStore()
    new = new_run(session_id="s", namespace="n", parent_run_id="p")
    await store.open_run(new)
    (event,) = await store.append(new.run_id, [TextDelta(message_id="m", text="x")])
    reference = Event.record(
        event.payload,
        seq=event.seq,
        run_id=event.run_id,
        ts=event.ts,
        session_id="s",
        namespace="n",
        parent_run_id="p",
        origin=new.name,
    )
    assert event == reference
    assert event.model_dump_json() == reference.model_dump_json()
    assert event.model_fields_set == reference.model_fields_set


async def test_one_content_payload_appended_alone_matches_the_general_path() -> None:
    """A single unconditional content payload takes a path that skips the fold; an append that
    expects a status takes the general one. Both must record and fold the same."""
    clock = ManualClock()
    fast, general = MemoryEventStore(clock=clock), MemoryEventStore(clock=clock)
    new = new_run(session_id="s", namespace="n", parent_run_id="p")
    for store in (fast, general):
        await store.open_run(new)
    payloads = [
        TextDelta(message_id="m", text="a"),
        RunInterrupted(interrupt_id="q", payload="ok?"),
        TextDelta(message_id="m", text="b"),  # content while waiting: the question stays open
        RunCancelled(reason="enough"),
    ]
    for payload in payloads:
        clock.advance(1.0)
        got = await fast.append(new.run_id, [payload])
        expect = (
            None
            if isinstance(payload, RunCompleted)
            else (RunStatus.RUNNING, RunStatus.WAITING_ANSWER)
        )
        want = await general.append(new.run_id, [payload], expect=expect)
        assert [e.model_dump() for e in got] == [e.model_dump() for e in want]
        fast_record = await fast.get_run(new.run_id)
        general_record = await general.get_run(new.run_id)
        assert fast_record == general_record
    late = TextDelta(message_id="m", text="late")
    with pytest.raises(RunStateError) as on_fast:
        await fast.append(new.run_id, [late])
    with pytest.raises(RunStateError) as on_general:
        await general.append(new.run_id, [late], expect=tuple(RunStatus))
    assert str(on_fast.value) == str(on_general.value)
    assert on_fast.value.status is RunStatus.CANCELLED
    assert len(await fast.read(new.run_id)) == 5  # nothing recorded by the refusal
