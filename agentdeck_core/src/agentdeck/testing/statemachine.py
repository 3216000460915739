"""A Hypothesis state machine that drives random run histories through an event store.

It opens runs on a few sessions, keys and namespaces, appends content, pauses, interrupts,
answers (twice, sometimes), resumes, cancels, completes and fails them — with and without
``expect`` — races resumes, steps over stale or dead holders, appends after the end and prunes.
After every step it checks the store against a reference model written from the reference
behaviour (not from :mod:`agentdeck.model.status`, which it is checking):

* every run's log is gapless from seq 0, as long as the model says, stamped by the store clock;
* the fold of ``read()`` and ``get_run().status`` both equal the model's status, and the folded
  open interrupts equal the model's;
* listing by status, namespace and session (paged through small pages) and ``find_key`` match
  the model exactly;
* an operation the model refuses recorded nothing, and open outcomes (opened, busy, key clash,
  stepped over) are the ones the rules give.

Bind it to a store with :func:`make_store_state_machine`::

    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def my_store(clock):
        store = MyStore.from_request(BackendRequest(url=fresh_isolated_url(), clock=clock))
        await store.open()
        try:
            yield store
        finally:
            await store.close()

    TestMyStoreMachine = make_store_state_machine(my_store)

The factory gets the machine's :class:`~agentdeck.model.clock.ManualClock` and returns either an
async context manager yielding an opened, empty store, or an awaitable of one (which the
machine closes). It is called once per example, so each must start empty. Settings (examples,
deadline) come from the active Hypothesis profile.
"""

from __future__ import annotations

import asyncio
import itertools
import unittest
from collections.abc import Awaitable, Callable, Collection
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, ClassVar, TypeVar

from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from agentdeck.errors import NotFoundError, RunStateError
from agentdeck.model.clock import ManualClock
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    AnswerRecorded,
    Payload,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunPaused,
    RunResumed,
    TextDelta,
)
from agentdeck.model.status import fold
from agentdeck.ports import EventStore, OpenOutcome, PruneQuery, RunQuery, Takeover
from agentdeck.testing.store_kit import new_run
from agentdeck.vocabulary import ErrorCode, RunStatus

__all__ = ["StoreFactory", "StoreStateMachine", "make_store_state_machine"]

StoreFactory = Callable[
    [ManualClock], AbstractAsyncContextManager[EventStore] | Awaitable[EventStore]
]
"""Builds one opened, empty store on the given clock (see the module docstring)."""

_T = TypeVar("_T")

NAMESPACES: tuple[str | None, ...] = (None, "tenant")
SESSIONS: tuple[str | None, ...] = (None, "s1", "s2")
KEYS: tuple[str | None, ...] = (None, None, "k1", "k2")
MAX_RUNS = 14
PAGE = 3

RUNNING, PAUSED, WAITING = RunStatus.RUNNING, RunStatus.PAUSED, RunStatus.WAITING_ANSWER
COMPLETED, FAILED, CANCELLED = RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED
LIVE = frozenset({RUNNING, PAUSED, WAITING})
SUSPENDED = frozenset({PAUSED, WAITING})

# The designed lifecycle edges, as the reference behaviour states them (kind -> next status).
EDGES: dict[RunStatus, dict[str, RunStatus]] = {
    RUNNING: {
        "run.paused": PAUSED,
        "run.interrupted": WAITING,
        "run.completed": COMPLETED,
        "run.failed": FAILED,
        "run.cancelled": CANCELLED,
    },
    PAUSED: {"run.resumed": RUNNING, "run.cancelled": CANCELLED},
    WAITING: {"run.resumed": RUNNING, "run.cancelled": CANCELLED, "run.interrupted": WAITING},
}


# =========================================================================== the reference model


@dataclass
class ModelRun:
    run_id: str
    namespace: str | None
    session_id: str | None
    key: str | None
    status: RunStatus
    last_ts: datetime
    count: int = 1
    interrupts: list[str] = field(default_factory=list)
    wake_at: datetime | None = None


