"""SQLite writes queued together commit together, each one still all or nothing: what lets
many runs start and finish at once without a commit (an fsync) apiece.

Every port on one file in a process writes through one writer (one thread, one connection), so
a run's lease and its appends share transactions, and liveness writes (leases, dropped control
requests) commit at ``synchronous=NORMAL`` -- no fsync of their own -- while opens and appends
keep the URL's level.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentdeck.errors import StoreError
from agentdeck.model.payloads import RunCompleted, TextDelta
from agentdeck.ports import BackendRequest, LeaseState
from agentdeck.sqlite import writer as sqlite_writer
from agentdeck.sqlite.store import SqliteControlPort, SqliteEventStore, SqliteLeasePort
from agentdeck.testing import new_run
from agentdeck.vocabulary import ControlVerb, RunStatus


@pytest.fixture
async def leases(sqlite_path: Path) -> SqliteLeasePort:
    port = SqliteLeasePort.from_request(BackendRequest(url=f"sqlite:///{sqlite_path}"))
    await port.open()
    yield port  # type: ignore[misc]
    await port.close()


async def test_many_leases_taken_at_once_are_all_held(leases: SqliteLeasePort) -> None:
    run_ids = [f"r{n}" for n in range(200)]
    taken = await asyncio.gather(*(leases.acquire(r, "worker", 60) for r in run_ids))
    assert all(taken)
    states = await asyncio.gather(*(leases.state(r) for r in run_ids))
    assert set(states) == {LeaseState.ALIVE}
    await asyncio.gather(*(leases.release(r, "worker") for r in run_ids))
    states = await asyncio.gather(*(leases.state(r) for r in run_ids))
    assert set(states) == {LeaseState.NONE}


async def test_of_two_workers_taking_one_lease_at_once_exactly_one_wins(
    leases: SqliteLeasePort,
) -> None:
    for round_ in range(20):
        run_id = f"contended-{round_}"
        taken = await asyncio.gather(*(leases.acquire(run_id, f"worker-{n}", 60) for n in range(5)))
        assert sum(taken) == 1


async def test_a_write_that_fails_is_undone_alone(leases: SqliteLeasePort) -> None:
    def duplicate(connection: sqlite3.Connection) -> None:
        connection.execute(
            "INSERT INTO agentdeck_leases (run_id, owner, expires_at) VALUES ('dup', 'a', 1)"
        )
        connection.execute(  # the same key again: this write fails, and takes its first row along
            "INSERT INTO agentdeck_leases (run_id, owner, expires_at) VALUES ('dup', 'b', 1)"
        )

    outcomes = await asyncio.gather(
        leases.acquire("before", "worker", 60),
        leases._write(duplicate),
        leases.acquire("after", "worker", 60),
        return_exceptions=True,
    )
    assert outcomes[0] is True and outcomes[2] is True
    assert isinstance(outcomes[1], StoreError)
    assert await leases.state("before") is LeaseState.ALIVE
    assert await leases.state("after") is LeaseState.ALIVE
    assert await leases.state("dup") is LeaseState.NONE


async def test_control_requests_made_at_once_are_all_recorded_once(sqlite_path: Path) -> None:
    control = SqliteControlPort.from_request(BackendRequest(url=f"sqlite:///{sqlite_path}"))
    await control.open()
    try:
        run_ids = [f"r{n}" for n in range(50)]
        first = await asyncio.gather(
            *(control.request(r, ControlVerb.PAUSE, "now") for r in run_ids),
            *(control.request(r, ControlVerb.PAUSE, "again") for r in run_ids),
        )
        assert first[:50] == [True] * 50 and first[50:] == [False] * 50
        taken = await asyncio.gather(*(control.take(r, ControlVerb.PAUSE) for r in run_ids))
        assert [signal.reason if signal else None for signal in taken] == ["now"] * 50
        await control.forget(run_ids)
        assert await control.pending("r0") == ()
    finally:
        await control.close()


# =========================================================================== one writer per file


class Ports:
    """A deck's three ports on one file, and a record of the writer's transactions."""

    def __init__(self, url: str) -> None:
        self.store = SqliteEventStore.from_request(BackendRequest(url=url))
        self.control = SqliteControlPort.from_request(BackendRequest(url=url))
        self.leases = SqliteLeasePort.from_request(BackendRequest(url=url))
        self.statements: list[str] = []

    async def open(self) -> None:
        for port in (self.store, self.control, self.leases):
            await port.open()
        writer = self.store._writer
        assert writer is not None
        await writer.thread.call(lambda c: c.set_trace_callback(self.statements.append))
        inline = writer._adopt(asyncio.get_running_loop())  # None when a port is above NORMAL
        if inline is not None:
            inline.connection.set_trace_callback(self.statements.append)

    async def close(self) -> None:
        for port in (self.store, self.control, self.leases):
            await port.close()

    def commits(self) -> int:
        return sum(statement == "COMMIT" for statement in self.statements)

    async def synchronous(self) -> int:
        """The level the writer's connection committed its last transaction at."""
        writer = self.store._writer
        assert writer is not None
        row = await writer.thread.call(lambda c: c.execute("PRAGMA synchronous").fetchone())
        return int(row[0])


