"""``StoreContract``: the behaviour every :class:`~agentdeck.ports.EventStore` must have.

Run it against your store by subclassing it and overriding the ``store`` fixture::

    import pytest_asyncio
    from agentdeck.ports import BackendRequest
    from agentdeck.testing import StoreContract

    class TestMyStore(StoreContract):
        durable = True   # events survive close + reopen (enables the durability tests)
        shared = True    # a second store on the same data sees the same runs

        @pytest_asyncio.fixture
        async def store(self, clock, my_isolated_url):
            store = MyStore.from_request(BackendRequest(url=my_isolated_url, clock=clock))
            await store.open()
            yield store
            await store.close()

        @pytest_asyncio.fixture
        async def reopen_store(self, clock, my_isolated_url):
            async def reopen():  # another store on the same data, as another process opens it
                other = MyStore.from_request(BackendRequest(url=my_isolated_url, clock=clock))
                await other.open()
                return other
            return reopen

Build the store with the kit's ``clock`` (a :class:`~agentdeck.model.clock.ManualClock`): the
contract says ``ts`` comes from the clock the factory was handed, and the time-based tests move it.
Each test must get an empty store (see :mod:`agentdeck.testing.fixtures` for per-test
PostgreSQL schemas, Redis prefixes and SQLite files). Capabilities are flags, never backend
names; a test that needs one your store lacks is skipped with the flag's name.

Kit tests may not be deleted or redefined silently (see :mod:`agentdeck.testing.guard`).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any, ClassVar

import pytest

from agentdeck.errors import NotFoundError, RunStateError
from agentdeck.model.clock import ManualClock
from agentdeck.model.content import DataBlock, TextBlock
from agentdeck.model.events import Event, parse_payload
from agentdeck.model.payloads import (
    AgentChanged,
    AnswerRecorded,
    AnswerRefused,
    ApprovalDecided,
    ArtifactCreated,
    ControlObserved,
    ControlRequested,
    Custom,
    InputAppended,
    MessageCompleted,
    NodeUpdated,
    Payload,
    PlanItem,
    PlanUpdated,
    Report,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunPaused,
    RunResumed,
    RunStarted,
    StepCompleted,
    TextDelta,
    ThoughtDelta,
    ToolCallCompleted,
    ToolCallStarted,
    UnknownEvent,
    Usage,
    UsageReported,
)
from agentdeck.model.status import fold, fold_status
from agentdeck.ports import EventStore, NewRun, PruneQuery, RunQuery, RunRecord, Takeover
from agentdeck.testing.guard import ContractKit, check_contract
from agentdeck.vocabulary import TERMINAL, ControlVerb, ErrorCode, RunStatus, SafePoint

__all__ = ["ReopenStore", "StoreContract", "new_run"]

ReopenStore = Callable[[], Awaitable[EventStore]]
"""An async factory for another opened store on the same data as the ``store`` fixture."""

WAIT = 5.0
"""Seconds a test waits for something that should happen at once (a follower's wake-up)."""


# =========================================================================== helpers


def new_run(
    *,
    name: str = "agent",
    session_id: str | None = None,
    key: str | None = None,
    namespace: str | None = None,
    parent_run_id: str | None = None,
    run_id: str | None = None,
    invocable_kind: str = "agent",
) -> NewRun:
    """A :class:`NewRun` with a fresh id, for tests."""
    return NewRun(
        run_id=run_id or f"run-{uuid.uuid4().hex}",
        started=RunStarted(
            name=name, invocable_kind=invocable_kind, input=[TextBlock(text="hi")], key=key
        ),
        session_id=session_id,
        namespace=namespace,
        parent_run_id=parent_run_id,
    )


def _text(n: int = 0) -> TextDelta:
    return TextDelta(message_id="m1", text=f"chunk {n}")


def _completed() -> RunCompleted:
    return RunCompleted(output=[TextBlock(text="done")], usage=Usage(requests=1, input_tokens=3))


def _failed() -> RunFailed:
    return RunFailed(error_code=ErrorCode.ENGINE_ERROR, message="the engine stopped")


def _cancelled() -> RunCancelled:
    return RunCancelled(reason="asked to")


_TERMINAL_PAYLOADS: dict[str, Callable[[], Payload]] = {
    "run.completed": _completed,
    "run.failed": _failed,
    "run.cancelled": _cancelled,
}


def _every_kind() -> list[Payload]:
    """One payload of every kind this release knows (plus an unknown one), richly filled."""
    return [
        TextDelta(message_id="m1", text="héllo ✓"),
        ThoughtDelta(message_id="m1", text="thinking"),
        MessageCompleted(message_id="m1", text="héllo ✓", agent="triage"),
        AgentChanged(previous="triage", next="billing"),
        ToolCallStarted(call_id="c1", tool="lookup", args={"q": [1, 2.5, None, "x"]}),
        ToolCallStarted(call_id="c2", tool="lookup", args="{not json", args_error="bad JSON"),
        ToolCallCompleted(
            call_id="c1", tool="lookup", result_preview="{}", result_size=2, result_sha256="ab"
        ),
        UsageReported(model="m", usage=Usage(requests=1, input_tokens=5, output_tokens=7)),
        Report(level="warning", message="careful", fields={"n": 1, "nested": {"a": [True]}}),
        ArtifactCreated(artifact_id="a1", media_type="text/plain", uri="file:///x", size=3),
        InputAppended(input=[TextBlock(text="more"), DataBlock(data={"k": 1})], source="user"),
        StepCompleted(index=0, name="fetch", result={"rows": [1, 2]}),
        NodeUpdated(node="n1", update={"x": 1}, step=3),
        PlanUpdated(items=[PlanItem(title="one"), PlanItem(title="two", status="done")]),
        Custom(name="app.thing", data={"any": ["json", 1, None]}),
        ApprovalDecided(call_id="c1", tool="lookup", approved=True, origin="policy"),
        ControlRequested(verb=ControlVerb.PAUSE, reason="later"),
        parse_payload({"kind": "future.kind", "anything": {"kept": [1, "two"]}}),
        RunInterrupted(interrupt_id="i1", payload={"question": "ok?"}),
        AnswerRefused(interrupt_id="i1", reason="expected yes or no"),
        AnswerRecorded(interrupt_id="i1", value={"yes": True}),
        RunResumed(interrupt_id="i1"),
        ControlObserved(verb=ControlVerb.PAUSE, safe_point=SafePoint.TOOL_DISPATCH),
        RunPaused(reason="later"),
        RunResumed(reason="go on"),
        _completed(),
    ]


async def _collect(iterator: AsyncIterator[Event], into: list[Event]) -> None:
    async for event in iterator:
        into.append(event)


async def _eventually(predicate: Callable[[], bool], what: str) -> None:
    """Yield to the loop until ``predicate`` holds (bounded by :data:`WAIT`), else fail."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while not predicate():
        if loop.time() > deadline:
            pytest.fail(f"timed out waiting until {what}")
        await asyncio.sleep(0.001)


# =========================================================================== the kit


class StoreContract(ContractKit):
    """The event-store contract. Subclass it and override :meth:`store`."""

    __contract_kit__ = True

    durable: ClassVar[bool] = False
    """The store keeps runs across close and reopen (needs :meth:`reopen_store`)."""
    shared: ClassVar[bool] = False
    """A second store on the same data sees the same runs (needs :meth:`reopen_store`)."""

    # -- fixtures an implementer supplies ------------------------------------------------------

    @pytest.fixture
    def clock(self) -> ManualClock:
        """The clock to build the store with; tests advance it."""
        return ManualClock()

    @pytest.fixture
    def store(self) -> EventStore:
        """Override: yield an opened, empty store built with :meth:`clock`, and close it after.

        (An async generator fixture in the subclass; this placeholder only explains itself.)
        """
        pytest.fail(f"{type(self).__name__} must override the `store` fixture")

    @pytest.fixture
    def reopen_store(self) -> ReopenStore:
        """Override when ``durable`` or ``shared``: an async factory for another opened store
        on the same data as :meth:`store`, as another process would open it (the kit closes
        what it opens)."""
        if not (self.durable or self.shared):
            pytest.skip("the store is declared neither durable nor shared")
        pytest.fail(
            f"{type(self).__name__} declares durable or shared, so it must override the "
            "`reopen_store` fixture"
        )

    # -- helpers ------------------------------------------------------------------------------

    async def _open(self, store: EventStore, **kwargs: Any) -> str:
        new = new_run(**kwargs)
        outcome = await store.open_run(new)
        assert outcome.opened, f"open of {new.run_id} was refused: {outcome}"
        return new.run_id

    async def _status(self, store: EventStore, run_id: str) -> RunStatus | None:
        record = await store.get_run(run_id)
        return record.status if record is not None else None

    async def _suspend(self, store: EventStore, run_id: str, how: RunStatus) -> None:
        if how is RunStatus.PAUSED:
            await store.append(run_id, [RunPaused(reason="test")])
        else:
            await store.append(run_id, [RunInterrupted(interrupt_id="q1", payload="ok?")])

    async def _ids(self, store: EventStore, query: RunQuery) -> list[str]:
        runs: list[str] = []
        cursor: str | None = None
        while True:
            page = await store.list_runs(replace(query, cursor=cursor, limit=7))
            runs.extend(record.run_id for record in page.runs)
            if page.next_cursor is None:
                return runs
            cursor = page.next_cursor

    # =========================================================================== the guard

    async def test_no_kit_test_is_dropped_or_silently_overridden(self) -> None:
        check_contract(type(self))

    async def test_capability_flags_agree_with_the_store(self, store: EventStore) -> None:
        assert type(store).durable is self.durable, (
            f"{type(store).__name__}.durable is {type(store).durable}; the kit subclass says "
            f"{self.durable}"
        )
        if type(store).shared:
            assert self.shared, "the store says it is shared; set shared = True to test it"

    # =========================================================================== opening

    async def test_open_records_run_started_at_seq_0(self, store: EventStore) -> None:
        new = new_run(session_id="s1", namespace="ns", parent_run_id="parent-1", key="k1")
        outcome = await store.open_run(new)
        assert outcome.opened and outcome.event is not None
        event = outcome.event
        assert (event.seq, event.kind, event.run_id) == (0, "run.started", new.run_id)
        assert (event.session_id, event.namespace, event.parent_run_id) == ("s1", "ns", "parent-1")
        assert event.origin == "agent"
        assert event.payload == new.started
        assert outcome.busy is None and outcome.key_holder is None and outcome.stepped_over is None
        assert await store.read(new.run_id) == [event]

    async def test_open_indexes_the_new_run(self, store: EventStore) -> None:
        new = new_run(session_id="s1", namespace="ns", parent_run_id="p", key="k", name="a1")
        outcome = await store.open_run(new)
        assert outcome.event is not None
        record = await store.get_run(new.run_id)
        assert record == RunRecord(
            run_id=new.run_id,
            name="a1",
            invocable_kind="agent",
            status=RunStatus.RUNNING,
            created_at=outcome.event.ts,
            updated_at=outcome.event.ts,
            last_seq=0,
            namespace="ns",
            session_id="s1",
            key="k",
            parent_run_id="p",
            wake_at=None,
        )

    async def test_ts_comes_from_the_store_clock(
        self, store: EventStore, clock: ManualClock
    ) -> None:
        clock.advance(12.5)
        outcome = await store.open_run(new_run())
        assert outcome.event is not None
        assert outcome.event.ts == clock.now()
        clock.advance(3)
        (event,) = await store.append(outcome.event.run_id, [_text()])
        assert event.ts == clock.now()
        assert event.ts.utcoffset() == timedelta(0)

    async def test_open_on_a_session_held_by_a_running_run_is_busy(self, store: EventStore) -> None:
        holder = await self._open(store, session_id="s1")
        loser = new_run(session_id="s1")
        outcome = await store.open_run(loser)
        assert not outcome.opened and outcome.event is None
        assert outcome.busy is not None and outcome.busy.run_id == holder
        assert outcome.busy.status is RunStatus.RUNNING
        assert outcome.stepped_over is None
        assert await store.get_run(loser.run_id) is None
        assert await store.read(loser.run_id) == []

    @pytest.mark.parametrize("suspended", [RunStatus.PAUSED, RunStatus.WAITING_ANSWER])
    async def test_a_suspended_holder_is_never_stepped_over(
        self, store: EventStore, clock: ManualClock, suspended: RunStatus
    ) -> None:
        holder = await self._open(store, session_id="s1")
        await self._suspend(store, holder, suspended)
        clock.advance(10_000)
        takeover = Takeover(
            stale_before=clock.now() + timedelta(days=1), dead_run_ids=frozenset({holder})
        )
        outcome = await store.open_run(new_run(session_id="s1"), takeover=takeover)
        assert not outcome.opened
        assert outcome.busy is not None and outcome.busy.run_id == holder
        assert outcome.busy.status is suspended
        assert outcome.stepped_over is None

    async def test_a_stale_running_holder_is_stepped_over(
        self, store: EventStore, clock: ManualClock
    ) -> None:
        holder = await self._open(store, session_id="s1")
        clock.advance(60)
        record = await store.get_run(holder)
        assert record is not None
        new = new_run(session_id="s1")
        outcome = await store.open_run(
            new, takeover=Takeover(stale_before=record.updated_at + timedelta(seconds=1))
        )
        assert outcome.opened
        assert outcome.stepped_over is not None and outcome.stepped_over.run_id == holder
        # The new run holds the session now; the displaced one is left for the caller to close.
        third = await store.open_run(new_run(session_id="s1"))
        assert third.busy is not None and third.busy.run_id == new.run_id
        assert await self._status(store, holder) is RunStatus.RUNNING

    async def test_a_dead_running_holder_is_stepped_over(self, store: EventStore) -> None:
        holder = await self._open(store, session_id="s1")
        outcome = await store.open_run(
            new_run(session_id="s1"), takeover=Takeover(dead_run_ids=frozenset({holder}))
        )
        assert outcome.opened
        assert outcome.stepped_over is not None and outcome.stepped_over.run_id == holder

    async def test_a_live_fresh_running_holder_is_not_stepped_over(self, store: EventStore) -> None:
        holder = await self._open(store, session_id="s1")
        record = await store.get_run(holder)
        assert record is not None
        # Stale means strictly older than stale_before; other runs' deaths do not count.
        takeover = Takeover(stale_before=record.updated_at, dead_run_ids=frozenset({"other"}))
        outcome = await store.open_run(new_run(session_id="s1"), takeover=takeover)
        assert outcome.busy is not None and outcome.busy.run_id == holder
        assert outcome.stepped_over is None

    async def test_staleness_counts_from_the_holders_last_event(
        self, store: EventStore, clock: ManualClock
    ) -> None:
        holder = await self._open(store, session_id="s1")
        started = clock.now()
        clock.advance(30)
        await store.append(holder, [_text()])
        outcome = await store.open_run(
            new_run(session_id="s1"),
            takeover=Takeover(stale_before=started + timedelta(seconds=10)),
        )
        assert outcome.busy is not None and outcome.busy.run_id == holder

    @pytest.mark.parametrize("ending", sorted(_TERMINAL_PAYLOADS))
    async def test_a_finished_holder_frees_the_session(
        self, store: EventStore, ending: str
    ) -> None:
        holder = await self._open(store, session_id="s1")
        await store.append(holder, [_TERMINAL_PAYLOADS[ending]()])
        outcome = await store.open_run(new_run(session_id="s1"))
        assert outcome.opened and outcome.stepped_over is None

    async def test_runs_without_a_session_never_conflict(self, store: EventStore) -> None:
        for _ in range(3):
            await self._open(store)

    async def test_sessions_are_claimed_per_namespace(self, store: EventStore) -> None:
        await self._open(store, session_id="s1", namespace="tenant-a")
        await self._open(store, session_id="s1", namespace="tenant-b")
        await self._open(store, session_id="s1")
        outcome = await store.open_run(new_run(session_id="s1", namespace="tenant-a"))
        assert outcome.busy is not None

    async def test_a_key_is_claimed_for_good_even_after_its_run_finishes(
        self, store: EventStore
    ) -> None:
        holder = await self._open(store, key="order-1")
        await store.append(holder, [_completed()])
        outcome = await store.open_run(new_run(key="order-1"))
        assert not outcome.opened
        assert outcome.key_holder is not None and outcome.key_holder.run_id == holder
        assert outcome.key_holder.status is RunStatus.COMPLETED
        assert outcome.busy is None

    async def test_busy_is_reported_before_a_key_clash(self, store: EventStore) -> None:
        await self._open(store, key="order-1")
        holder = await self._open(store, session_id="s1")
        outcome = await store.open_run(new_run(session_id="s1", key="order-1"))
        assert not outcome.opened
        assert outcome.busy is not None and outcome.busy.run_id == holder

    async def test_keys_are_claimed_per_namespace(self, store: EventStore) -> None:
        a = await self._open(store, key="k", namespace="a")
        b = await self._open(store, key="k", namespace="b")
        default = await self._open(store, key="k")
        for namespace, run_id in (("a", a), ("b", b), (None, default)):
            record = await store.find_key(namespace, "k")
            assert record is not None and record.run_id == run_id
        assert await store.find_key("c", "k") is None

    async def test_a_refused_open_claims_nothing(self, store: EventStore) -> None:
        await self._open(store, key="taken")
        refused = await store.open_run(new_run(session_id="s-free", key="taken"))
        assert not refused.opened
        await self._open(store, session_id="s-free")  # the session was not claimed
        await self._open(store, session_id="s-busy")
        busy = await store.open_run(new_run(session_id="s-busy", key="k-free"))
        assert busy.busy is not None
        await self._open(store, key="k-free")  # nor was the key

    async def test_of_20_concurrent_opens_on_one_session_exactly_one_wins(
        self, store: EventStore
    ) -> None:
        news = [new_run(session_id="contended") for _ in range(20)]
        outcomes = await asyncio.gather(*(store.open_run(new) for new in news))
        winners = [
            new.run_id for new, outcome in zip(news, outcomes, strict=True) if outcome.opened
        ]
        assert len(winners) == 1
        for new, outcome in zip(news, outcomes, strict=True):
            if not outcome.opened:
                assert outcome.busy is not None and outcome.busy.run_id == winners[0]
                assert await store.get_run(new.run_id) is None

    async def test_of_20_concurrent_opens_with_one_key_exactly_one_wins(
        self, store: EventStore
    ) -> None:
        news = [new_run(key="contended") for _ in range(20)]
        outcomes = await asyncio.gather(*(store.open_run(new) for new in news))
        winners = [
            new.run_id for new, outcome in zip(news, outcomes, strict=True) if outcome.opened
        ]
        assert len(winners) == 1
        assert all(
            outcome.key_holder is not None and outcome.key_holder.run_id == winners[0]
            for outcome in outcomes
            if not outcome.opened
        )

    # =========================================================================== appending

    async def test_append_assigns_the_next_seqs_and_the_runs_identity(
        self, store: EventStore
    ) -> None:
        run_id = await self._open(store, session_id="s1", namespace="ns", parent_run_id="p")
        events = await store.append(run_id, [_text(1), _text(2)])
        assert [event.seq for event in events] == [1, 2]
        for event in events:
            assert (event.run_id, event.session_id, event.namespace) == (run_id, "s1", "ns")
            assert (event.parent_run_id, event.origin) == ("p", "agent")
        assert [event.payload for event in events] == [_text(1), _text(2)]
        assert await store.read(run_id) == [*(await store.read(run_id, limit=1)), *events]

    async def test_seq_is_gapless_under_100_concurrent_appenders(self, store: EventStore) -> None:
        run_id = await self._open(store)

        async def appender(n: int) -> list[Event]:
            return await store.append(run_id, [_text(n), _text(n)])

        batches = await asyncio.gather(*(appender(n) for n in range(100)))
        events = await store.read(run_id)
        assert [event.seq for event in events] == list(range(201))
        returned = sorted(event.seq for batch in batches for event in batch)
        assert returned == list(range(1, 201))
        for batch in batches:  # a batch lands contiguously
            assert batch[1].seq == batch[0].seq + 1
        record = await store.get_run(run_id)
        assert record is not None and record.last_seq == 200

    async def test_a_refused_batch_records_nothing(self, store: EventStore) -> None:
        run_id = await self._open(store)
        before = await store.read(run_id)
        with pytest.raises(RunStateError) as refused:
            await store.append(run_id, [_text(), _completed(), _text()])
        assert refused.value.run_id == run_id
        assert await store.read(run_id) == before
        record = await store.get_run(run_id)
        assert record is not None
        assert (record.status, record.last_seq) == (RunStatus.RUNNING, 0)
        (next_event,) = await store.append(run_id, [_text()])
        assert next_event.seq == 1

    async def test_an_empty_batch_records_nothing(self, store: EventStore) -> None:
        run_id = await self._open(store)
        assert await store.append(run_id, []) == []
        assert len(await store.read(run_id)) == 1

    @pytest.mark.parametrize("ending", sorted(_TERMINAL_PAYLOADS))
    async def test_nothing_is_appended_after_a_terminal_event(
        self, store: EventStore, ending: str
    ) -> None:
        run_id = await self._open(store)
        await store.append(run_id, [_TERMINAL_PAYLOADS[ending]()])
        status = await self._status(store, run_id)
        assert status is not None and status in TERMINAL
        for late in (_text(), RunResumed(), RunPaused(), _completed(), _cancelled()):
            with pytest.raises(RunStateError) as refused:
                await store.append(run_id, [late])
            assert refused.value.status is status
        assert len(await store.read(run_id)) == 2

    @pytest.mark.parametrize(
        ("setup", "refused_kind"),
        [
            ([], RunResumed()),
            ([RunPaused()], RunInterrupted(interrupt_id="i")),
            ([RunPaused()], _completed()),
            ([RunPaused()], RunPaused()),
            ([RunInterrupted(interrupt_id="i")], RunPaused()),
            ([RunInterrupted(interrupt_id="i")], _failed()),
        ],
        ids=lambda value: value.kind if hasattr(value, "kind") else str(len(value)),
    )
    async def test_an_undesigned_transition_is_refused_with_its_facts(
        self, store: EventStore, setup: list[Payload], refused_kind: Payload
    ) -> None:
        run_id = await self._open(store)
        await store.append(run_id, setup)
        status = await self._status(store, run_id)
        with pytest.raises(RunStateError) as refused:
            await store.append(run_id, [refused_kind])
        error = refused.value
        assert (error.run_id, error.status) == (run_id, status)
        assert status not in error.accepted
        assert await self._status(store, run_id) is status

    async def test_run_started_cannot_be_appended(self, store: EventStore) -> None:
        run_id = await self._open(store)
        with pytest.raises(RunStateError):
            await store.append(run_id, [new_run().started])

    async def test_appending_to_an_unknown_run_raises_not_found(self, store: EventStore) -> None:
        with pytest.raises(NotFoundError):
            await store.append("no-such-run", [_text()])

    async def test_an_expectation_that_holds_records_the_batch(self, store: EventStore) -> None:
        run_id = await self._open(store)
        await store.append(run_id, [RunPaused()], expect={RunStatus.RUNNING})
        events = await store.append(
            run_id, [RunResumed()], expect={RunStatus.PAUSED, RunStatus.WAITING_ANSWER}
        )
        assert [event.kind for event in events] == ["run.resumed"]

    async def test_an_expectation_that_fails_records_nothing(self, store: EventStore) -> None:
        run_id = await self._open(store)
        with pytest.raises(RunStateError) as refused:
            await store.append(run_id, [_text()], expect={RunStatus.PAUSED})
        assert refused.value.status is RunStatus.RUNNING
        assert set(refused.value.accepted) == {RunStatus.PAUSED}
        assert len(await store.read(run_id)) == 1

    async def test_of_two_concurrent_resumes_expecting_suspended_exactly_one_wins(
        self, store: EventStore
    ) -> None:
        for suspended in (RunStatus.PAUSED, RunStatus.WAITING_ANSWER):
            run_id = await self._open(store)
            await self._suspend(store, run_id, suspended)
            results = await asyncio.gather(
                *(
                    store.append(
                        run_id,
                        [AnswerRecorded(interrupt_id="q1", value=n), RunResumed()],
                        expect={RunStatus.PAUSED, RunStatus.WAITING_ANSWER},
                    )
                    if suspended is RunStatus.WAITING_ANSWER
                    else store.append(
                        run_id,
                        [RunResumed(reason=str(n))],
                        expect={RunStatus.PAUSED, RunStatus.WAITING_ANSWER},
                    )
                    for n in range(2)
                ),
                return_exceptions=True,
            )
            wins = [result for result in results if isinstance(result, list)]
            losses = [result for result in results if isinstance(result, RunStateError)]
            assert (len(wins), len(losses)) == (1, 1), results
            assert losses[0].status is RunStatus.RUNNING
            kinds = [event.kind for event in await store.read(run_id)]
            assert kinds.count("run.resumed") == 1

    async def test_expect_seq_lets_one_of_two_writers_win(self, store: EventStore) -> None:
        run_id = await self._open(store)
        (first,) = await store.append(run_id, [_text(1)], expect_seq=0)
        assert first.seq == 1
        results = await asyncio.gather(
            store.append(run_id, [_text(2)], expect_seq=1),
            store.append(run_id, [_text(3)], expect_seq=1),
            return_exceptions=True,
        )
        assert sum(isinstance(result, list) for result in results) == 1
        assert sum(isinstance(result, RunStateError) for result in results) == 1
        assert len(await store.read(run_id)) == 3
        with pytest.raises(RunStateError):
            await store.append(run_id, [_text(4)], expect_seq=0)

    async def test_events_round_trip_through_the_store(self, store: EventStore) -> None:
        run_id = await self._open(store, session_id="s", namespace="ns", parent_run_id="p")
        payloads = _every_kind()
        appended: list[Event] = []
        for payload in payloads:  # one at a time, so each lifecycle edge is checked on its own
            appended.extend(await store.append(run_id, [payload]))
        read = await store.read(run_id)
        assert read[1:] == appended
        assert [event.payload for event in read[1:]] == payloads
        for event in read:
            assert Event.from_json(event.to_json()) == event
        unknown = read[1 + next(i for i, p in enumerate(payloads) if isinstance(p, UnknownEvent))]
        assert isinstance(unknown.payload, UnknownEvent)
        assert unknown.payload.data == {"anything": {"kept": [1, "two"]}}

    # =========================================================================== status fold

    async def test_the_indexed_status_is_the_fold_of_the_log(self, store: EventStore) -> None:
        run_id = await self._open(store)
        steps: list[tuple[list[Payload], RunStatus]] = [
            ([_text()], RunStatus.RUNNING),
            ([RunPaused(reason="p")], RunStatus.PAUSED),
            ([RunResumed()], RunStatus.RUNNING),
            ([RunInterrupted(interrupt_id="a")], RunStatus.WAITING_ANSWER),
            ([RunInterrupted(interrupt_id="b")], RunStatus.WAITING_ANSWER),
            ([AnswerRecorded(interrupt_id="a", value=1)], RunStatus.WAITING_ANSWER),
            ([AnswerRecorded(interrupt_id="b", value=2), RunResumed()], RunStatus.RUNNING),
            ([_completed()], RunStatus.COMPLETED),
        ]
        for payloads, expected in steps:
            await store.append(run_id, payloads)
            log = await store.read(run_id)
            record = await store.get_run(run_id)
            assert record is not None
            assert fold_status(log) is expected
            assert record.status is expected
            assert record.last_seq == log[-1].seq
            assert record.updated_at == log[-1].ts

    async def test_open_interrupts_fold_from_the_log(self, store: EventStore) -> None:
        run_id = await self._open(store)
        await store.append(run_id, [RunInterrupted(interrupt_id="a", payload="first?")])
        await store.append(run_id, [RunInterrupted(interrupt_id="b", payload="second?")])
        state = fold(await store.read(run_id))
        assert [i.interrupt_id for i in state.interrupts] == ["a", "b"]
        assert state.pending is not None and state.pending.payload == "first?"
        await store.append(
            run_id, [AnswerRecorded(interrupt_id="a", value=1)], expect={RunStatus.WAITING_ANSWER}
        )
        state = fold(await store.read(run_id))
        assert [i.interrupt_id for i in state.interrupts] == ["b"]
        assert state.status is RunStatus.WAITING_ANSWER
        await store.append(
            run_id,
            [AnswerRecorded(interrupt_id="b", value=2), RunResumed(interrupt_id="b")],
            expect={RunStatus.WAITING_ANSWER},
        )
        state = fold(await store.read(run_id))
        assert (state.status, state.interrupts) == (RunStatus.RUNNING, ())

    async def test_wake_at_is_indexed_while_paused(
        self, store: EventStore, clock: ManualClock
    ) -> None:
        run_id = await self._open(store)
        wake = clock.now() + timedelta(minutes=5)
        await store.append(run_id, [RunPaused(reason="timer", wake_at=wake)])
        record = await store.get_run(run_id)
        assert record is not None and record.wake_at == wake
        await store.append(run_id, [RunResumed()])
        record = await store.get_run(run_id)
        assert record is not None and record.wake_at is None

    async def test_get_run_of_an_unknown_run_is_none(self, store: EventStore) -> None:
        assert await store.get_run("no-such-run") is None
        assert await store.find_key(None, "no-such-key") is None

    # =========================================================================== reading

    async def test_read_from_seq_with_limit(self, store: EventStore) -> None:
        run_id = await self._open(store)
        await store.append(run_id, [_text(n) for n in range(9)])
        assert [e.seq for e in await store.read(run_id, from_seq=4)] == list(range(4, 10))
        assert [e.seq for e in await store.read(run_id, from_seq=4, limit=3)] == [4, 5, 6]
        assert await store.read(run_id, from_seq=10) == []

    async def test_an_unknown_run_reads_as_empty(self, store: EventStore) -> None:
        assert await store.read("no-such-run") == []

    async def test_a_follower_started_before_an_append_receives_it(self, store: EventStore) -> None:
        run_id = await self._open(store)
        received: list[Event] = []
        follower = asyncio.create_task(_collect(store.follow(run_id), received))
        try:
            await _eventually(lambda: len(received) == 1, "the follower read run.started")
            (appended,) = await store.append(run_id, [_text(1)])
            await _eventually(lambda: len(received) == 2, "the follower received the append")
            assert received[1] == appended
            await store.append(run_id, [_completed()])
            await asyncio.wait_for(follower, WAIT)
            assert [event.seq for event in received] == [0, 1, 2]
        finally:
            follower.cancel()

    async def test_follow_from_a_past_seq_replays_then_tails(self, store: EventStore) -> None:
        run_id = await self._open(store)
        await store.append(run_id, [_text(n) for n in range(5)])
        received: list[Event] = []
        follower = asyncio.create_task(_collect(store.follow(run_id, from_seq=2), received))
        try:
            await _eventually(lambda: len(received) == 4, "the replay of seqs 2..5")
            await store.append(run_id, [_text(6)])
            await store.append(run_id, [_failed()])
            await asyncio.wait_for(follower, WAIT)
            assert [event.seq for event in received] == [2, 3, 4, 5, 6, 7]
            assert received == await store.read(run_id, from_seq=2)
        finally:
            follower.cancel()

    async def test_follow_ends_after_the_terminal_event(self, store: EventStore) -> None:
        run_id = await self._open(store)
        await store.append(run_id, [_text(), _cancelled()])
        received: list[Event] = []
        await asyncio.wait_for(_collect(store.follow(run_id), received), WAIT)
        assert [event.kind for event in received] == ["run.started", "text.delta", "run.cancelled"]

    async def test_follow_of_a_finished_run_from_past_its_end_ends(self, store: EventStore) -> None:
        run_id = await self._open(store)
        await store.append(run_id, [_completed()])
        received: list[Event] = []
        await asyncio.wait_for(_collect(store.follow(run_id, from_seq=5), received), WAIT)
        assert received == []

    async def test_several_followers_each_receive_every_event(self, store: EventStore) -> None:
        run_id = await self._open(store)
        streams: list[list[Event]] = [[] for _ in range(3)]
        tasks = [asyncio.create_task(_collect(store.follow(run_id), s)) for s in streams]
        try:
            await _eventually(lambda: all(len(s) == 1 for s in streams), "followers started")
            for n in range(3):
                await store.append(run_id, [_text(n)])
            await store.append(run_id, [_completed()])
            await asyncio.wait_for(asyncio.gather(*tasks), WAIT)
            expected = await store.read(run_id)
            assert all(stream == expected for stream in streams)
        finally:
            for task in tasks:
                task.cancel()

    async def test_close_ends_followers(self, store: EventStore) -> None:
        run_id = await self._open(store)
        received: list[Event] = []
        follower = asyncio.create_task(_collect(store.follow(run_id), received))
        try:
            await _eventually(lambda: len(received) == 1, "the follower started")
            await store.close()
            await asyncio.wait_for(follower, WAIT)
            await store.close()  # idempotent
        finally:
            follower.cancel()

    # =========================================================================== listing

    async def test_listing_filters_by_status(self, store: EventStore) -> None:
        running = await self._open(store)
        paused = await self._open(store)
        await store.append(paused, [RunPaused()])
        waiting = await self._open(store)
        await store.append(waiting, [RunInterrupted(interrupt_id="i")])
        done = await self._open(store)
        await store.append(done, [_completed()])
        assert await self._ids(store, RunQuery(status=RunStatus.RUNNING)) == [running]
        assert await self._ids(store, RunQuery(status=RunStatus.PAUSED)) == [paused]
        suspended = RunQuery(status=[RunStatus.PAUSED, RunStatus.WAITING_ANSWER])
        assert await self._ids(store, suspended) == [paused, waiting]
        assert await self._ids(store, RunQuery(status=TERMINAL)) == [done]
        assert await self._ids(store, RunQuery()) == [running, paused, waiting, done]

    async def test_listing_filters_by_session_name_key_and_parent(self, store: EventStore) -> None:
        a = await self._open(store, session_id="s1", name="alpha", key="k1")
        await store.append(a, [_completed()])
        b = await self._open(store, session_id="s1", name="beta", parent_run_id=a)
        c = await self._open(store, session_id="s2", name="alpha", parent_run_id=a)
        assert await self._ids(store, RunQuery(session_id="s1")) == [a, b]
        assert await self._ids(store, RunQuery(name="alpha")) == [a, c]
        assert await self._ids(store, RunQuery(key="k1")) == [a]
        assert await self._ids(store, RunQuery(parent_run_id=a)) == [b, c]
        assert await self._ids(store, RunQuery(parent_run_id=a, name="beta")) == [b]
        assert await self._ids(store, RunQuery(session_id="s1", status=RunStatus.RUNNING)) == [b]
        assert await self._ids(store, RunQuery(session_id="nobody")) == []

    async def test_listing_is_namespace_isolated(self, store: EventStore) -> None:
        plain = await self._open(store, session_id="s", key="k")
        a = await self._open(store, namespace="a", session_id="s", key="k")
        b = await self._open(store, namespace="b", session_id="s", key="k")
        assert await self._ids(store, RunQuery()) == [plain]
        assert await self._ids(store, RunQuery(namespace="a")) == [a]
        assert await self._ids(store, RunQuery(namespace="a", session_id="s")) == [a]
        assert await self._ids(store, RunQuery(namespace="b", key="k")) == [b]
        assert await self._ids(store, RunQuery(namespace="c")) == []
        assert await self._ids(store, RunQuery(all_namespaces=True)) == [plain, a, b]
        assert await self._ids(store, RunQuery(all_namespaces=True, session_id="s")) == [
            plain,
            a,
            b,
        ]

    async def test_listing_pages_oldest_first_with_a_cursor(
        self, store: EventStore, clock: ManualClock
    ) -> None:
        opened = []
        for n in range(25):
            if n % 2:
                clock.advance(1)  # some runs share a creation time: pages must still be exact
            opened.append(await self._open(store, namespace="paged"))
        seen: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            page = await store.list_runs(RunQuery(namespace="paged", limit=10, cursor=cursor))
            pages += 1
            assert len(page.runs) == (10 if page.next_cursor else 5)
            seen.extend(record.run_id for record in page.runs)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert pages == 3
        assert seen == opened

    async def test_listing_pages_newest_first_with_a_cursor(
        self, store: EventStore, clock: ManualClock
    ) -> None:
        opened = []
        for n in range(25):
            if n % 2:
                clock.advance(1)
            opened.append(await self._open(store, namespace="newest"))
        seen: list[str] = []
        cursor: str | None = None
        while True:
            page = await store.list_runs(
                RunQuery(namespace="newest", limit=10, cursor=cursor, newest_first=True)
            )
            assert len(page.runs) == (10 if page.next_cursor else 5)
            seen.extend(record.run_id for record in page.runs)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert seen == opened[::-1]
        # Filters apply as they do oldest first; the newest matching run leads.
        await store.append(opened[3], [RunCompleted()])
        await store.append(opened[20], [RunCompleted()])
        done = await store.list_runs(
            RunQuery(namespace="newest", status=RunStatus.COMPLETED, newest_first=True)
        )
        assert [r.run_id for r in done.runs] == [opened[20], opened[3]]
        one = await store.list_runs(
            RunQuery(namespace="newest", status=RunStatus.COMPLETED, newest_first=True, limit=1)
        )
        assert [r.run_id for r in one.runs] == [opened[20]] and one.next_cursor is not None
        rest = await store.list_runs(
            RunQuery(
                namespace="newest",
                status=RunStatus.COMPLETED,
                newest_first=True,
                limit=1,
                cursor=one.next_cursor,
            )
        )
        assert [r.run_id for r in rest.runs] == [opened[3]] and rest.next_cursor is None

    async def test_a_page_filled_exactly_reports_no_further_page(self, store: EventStore) -> None:
        for _ in range(4):
            await self._open(store, namespace="exact")
        page = await store.list_runs(RunQuery(namespace="exact", limit=4))
        assert len(page.runs) == 4 and page.next_cursor is None

    async def test_listing_stays_exact_while_runs_change_status(self, store: EventStore) -> None:
        runs = [await self._open(store) for _ in range(6)]
        first = await store.list_runs(RunQuery(status=RunStatus.RUNNING, limit=3))
        await store.append(runs[1], [RunPaused()])
        await store.append(runs[4], [RunPaused()])
        rest = await store.list_runs(
            RunQuery(status=RunStatus.RUNNING, limit=3, cursor=first.next_cursor)
        )
        assert [r.run_id for r in first.runs] == runs[:3]
        assert [r.run_id for r in rest.runs] == [runs[3], runs[5]]

    async def test_listing_filters_by_time(self, store: EventStore, clock: ManualClock) -> None:
        t0 = clock.now()
        early = await self._open(store)
        clock.advance(10)
        late = await self._open(store)
        clock.advance(10)
        await store.append(late, [RunPaused(wake_at=t0 + timedelta(seconds=100))])
        timer = await self._open(store)
        await store.append(timer, [RunPaused(wake_at=t0 + timedelta(seconds=50))])
        assert await self._ids(store, RunQuery(created_after=t0)) == [late, timer]
        assert await self._ids(store, RunQuery(created_before=t0 + timedelta(seconds=10))) == [
            early
        ]
        assert await self._ids(store, RunQuery(updated_before=t0 + timedelta(seconds=20))) == [
            early
        ]
        due = RunQuery(wake_before=t0 + timedelta(seconds=60))
        assert await self._ids(store, due) == [timer]
        everything_due = RunQuery(wake_before=t0 + timedelta(seconds=101))
        assert await self._ids(store, everything_due) == [late, timer]

    async def test_listing_a_few_waiting_runs_among_many(self, store: EventStore) -> None:
        waiting = []
        for n in range(300):
            run_id = await self._open(store, namespace="crowd")
            if n % 30 == 7:
                await store.append(run_id, [RunInterrupted(interrupt_id="q")])
                waiting.append(run_id)
        page = await store.list_runs(
            RunQuery(namespace="crowd", status=RunStatus.WAITING_ANSWER, limit=100)
        )
        assert [record.run_id for record in page.runs] == waiting
        assert all(record.status is RunStatus.WAITING_ANSWER for record in page.runs)

    # =========================================================================== pruning

    async def test_prune_deletes_only_finished_runs_with_everything_they_hold(
        self, store: EventStore
    ) -> None:
        live = await self._open(store, session_id="s-live", key="k-live")
        parked = await self._open(store, key="k-parked")
        await store.append(parked, [RunPaused()])
        done = await self._open(store, session_id="s-done", key="k-done")
        await store.append(done, [_text(), _completed()])
        await store.put_state(done, "journal", b"x")
        await store.put_state(live, "journal", b"y")
        assert await store.prune(PruneQuery()) == 1
        assert await store.get_run(done) is None
        assert await store.read(done) == []
        assert await store.find_key(None, "k-done") is None
        assert await store.get_state(done, "journal") is None
        assert await self._ids(store, RunQuery(session_id="s-done")) == []
        assert await self._ids(store, RunQuery()) == [live, parked]
        assert await store.get_state(live, "journal") == b"y"
        await self._open(store, key="k-done")  # the key is free again
        await self._open(store, session_id="s-done")

    async def test_prune_honours_namespace_statuses_age_and_limit(
        self, store: EventStore, clock: ManualClock
    ) -> None:
        old = [await self._open(store, namespace="p") for _ in range(3)]
        for run_id in old:
            await store.append(run_id, [_completed()])
        clock.advance(100)
        cutoff = clock.now()
        failed = await self._open(store, namespace="p")
        await store.append(failed, [_failed()])
        other = await self._open(store, namespace="q")
        await store.append(other, [_completed()])
        everywhere = PruneQuery(namespace="p", finished_before=cutoff, limit=2)
        assert await store.prune(everywhere) == 2
        assert await self._ids(store, RunQuery(namespace="p")) == [old[2], failed]
        only_failed = PruneQuery(namespace="p", statuses=frozenset({RunStatus.FAILED}))
        assert await store.prune(only_failed) == 1
        assert await self._ids(store, RunQuery(namespace="p")) == [old[2]]
        not_terminal = PruneQuery(all_namespaces=True, statuses=frozenset({RunStatus.RUNNING}))
        assert await store.prune(not_terminal) == 0
        assert await store.prune(PruneQuery(all_namespaces=True)) == 2
        assert await self._ids(store, RunQuery(all_namespaces=True)) == []

    # =========================================================================== engine state

    async def test_engine_state_is_put_replaced_read_and_deleted(self, store: EventStore) -> None:
        run_id = await self._open(store)
        other = await self._open(store)
        assert await store.get_state(run_id, "journal") is None
        await store.put_state(run_id, "journal", b"\x00one")
        await store.put_state(run_id, "journal", b"\x00two")
        await store.put_state(run_id, "approvals", b"")
        await store.put_state(other, "journal", b"theirs")
        assert await store.get_state(run_id, "journal") == b"\x00two"
        assert await store.get_state(run_id, "approvals") == b""
        await store.delete_state(run_id, "journal")
        await store.delete_state(run_id, "journal")  # deleting what is gone is a no-op
        assert await store.get_state(run_id, "journal") is None
        assert await store.get_state(other, "journal") == b"theirs"

    async def test_engine_state_holds_larger_blobs(self, store: EventStore) -> None:
        run_id = await self._open(store)
        blob = bytes(range(256)) * 4096  # 1 MiB, every byte value
        await store.put_state(run_id, "checkpoint", blob)
        assert await store.get_state(run_id, "checkpoint") == blob

    # =========================================================================== capabilities

    async def test_a_durable_store_keeps_runs_across_close_and_reopen(
        self, store: EventStore, reopen_store: ReopenStore
    ) -> None:
        if not self.durable:
            pytest.skip("the store is not declared durable")
        run_id = await self._open(store, session_id="s", key="k")
        await store.append(run_id, [_text(), RunPaused()])
        await store.put_state(run_id, "journal", b"j")
        events = await store.read(run_id)
        await store.close()
        again = await reopen_store()
        try:
            assert await again.read(run_id) == events
            record = await again.get_run(run_id)
            assert record is not None and record.status is RunStatus.PAUSED
            assert await again.get_state(run_id, "journal") == b"j"
            assert (await again.open_run(new_run(session_id="s"))).busy is not None
            assert (await again.open_run(new_run(key="k"))).key_holder is not None
            (resumed,) = await again.append(run_id, [RunResumed()])
            assert resumed.seq == 3
        finally:
            await again.close()

    async def test_shared_stores_see_each_others_runs(
        self, store: EventStore, reopen_store: ReopenStore
    ) -> None:
        if not self.shared:
            pytest.skip("the store is not declared shared")
        other = await reopen_store()
        try:
            run_id = await self._open(store, session_id="s", key="k")
            record = await other.get_run(run_id)
            assert record is not None and record.status is RunStatus.RUNNING
            assert (await other.open_run(new_run(session_id="s"))).busy is not None
            assert (await other.open_run(new_run(key="k"))).key_holder is not None
            await other.append(run_id, [_text()])
            assert len(await store.read(run_id)) == 2
        finally:
            await other.close()

    async def test_a_follower_on_one_shared_store_is_woken_by_an_append_on_another(
        self, store: EventStore, reopen_store: ReopenStore
    ) -> None:
        if not self.shared:
            pytest.skip("the store is not declared shared")
        other = await reopen_store()
        received: list[Event] = []
        run_id = await self._open(store)
        follower = asyncio.create_task(_collect(other.follow(run_id), received))
        try:
            await _eventually(lambda: len(received) == 1, "the follower started")
            await store.append(run_id, [_text()])
            await _eventually(lambda: len(received) == 2, "the other store's append arrived")
            await store.append(run_id, [_completed()])
            await asyncio.wait_for(follower, WAIT)
        finally:
            follower.cancel()
            await other.close()

    async def test_concurrent_opens_across_shared_stores_have_one_winner(
        self, store: EventStore, reopen_store: ReopenStore
    ) -> None:
        if not self.shared:
            pytest.skip("the store is not declared shared")
        others = [await reopen_store() for _ in range(3)]
        try:
            handles: Sequence[EventStore] = [store, *others]
            news = [new_run(session_id="contended") for _ in range(12)]
            outcomes = await asyncio.gather(
                *(handles[n % len(handles)].open_run(new) for n, new in enumerate(news))
            )
            assert sum(outcome.opened for outcome in outcomes) == 1
        finally:
            for other in others:
                await other.close()