@dataclass
class Model:
    runs: dict[str, ModelRun] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    """Every run id ever opened, including pruned ones (appends to those must be refused)."""
    sessions: dict[tuple[str | None, str], str] = field(default_factory=dict)
    keys: dict[tuple[str | None, str], str] = field(default_factory=dict)

    def apply(self, run: ModelRun, payloads: list[Payload], now: datetime) -> bool:
        """Apply a batch to ``run`` if every event in it is legal; whether it was."""
        status, interrupts, wake_at = run.status, list(run.interrupts), run.wake_at
        for payload in payloads:
            if status not in LIVE:
                return False
            kind = payload.kind
            if kind.startswith("run."):
                edges = EDGES[status]
                if kind not in edges:
                    return False
                status = edges[kind]
                if isinstance(payload, RunInterrupted):
                    if payload.interrupt_id not in interrupts:
                        interrupts.append(payload.interrupt_id)
                    wake_at = None
                else:
                    interrupts = []
                    wake_at = payload.wake_at if isinstance(payload, RunPaused) else None
            elif isinstance(payload, AnswerRecorded) and status is WAITING:
                interrupts = [i for i in interrupts if i != payload.interrupt_id]
        run.status, run.interrupts, run.wake_at = status, interrupts, wake_at
        run.count += len(payloads)
        if payloads:
            run.last_ts = now
        return True


# =========================================================================== the machine