def _writer_threads(path: Path) -> list[threading.Thread]:
    """The writer threads of one file. Counted per file: an earlier test's writer may still be
    finishing its last line while this test starts, and must not shift the count."""
    name = f"agentdeck-sqlite-writer:{path}"
    return [t for t in threading.enumerate() if t.name == name]


@pytest.fixture
async def ports(sqlite_path: Path) -> AsyncIterator[Ports]:
    opened = Ports(f"sqlite:///{sqlite_path}")
    await opened.open()
    yield opened
    await opened.close()


async def test_the_ports_on_one_file_write_through_one_thread(sqlite_path: Path) -> None:
    ports = Ports(f"sqlite:///{sqlite_path}")
    await ports.open()
    assert ports.store._writer is ports.control._writer is ports.leases._writer
    assert len(_writer_threads(sqlite_path)) == 1
    await ports.store.close()
    await ports.control.close()
    assert len(_writer_threads(sqlite_path)) == 1  # the lease port still writes through it
    await ports.leases.close()
    for _ in range(200):  # stopped() resolves just before the thread's last line returns
        if not _writer_threads(sqlite_path):
            break
        await asyncio.sleep(0.005)
    assert _writer_threads(sqlite_path) == []


async def test_a_lease_and_an_append_issued_together_commit_once(ports: Ports) -> None:
    run = new_run()
    assert (await ports.store.open_run(run)).opened
    before = ports.commits()
    taken, recorded = await asyncio.gather(
        ports.leases.acquire(run.run_id, "worker", 60),
        ports.store.append(run.run_id, [TextDelta(message_id="m", text="hi")]),
    )
    assert taken and [event.seq for event in recorded] == [1]
    assert ports.commits() == before + 1
    assert await ports.leases.state(run.run_id) is LeaseState.ALIVE


async def test_a_lease_taken_just_before_an_append_waits_to_share_its_commit(
    ports: Ports, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Generous, so that a slow machine cannot let the lease commit alone: what is tested is
    # that it waits at all, not how long.
    monkeypatch.setattr(sqlite_writer, "LIVENESS_LINGER", 2.0)
    run = new_run()
    assert (await ports.store.open_run(run)).opened
    before = ports.commits()
    taking = asyncio.create_task(ports.leases.acquire(run.run_id, "worker", 60))
    await asyncio.sleep(0.05)  # the lease is queued and waiting alone
    assert ports.commits() == before
    await ports.store.append(run.run_id, [RunCompleted()])
    assert await taking
    assert ports.commits() == before + 1


async def test_deleting_engine_state_that_is_not_there_commits_nothing(ports: Ports) -> None:
    run = new_run()
    assert (await ports.store.open_run(run)).opened
    before = ports.commits()
    await ports.store.delete_state(run.run_id, "approvals")  # what engines do at every end
    assert ports.commits() == before
    await ports.store.put_state(run.run_id, "approvals", b"parked")
    await ports.store.delete_state(run.run_id, "approvals")
    assert ports.commits() == before + 2
    assert await ports.store.get_state(run.run_id, "approvals") is None


async def test_a_delete_issued_beside_a_put_still_comes_after_it(ports: Ports) -> None:
    """The put is not committed when the delete looks: the delete must not find it absent."""
    run = new_run()
    assert (await ports.store.open_run(run)).opened
    await asyncio.gather(
        ports.store.put_state(run.run_id, "journal", b"j"),
        ports.store.delete_state(run.run_id, "journal"),
    )
    assert await ports.store.get_state(run.run_id, "journal") is None


async def test_an_append_that_moves_no_indexed_column_rewrites_only_the_runs_row(
    ports: Ports,
) -> None:
    run = new_run()
    assert (await ports.store.open_run(run)).opened
    ports.statements.clear()
    await ports.store.append(run.run_id, [TextDelta(message_id="m", text="x")] * 3)
    updates = [s for s in ports.statements if s.startswith("UPDATE agentdeck_runs")]
    assert len(updates) == 1 and updates[0].startswith("UPDATE agentdeck_runs SET last_seq =")
    ports.statements.clear()
    await ports.store.append(run.run_id, [RunCompleted()])  # the status moves: indexes too
    updates = [s for s in ports.statements if s.startswith("UPDATE agentdeck_runs")]
    assert len(updates) == 1 and updates[0].startswith("UPDATE agentdeck_runs SET status =")
    record = await ports.store.get_run(run.run_id)
    assert record is not None and (record.status, record.last_seq) == (RunStatus.COMPLETED, 4)


@pytest.fixture
async def full_ports(sqlite_path: Path) -> AsyncIterator[Ports]:
    opened = Ports(f"sqlite:///{sqlite_path}?synchronous=full")
    await opened.open()
    yield opened
    await opened.close()


async def test_liveness_writes_alone_commit_without_an_fsync_and_events_with_one(
    full_ports: Ports, monkeypatch: pytest.MonkeyPatch
) -> None:
    ports = full_ports
    monkeypatch.setattr(sqlite_writer, "LIVENESS_LINGER", 0.0)
    run = new_run()
    assert (await ports.store.open_run(run)).opened
    assert await ports.synchronous() == 2  # FULL: what the URL asks for
    assert await ports.leases.acquire(run.run_id, "worker", 60)
    assert await ports.synchronous() == 1  # NORMAL
    await ports.store.append(run.run_id, [RunCompleted()])
    assert await ports.synchronous() == 2
    await ports.leases.release(run.run_id, "worker")
    await ports.control.forget([run.run_id])
    assert await ports.synchronous() == 1
    assert await ports.control.request(run.run_id, ControlVerb.CANCEL)  # a request is data
    assert await ports.synchronous() == 2


async def test_a_failing_write_in_a_batch_with_appends_is_undone_alone(ports: Ports) -> None:
    run = new_run()
    assert (await ports.store.open_run(run)).opened

    def failing(connection: sqlite3.Connection) -> None:
        connection.execute(
            "INSERT INTO agentdeck_leases (run_id, owner, expires_at) VALUES ('x', 'a', 1)"
        )
        connection.execute("INSERT INTO no_such_table VALUES (1)")

    before = ports.commits()
    outcomes = await asyncio.gather(
        ports.leases.acquire(run.run_id, "worker", 60),
        ports.leases._write(failing),
        ports.store.append(run.run_id, [RunCompleted()]),
        return_exceptions=True,
    )
    assert outcomes[0] is True
    assert isinstance(outcomes[1], StoreError) and "no_such_table" in str(outcomes[1])
    assert [event.seq for event in outcomes[2]] == [1]  # type: ignore[union-attr]
    assert ports.commits() == before + 1  # written again under savepoints, committed once
    assert await ports.leases.state("x") is LeaseState.NONE
    assert await ports.leases.state(run.run_id) is LeaseState.ALIVE
    assert (await ports.store.get_run(run.run_id)).last_seq == 1  # type: ignore[union-attr]


def test_a_forked_child_writes_through_a_writer_of_its_own(sqlite_path: Path) -> None:
    url = f"sqlite:///{sqlite_path}"
    parent = SqliteEventStore.from_request(BackendRequest(url=url))
    asyncio.run(parent.open())  # its writer thread is running when the process forks
    run = new_run()
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child, which reports by its exit code
            code = 1
            try:

                async def child() -> None:
                    store = SqliteEventStore.from_request(BackendRequest(url=url))
                    await store.open()
                    try:
                        assert (await store.open_run(run)).opened
                    finally:
                        await store.close()

                asyncio.run(asyncio.wait_for(child(), 20))
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        asyncio.run(parent.close())

    async def check() -> None:
        store = SqliteEventStore.from_request(BackendRequest(url=url))
        await store.open()
        try:
            assert await store.get_run(run.run_id) is not None
        finally:
            await store.close()

    asyncio.run(check())


# =========================================================================== inline at NORMAL


class _CommitThreads:
    """The names of the threads each ``COMMIT`` of the writer's connections ran on."""

    def __init__(self, statements: list[str]) -> None:
        self.names: list[str] = []
        self.statements = statements  # the connection's one trace callback feeds both

    def __call__(self, statement: str) -> None:
        self.statements.append(statement)
        if statement == "COMMIT":
            self.names.append(threading.current_thread().name)


async def test_writes_issued_in_one_loop_iteration_commit_once_on_the_loops_thread(
    ports: Ports, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_writer, "LIVENESS_LINGER", 0.0)
    writer = ports.store._writer
    assert writer is not None and writer._inline is not None
    seen = _CommitThreads(ports.statements)
    writer._inline.connection.set_trace_callback(seen)
    runs = [new_run() for _ in range(20)]
    opened = await asyncio.gather(*(ports.store.open_run(run) for run in runs))
    assert all(outcome.opened for outcome in opened)
    before = ports.commits()
    recorded = await asyncio.gather(
        *(ports.store.append(run.run_id, [TextDelta(message_id="m", text="x")]) for run in runs),
        *(ports.leases.release(run.run_id, "nobody") for run in runs),
        ports.control.forget([run.run_id for run in runs]),
    )
    assert [[event.seq for event in events] for events in recorded[:20]] == [[1]] * 20
    assert ports.commits() == before + 1
    assert seen.names == [threading.current_thread().name] * 2  # the opens, then the rest
    for run in runs:
        assert [event.seq for event in await ports.store.read(run.run_id)] == [0, 1]


async def test_full_writes_commit_on_the_writer_thread(full_ports: Ports) -> None:
    writer = full_ports.store._writer
    assert writer is not None
    seen = _CommitThreads(full_ports.statements)
    await writer.thread.call(lambda c: c.set_trace_callback(seen))
    run = new_run()
    assert (await full_ports.store.open_run(run)).opened
    assert await full_ports.leases.acquire(run.run_id, "worker", 60)  # NORMAL, yet on the thread
    await full_ports.store.append(run.run_id, [RunCompleted()])
    assert writer._inline is None
    assert seen.names and all(name.startswith("agentdeck-sqlite-writer:") for name in seen.names)


async def test_a_full_port_joining_sends_every_write_to_the_thread(ports: Ports) -> None:
    run = new_run()
    assert (await ports.store.open_run(run)).opened
    writer = ports.store._writer
    assert writer is not None and writer._inline is not None
    full = SqliteEventStore.from_request(BackendRequest(url=f"{ports.store.url}?synchronous=full"))
    await full.open()
    try:
        assert full._writer is writer and writer._inline is None
        await ports.store.append(run.run_id, [TextDelta(message_id="m", text="x")])
        await full.append(run.run_id, [RunCompleted()])
        assert writer._inline is None
        assert [event.seq for event in await ports.store.read(run.run_id)] == [0, 1, 2]
    finally:
        await full.close()


async def test_a_second_event_loop_on_the_file_stays_correct(ports: Ports) -> None:
    """Two loops append to shared runs at once: every event lands once, in order, and from
    the second loop's first write on, both write through the thread."""
    runs = [new_run() for _ in range(10)]
    for run in runs:
        assert (await ports.store.open_run(run)).opened
    writer = ports.store._writer
    assert writer is not None and writer._inline is not None
    url = ports.store.url

    async def other_loop() -> list[int]:
        store = SqliteEventStore.from_request(BackendRequest(url=url))
        await store.open()
        try:
            seqs: list[int] = []
            for _ in range(20):
                for run in runs:
                    events = await store.append(run.run_id, [TextDelta(message_id="b", text="b")])
                    seqs.extend(event.seq for event in events)
            return seqs
        finally:
            await store.close()

    result: list[list[int]] = []
    thread = threading.Thread(target=lambda: result.append(asyncio.run(other_loop())))
    thread.start()
    mine: list[int] = []
    for _ in range(20):
        for run in runs:
            events = await ports.store.append(run.run_id, [TextDelta(message_id="a", text="a")])
            mine.extend(event.seq for event in events)
        await asyncio.sleep(0)
    await asyncio.to_thread(thread.join, 30)
    assert not thread.is_alive() and len(result) == 1
    assert len(mine) == len(result[0]) == 200
    assert writer._inline is None and not writer._inline_allowed
    for run in runs:
        events = await ports.store.read(run.run_id)
        assert [event.seq for event in events] == list(range(41))
        texts = [event.payload.text for event in events if isinstance(event.payload, TextDelta)]
        assert sorted(texts) == ["a"] * 20 + ["b"] * 20
    # still written, through the thread now
    await ports.store.append(runs[0].run_id, [RunCompleted()])
    assert (await ports.store.get_run(runs[0].run_id)).last_seq == 41  # type: ignore[union-attr]


async def test_an_inline_write_finding_the_file_locked_waits_off_the_loop(
    ports: Ports, sqlite_path: Path
) -> None:
    run = new_run()
    assert (await ports.store.open_run(run)).opened
    blocker = sqlite3.connect(sqlite_path, isolation_level=None, check_same_thread=False)
    try:
        blocker.execute("BEGIN IMMEDIATE")  # another process's writer, say
        appending = asyncio.create_task(
            ports.store.append(run.run_id, [TextDelta(message_id="m", text="x")])
        )
        ticks = 0
        for _ in range(20):  # the loop keeps running while the append waits for the lock
            await asyncio.sleep(0.005)
            ticks += 1
        assert ticks == 20 and not appending.done()
        blocker.execute("COMMIT")
        assert [event.seq for event in await asyncio.wait_for(appending, 10)] == [1]
    finally:
        blocker.close()
    # the inline writer goes on committing afterwards
    await ports.store.append(run.run_id, [RunCompleted()])
    assert (await ports.store.get_run(run.run_id)).last_seq == 2  # type: ignore[union-attr]


def test_a_store_used_from_one_loop_after_another_writes_inline_again(sqlite_path: Path) -> None:
    store = SqliteEventStore.from_request(BackendRequest(url=f"sqlite:///{sqlite_path}"))
    run = new_run()

    async def first() -> None:
        await store.open()
        assert (await store.open_run(run)).opened

    async def second() -> None:
        assert store._writer is not None
        await store.append(run.run_id, [RunCompleted()])
        assert store._writer._inline is not None
        assert store._writer._inline.loop is asyncio.get_running_loop()
        await store.close()

    asyncio.run(first())
    asyncio.run(second())  # the first loop is closed: the writer moves to this one


async def test_the_thread_checkpoints_the_wal_the_inline_writer_grows(
    ports: Ports, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_writer, "WAL_AUTOCHECKPOINT", 10)
    writer = ports.store._writer
    assert writer is not None and writer._inline is not None
    # the inline connection never checkpoints on commit: that would stall the loop
    assert writer._inline.connection.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
    run = new_run()
    assert (await ports.store.open_run(run)).opened
    for n in range(12):  # one changed row each, at least
        await ports.store.append(run.run_id, [TextDelta(message_id="m", text=str(n))])
    await writer.thread.call(lambda c: None)  # the checkpoint was queued before this
    assert "PRAGMA wal_checkpoint(PASSIVE)" in ports.statements