class StoreStateMachine(RuleBasedStateMachine):
    """Random run histories against one store; bind a store with :func:`make_store_state_machine`.

    Hypothesis rules are synchronous and the store is async, so the machine owns an event loop
    (made in ``__init__``, closed in :meth:`teardown`) and runs each rule's coroutine on it.
    """

    factory: ClassVar[StoreFactory]

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = ManualClock()
        self.model = Model()
        self.ids = itertools.count()
        self._context: AbstractAsyncContextManager[EventStore] | None = None
        self.store = self.run(self._open_store())

    async def _open_store(self) -> EventStore:
        made = type(self).factory(self.clock)
        if isinstance(made, AbstractAsyncContextManager):
            self._context = made
            return await made.__aenter__()
        return await made

    def run(self, awaitable: Awaitable[_T]) -> _T:
        async def wrapped() -> _T:
            return await awaitable

        return self.loop.run_until_complete(wrapped())

    def teardown(self) -> None:
        try:
            if self._context is not None:
                self.run(self._context.__aexit__(None, None, None))
            else:
                self.run(self.store.close())
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        finally:
            self.loop.close()

    # -- helpers ------------------------------------------------------------------------------

    def pick(self, index: int) -> str:
        return self.model.order[index % len(self.model.order)]

    def append(
        self,
        run_id: str,
        payloads: list[Payload],
        expect: Collection[RunStatus] | None = None,
        expect_seq: int | None = None,
    ) -> None:
        """Append through the store and the model alike, and check they agree on the verdict."""
        run = self.model.runs.get(run_id)
        try:
            recorded = self.run(
                self.store.append(run_id, payloads, expect=expect, expect_seq=expect_seq)
            )
        except NotFoundError:
            assert run is None, f"store lost run {run_id}"
            return
        except RunStateError as refused:
            assert run is not None, f"an unknown run {run_id} raised RunStateError, not NotFound"
            assert refused.run_id == run_id
            assert refused.status is run.status, (refused.status, run.status)
            expected_ok = (
                (expect is None or run.status in expect)
                and (expect_seq is None or expect_seq == run.count - 1)
                and self.model.apply(
                    replace(run, interrupts=list(run.interrupts)), payloads, self.clock.now()
                )
            )
            assert not expected_ok, f"store refused {[p.kind for p in payloads]} on {run.status}"
            return
        assert run is not None, f"store appended to unknown run {run_id}"
        assert expect is None or run.status in expect, f"{run.status} not in expect {expect}"
        assert expect_seq is None or expect_seq == run.count - 1, (expect_seq, run.count - 1)
        before = run.count
        assert self.model.apply(run, payloads, self.clock.now()), (
            f"store accepted {[p.kind for p in payloads]} from {run.status}"
        )
        assert [event.seq for event in recorded] == list(range(before, run.count))
        assert [event.payload for event in recorded] == payloads

    # -- rules: opening -----------------------------------------------------------------------

    @initialize(namespace=st.sampled_from(NAMESPACES), session=st.sampled_from(SESSIONS))
    def first_run(self, namespace: str | None, session: str | None) -> None:
        """Every history starts with one run, so the rules that need one are enabled."""
        self.open_run(namespace, session, None, "none", 1.0)

    @precondition(lambda self: len(self.model.order) < MAX_RUNS)
    @rule(
        namespace=st.sampled_from(NAMESPACES),
        session=st.sampled_from(SESSIONS),
        key=st.sampled_from(KEYS),
        takeover=st.sampled_from(["none", "none", "dead", "stale"]),
        stale_for=st.sampled_from([1.0, 30.0]),
    )
    def open_run(
        self,
        namespace: str | None,
        session: str | None,
        key: str | None,
        takeover: str,
        stale_for: float,
    ) -> None:
        model = self.model
        holder = model.runs.get(model.sessions.get((namespace, session), "")) if session else None
        if holder is not None and holder.status not in LIVE:
            holder = None
        stale_before = self.clock.now() - timedelta(seconds=stale_for)
        how: Takeover | None = None
        if takeover == "dead":
            how = Takeover(dead_run_ids=frozenset({holder.run_id if holder else "nobody"}))
        elif takeover == "stale":
            how = Takeover(stale_before=stale_before)
        steps_over = (
            holder is not None
            and holder.status is RUNNING
            and (takeover == "dead" or (takeover == "stale" and holder.last_ts < stale_before))
        )
        busy = holder is not None and not steps_over
        clash = model.keys.get((namespace, key)) if key is not None else None

        new = new_run(
            run_id=f"run-{next(self.ids)}", session_id=session, namespace=namespace, key=key
        )
        outcome: OpenOutcome = self.run(self.store.open_run(new, takeover=how))
        if busy:
            assert holder is not None
            assert not outcome.opened and outcome.busy is not None, outcome
            assert outcome.busy.run_id == holder.run_id
            assert outcome.busy.status is holder.status
            assert outcome.stepped_over is None
            return
        if clash is not None:
            assert not outcome.opened and outcome.key_holder is not None, outcome
            assert outcome.key_holder.run_id == clash
            assert outcome.stepped_over is None
            return
        assert outcome.opened and outcome.event is not None, outcome
        assert outcome.event.seq == 0 and outcome.event.ts == self.clock.now()
        run = ModelRun(new.run_id, namespace, session, key, RUNNING, self.clock.now())
        model.runs[run.run_id] = run
        model.order.append(run.run_id)
        if session is not None:
            model.sessions[(namespace, session)] = run.run_id
        if key is not None:
            model.keys[(namespace, key)] = run.run_id
        if steps_over:
            assert holder is not None
            assert outcome.stepped_over is not None, outcome
            assert outcome.stepped_over.run_id == holder.run_id
            # What the runtime does next: close the displaced run in its own name.
            failed = RunFailed(
                error_code=ErrorCode.CANCELLED_HARD, message=f"taken over by run {run.run_id}"
            )
            self.append(holder.run_id, [failed], expect={RUNNING})
        else:
            assert outcome.stepped_over is None, outcome

    @rule(seconds=st.sampled_from([0.5, 5.0, 60.0]))
    def tick(self, seconds: float) -> None:
        self.clock.advance(seconds)

    # -- rules: appending ---------------------------------------------------------------------

    @precondition(lambda self: self.model.order)
    @rule(
        index=st.integers(0, MAX_RUNS),
        size=st.integers(1, 3),
        expect=st.none() | st.frozensets(st.sampled_from(list(RunStatus)), max_size=3),
    )
    def append_content(self, index: int, size: int, expect: frozenset[RunStatus] | None) -> None:
        payloads: list[Payload] = [TextDelta(message_id="m", text=str(n)) for n in range(size)]
        self.append(self.pick(index), payloads, expect)

    @precondition(lambda self: self.model.order)
    @rule(index=st.integers(0, MAX_RUNS), behind=st.sampled_from([0, 0, 1]))
    def append_at_seq(self, index: int, behind: int) -> None:
        """An optimistic append: recorded only if the writer saw the run's last seq."""
        run_id = self.pick(index)
        run = self.model.runs.get(run_id)
        seen = (run.count - 1 if run is not None else 0) - behind
        self.append(run_id, [TextDelta(message_id="m", text="seq")], expect_seq=seen)

    @precondition(lambda self: self.model.order)
    @rule(
        index=st.integers(0, MAX_RUNS),
        kind=st.sampled_from(
            ["pause", "timer", "interrupt", "resume", "cancel", "complete", "fail"]
        ),
        guarded=st.booleans(),
    )
    def lifecycle(self, index: int, kind: str, guarded: bool) -> None:
        """A lifecycle event, with the ``expect`` the runtime would use or none at all."""
        run_id = self.pick(index)
        payload: Payload
        expect: frozenset[RunStatus] | None
        match kind:
            case "pause":
                payload, expect = RunPaused(reason="p"), frozenset({RUNNING})
            case "timer":
                wake = self.clock.now() + timedelta(minutes=1)
                payload, expect = RunPaused(reason="t", wake_at=wake), frozenset({RUNNING})
            case "interrupt":
                iid = f"q{next(self.ids)}"
                payload, expect = RunInterrupted(interrupt_id=iid), frozenset({RUNNING, WAITING})
            case "resume":
                payload, expect = RunResumed(), SUSPENDED
            case "cancel":
                payload, expect = RunCancelled(reason="c"), LIVE
            case "complete":
                payload, expect = RunCompleted(), frozenset({RUNNING})
            case _:
                payload = RunFailed(error_code=ErrorCode.ENGINE_ERROR, message="f")
                expect = frozenset({RUNNING})
        self.append(run_id, [payload], expect if guarded else None)

    @precondition(lambda self: self.model.order)
    @rule(index=st.integers(0, MAX_RUNS), which=st.integers(0, 3), guarded=st.booleans())
    def answer(self, index: int, which: int, guarded: bool) -> None:
        """Answer an open interrupt (resuming when it was the last), or one already answered."""
        run_id = self.pick(index)
        run = self.model.runs.get(run_id)
        open_ids = list(run.interrupts) if run is not None else []
        candidates = [*open_ids, "q-answered-before"]
        iid = candidates[which % len(candidates)]
        payloads: list[Payload] = [AnswerRecorded(interrupt_id=iid, value=which)]
        if iid in open_ids and len(open_ids) == 1:
            payloads.append(RunResumed(interrupt_id=iid))
        self.append(run_id, payloads, frozenset({WAITING}) if guarded else None)

    @precondition(lambda self: self.model.order)
    @rule(index=st.integers(0, MAX_RUNS))
    def racing_resumes(self, index: int) -> None:
        """Two resumes expecting a suspended run, at once: exactly one wins if it was."""
        run_id = self.pick(index)
        run = self.model.runs.get(run_id)

        async def race() -> list[list[Event] | BaseException]:
            return await asyncio.gather(
                *(self.store.append(run_id, [RunResumed()], expect=SUSPENDED) for _ in range(2)),
                return_exceptions=True,
            )

        results = self.run(race())
        wins = [r for r in results if isinstance(r, list)]
        if run is None:
            assert all(isinstance(r, NotFoundError) for r in results), results
            return
        if run.status in SUSPENDED:
            assert len(wins) == 1, results
            assert any(isinstance(r, RunStateError) for r in results), results
            assert self.model.apply(run, [RunResumed()], self.clock.now())
        else:
            assert not wins, results
            assert all(isinstance(r, RunStateError) for r in results), results

    @precondition(lambda self: self.model.order)
    @rule(index=st.integers(0, MAX_RUNS), ending=st.sampled_from(["complete", "cancel"]))
    def batch_with_an_illegal_tail(self, index: int, ending: str) -> None:
        """A batch that ends the run and then says more: refused whole, recording nothing."""
        end: Payload = RunCompleted() if ending == "complete" else RunCancelled()
        self.append(
            self.pick(index),
            [TextDelta(message_id="m", text="a"), end, TextDelta(message_id="m", text="b")],
        )

    @rule(namespace=st.sampled_from((*NAMESPACES, "*")))
    def prune(self, namespace: str | None) -> None:
        everywhere = namespace == "*"
        query = PruneQuery(namespace=None if everywhere else namespace, all_namespaces=everywhere)
        removed = self.run(self.store.prune(query))
        model = self.model
        doomed = [
            run
            for run in model.runs.values()
            if run.status not in LIVE and (everywhere or run.namespace == namespace)
        ]
        assert removed == len(doomed), (removed, [run.run_id for run in doomed])
        for run in doomed:
            del model.runs[run.run_id]
            if run.key is not None and model.keys.get((run.namespace, run.key)) == run.run_id:
                del model.keys[(run.namespace, run.key)]
            if (
                run.session_id is not None
                and model.sessions.get((run.namespace, run.session_id)) == run.run_id
            ):
                del model.sessions[(run.namespace, run.session_id)]

    # -- the check after every step -----------------------------------------------------------

    @invariant()
    def store_agrees_with_the_model(self) -> None:
        self.run(self._check())

    async def _check(self) -> None:
        store, model = self.store, self.model
        for run_id in model.order:
            run = model.runs.get(run_id)
            events = await store.read(run_id)
            record = await store.get_run(run_id)
            if run is None:
                assert events == [] and record is None, f"pruned run {run_id} is still there"
                continue
            assert [event.seq for event in events] == list(range(run.count)), run_id
            state = fold(events)
            assert state.status is run.status, (run_id, state.status, run.status)
            assert [i.interrupt_id for i in state.interrupts] == run.interrupts, run_id
            assert record is not None, run_id
            assert record.status is run.status, (run_id, record.status, run.status)
            assert record.last_seq == run.count - 1
            assert record.updated_at == events[-1].ts == run.last_ts
            assert record.wake_at == run.wake_at
            assert (record.namespace, record.session_id, record.key) == (
                run.namespace,
                run.session_id,
                run.key,
            )
        for namespace in NAMESPACES:
            in_namespace = [
                r
                for r in (model.runs[i] for i in model.order if i in model.runs)
                if r.namespace == namespace
            ]
            assert await self._list(RunQuery(namespace=namespace)) == [
                r.run_id for r in in_namespace
            ]
            for status in RunStatus:
                listed = await self._list(RunQuery(namespace=namespace, status=status))
                assert listed == [r.run_id for r in in_namespace if r.status is status], status
            suspended = await self._list(RunQuery(namespace=namespace, status=SUSPENDED))
            assert suspended == [r.run_id for r in in_namespace if r.status in SUSPENDED]
            for session in SESSIONS:
                if session is None:
                    continue
                listed = await self._list(RunQuery(namespace=namespace, session_id=session))
                assert listed == [r.run_id for r in in_namespace if r.session_id == session]
            for key in {k for k in KEYS if k is not None}:
                found = await store.find_key(namespace, key)
                claimed = model.keys.get((namespace, key))
                assert (found.run_id if found is not None else None) == claimed, (namespace, key)

    async def _list(self, query: RunQuery) -> list[str]:
        listed: list[str] = []
        cursor: str | None = None
        while True:
            page = await self.store.list_runs(replace(query, limit=PAGE, cursor=cursor))
            listed.extend(record.run_id for record in page.runs)
            if page.next_cursor is None:
                return listed
            cursor = page.next_cursor


def make_store_state_machine(
    factory: StoreFactory, *, name: str = "StoreStateMachine"
) -> type[unittest.TestCase]:
    """A ``TestCase`` that runs :class:`StoreStateMachine` against stores from ``factory``.

    Assign it to a module-level name starting with ``Test`` so pytest collects it.
    """
    machine: Any = type(name, (StoreStateMachine,), {"factory": staticmethod(factory)})
    test_case: type[unittest.TestCase] = machine.TestCase
    return test_case
