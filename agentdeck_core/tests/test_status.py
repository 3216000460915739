"""Run status as a pure fold, and the operation table, against ``reference-behaviour.md``.

The expected tables here are written out independently from the reference (not derived from
``agentdeck.model.status``), so a change to either side shows up as a failing cell.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    AnswerRecorded,
    AnswerShape,
    ControlObserved,
    ControlRequested,
    Report,
    RunCancelled,
    RunClaimed,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunPaused,
    RunQueued,
    RunResumed,
    RunStarted,
    TextDelta,
    UnknownEvent,
)
from agentdeck.model.status import (
    OPERATIONS,
    TRANSITIONS,
    OpenInterrupt,
    Operation,
    RunState,
    Verdict,
    apply,
    fold,
    fold_status,
    is_transition_allowed,
    next_status,
    operation_verdict,
)
from agentdeck.testing import event_examples as ex
from agentdeck.vocabulary import SUSPENDED, TERMINAL, RunStatus

TS = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)
RUNNING, PAUSED, WAITING = RunStatus.RUNNING, RunStatus.PAUSED, RunStatus.WAITING_ANSWER
QUEUED = RunStatus.QUEUED
COMPLETED, FAILED, CANCELLED = RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED
ALL_STATUSES: list[RunStatus | None] = [None, *RunStatus]
TERMINALS = [COMPLETED, FAILED, CANCELLED]

# --------------------------------------------------------------------------- expected (reference)

LIFECYCLE: dict[str, Any] = {
    "run.started": RunStarted(name="Greeter", invocable_kind="agent"),
    "run.resumed": RunResumed(reason="go on"),
    "run.queued": RunQueued(execution="temporal"),
    "run.claimed": RunClaimed(worker="worker-1"),
    "run.paused": RunPaused(reason="operator"),
    "run.interrupted": RunInterrupted(interrupt_id="q-1", payload={"ask": "ok?"}),
    "run.completed": RunCompleted(),
    "run.failed": RunFailed(error_code="engine_error", message="RuntimeError"),
    "run.cancelled": RunCancelled(reason="user"),
}
"""One payload per lifecycle kind (the kinds that set the status)."""

EXPECTED_EDGES: dict[RunStatus | None, dict[str, RunStatus]] = {
    # A run with no lifecycle event has no status; only run.started gives it one.
    None: {"run.started": RUNNING},
    # Designed edges: running -> paused | waiting_answer | completed | failed | cancelled, and
    # (ours: an execution that queues runs for workers) queued, right after it is opened.
    RUNNING: {
        "run.queued": QUEUED,
        "run.paused": PAUSED,
        "run.interrupted": WAITING,
        "run.completed": COMPLETED,
        "run.failed": FAILED,
        "run.cancelled": CANCELLED,
    },
    # Ours: queued -> running when a worker claims it | cancelled | failed (not handed over).
    QUEUED: {"run.claimed": RUNNING, "run.cancelled": CANCELLED, "run.failed": FAILED},
    # paused -> running | cancelled.
    PAUSED: {"run.resumed": RUNNING, "run.cancelled": CANCELLED},
    # waiting_answer -> running | cancelled, and (ours: several questions open at once) another
    # run.interrupted keeps it waiting.
    WAITING: {"run.resumed": RUNNING, "run.cancelled": CANCELLED, "run.interrupted": WAITING},
    # Ours refuse every further lifecycle event after any terminal one.
    COMPLETED: {},
    FAILED: {},
    CANCELLED: {},
}

N, A, R, P, C = (
    Operation.NEW_RUN_ON_SESSION,
    Operation.ANSWER,
    Operation.RESUME,
    Operation.PAUSE,
    Operation.CANCEL,
)
LEGAL, NOOP, REFUSED = Verdict.LEGAL, Verdict.NOOP, Verdict.REFUSED
_TERMINAL_ROW: dict[Operation, tuple[Verdict, str | None]] = {
    N: (LEGAL, None),
    A: (NOOP, None),
    R: (NOOP, None),
    P: (NOOP, None),
    C: (NOOP, None),
}
EXPECTED_OPERATIONS: dict[RunStatus, dict[Operation, tuple[Verdict, str | None]]] = {
    # Ours: queued is a running run no worker plays yet -- as running, except a cancel ends it
    # at once.
    QUEUED: {
        N: (REFUSED, None),
        A: (REFUSED, None),
        R: (NOOP, None),
        P: (LEGAL, None),
        C: (LEGAL, None),
    },
    # | running | refused (busy) | refused | no-op | legal | legal |
    RUNNING: {
        N: (REFUSED, None),
        A: (REFUSED, None),
        R: (NOOP, None),
        P: (LEGAL, None),
        C: (LEGAL, None),
    },
    # | paused | refused | refused (says use resume) | legal | no-op | legal, ends it at once |
    PAUSED: {
        N: (REFUSED, "resume"),
        A: (REFUSED, "resume"),
        R: (LEGAL, None),
        P: (NOOP, None),
        C: (LEGAL, None),
    },
    # | waiting_answer | refused | legal | refused (error says use answer) | legal | legal |
    WAITING: {
        N: (REFUSED, "answer"),
        A: (LEGAL, None),
        R: (REFUSED, "answer"),
        P: (LEGAL, None),
        C: (LEGAL, None),
    },
    # | terminal | legal | no-op | no-op | no-op | no-op |
    COMPLETED: _TERMINAL_ROW,
    FAILED: _TERMINAL_ROW,
    CANCELLED: _TERMINAL_ROW,
}
"""The reference's operation table, cell by cell: (verdict, the call a refusal points to)."""

# --------------------------------------------------------------------------- helpers


def events(*payloads: Any, start: int = 0) -> list[Event]:
    return [
        Event.record(p, seq=start + i, run_id="run-1", ts=TS + timedelta(seconds=start + i))
        for i, p in enumerate(payloads)
    ]


PATH_TO: dict[RunStatus | None, list[str]] = {
    None: [],
    RUNNING: ["run.started"],
    QUEUED: ["run.started", "run.queued"],
    PAUSED: ["run.started", "run.paused"],
    WAITING: ["run.started", "run.interrupted"],
    COMPLETED: ["run.started", "run.completed"],
    FAILED: ["run.started", "run.failed"],
    CANCELLED: ["run.started", "run.cancelled"],
}


def state_in(status: RunStatus | None) -> RunState:
    state = fold(events(*(LIFECYCLE[k] for k in PATH_TO[status])))
    assert state.status is status
    return state


def then(state: RunState, payload: Any) -> RunState:
    return apply(state, events(payload, start=state.last_seq + 1)[0])


NON_LIFECYCLE: list[Any] = [p for p in ex.PAYLOAD_EXAMPLES.values() if p.kind not in LIFECYCLE] + [
    UnknownEvent.model_validate({"kind": "workflow.branch_taken", "branch": "a"})
]

# --------------------------------------------------------------------------- the transition table


def test_the_transition_table_is_the_reference_one() -> None:
    assert set(TRANSITIONS) == set(EXPECTED_EDGES)
    for status, edges in EXPECTED_EDGES.items():
        assert set(TRANSITIONS[status]) == set(edges), status


def test_the_lifecycle_kinds_are_the_reference_ones() -> None:
    targets = {kind: target for edges in EXPECTED_EDGES.values() for kind, target in edges.items()}
    assert set(targets) == set(LIFECYCLE)
    # started -> running, paused -> paused, resumed -> running, interrupted -> waiting_answer,
    # completed/failed/cancelled -> themselves.
    assert targets == {
        "run.started": RUNNING,
        "run.resumed": RUNNING,
        "run.queued": QUEUED,
        "run.claimed": RUNNING,
        "run.paused": PAUSED,
        "run.interrupted": WAITING,
        "run.completed": COMPLETED,
        "run.failed": FAILED,
        "run.cancelled": CANCELLED,
    }


CELLS = list(itertools.product(ALL_STATUSES, LIFECYCLE))


@pytest.mark.parametrize(("status", "kind"), CELLS, ids=[f"{s}-{k}" for s, k in CELLS])
def test_each_lifecycle_edge_is_allowed_exactly_when_designed(
    status: RunStatus | None, kind: str
) -> None:
    assert is_transition_allowed(status, kind) == (kind in EXPECTED_EDGES[status])


@pytest.mark.parametrize(("status", "kind"), CELLS, ids=[f"{s}-{k}" for s, k in CELLS])
def test_each_lifecycle_event_folds_to_the_designed_status(
    status: RunStatus | None, kind: str
) -> None:
    expected = EXPECTED_EDGES[status].get(kind, status)  # a refused edge leaves the status
    assert next_status(status, kind) is expected
    assert then(state_in(status), LIFECYCLE[kind]).status is expected


@pytest.mark.parametrize("status", TERMINALS)
def test_a_terminal_status_absorbs_everything(status: RunStatus) -> None:
    state = state_in(status)
    for payload in [*LIFECYCLE.values(), *NON_LIFECYCLE]:
        assert not is_transition_allowed(status, payload.kind), payload.kind
        state = then(state, payload)
        assert state.status is status
        assert state.interrupts == () and state.wake_at is None


@pytest.mark.parametrize("status", ALL_STATUSES)
def test_non_lifecycle_kinds_leave_the_status_unchanged(status: RunStatus | None) -> None:
    state = state_in(status)
    for payload in NON_LIFECYCLE:
        assert next_status(status, payload.kind) is status
        after = then(state, payload)
        assert (after.status, after.interrupts, after.wake_at) == (
            state.status,
            state.interrupts,
            state.wake_at,
        )
        assert after.last_seq == state.last_seq + 1


@pytest.mark.parametrize("status", ALL_STATUSES)
def test_non_lifecycle_kinds_are_appendable_only_to_a_live_run(status: RunStatus | None) -> None:
    live = status is not None and status not in TERMINAL
    for payload in NON_LIFECYCLE:
        assert is_transition_allowed(status, payload.kind) is live, (status, payload.kind)


def test_terminal_and_suspended_sets() -> None:
    assert set(TERMINAL) == {COMPLETED, FAILED, CANCELLED}
    assert set(SUSPENDED) == {PAUSED, WAITING}
    for status in RunStatus:
        assert status.is_terminal == (status in TERMINALS)
        assert status.is_suspended == (status in (PAUSED, WAITING))


def test_a_run_with_no_lifecycle_event_has_no_status() -> None:
    assert fold([]).status is None
    assert fold_status(events(TextDelta(message_id="m", text="x"))) is None


@pytest.mark.parametrize("status", [QUEUED, RUNNING, PAUSED, WAITING])
def test_no_state_is_escaped_only_by_cancel(status: RunStatus) -> None:
    leaving = {
        kind
        for kind in TRANSITIONS[status]
        if kind != "run.cancelled" and next_status(status, kind) is not status
    }
    assert leaving, f"{status} can only be left by cancelling"


@pytest.mark.parametrize("status", [RUNNING, PAUSED, WAITING])
def test_completion_is_reachable_from_every_live_status_without_cancel(status: RunStatus) -> None:
    seen: set[RunStatus | None] = {status}
    frontier: list[RunStatus | None] = [status]
    while frontier:
        current = frontier.pop()
        for kind in TRANSITIONS[current]:
            if kind == "run.cancelled":
                continue
            target = next_status(current, kind)
            if target not in seen:
                seen.add(target)
                frontier.append(target)
    assert COMPLETED in seen


@pytest.mark.parametrize("status", [PAUSED, WAITING])
def test_every_suspended_status_has_a_legal_call_besides_cancel(status: RunStatus) -> None:
    legal = {op for op, rule in OPERATIONS[status].items() if rule.verdict is LEGAL}
    assert legal - {Operation.CANCEL, Operation.PAUSE}


# --------------------------------------------------------------------------- interrupts


def _asked(interrupt_id: str, **fields: Any) -> RunInterrupted:
    return RunInterrupted(interrupt_id=interrupt_id, payload={"q": interrupt_id}, **fields)


def test_several_interrupts_may_be_open_at_once() -> None:
    state = fold(events(LIFECYCLE["run.started"], _asked("a"), _asked("b"), _asked("c")))
    assert state.status is WAITING
    assert [i.interrupt_id for i in state.interrupts] == ["a", "b", "c"]


def test_pending_is_the_oldest_open_interrupt() -> None:
    state = fold(events(LIFECYCLE["run.started"], _asked("b"), _asked("a")))
    assert state.pending is not None
    assert state.pending.interrupt_id == "b"
    assert state.pending.seq == 1
    assert RunState().pending is None


def test_an_open_interrupt_carries_what_was_asked() -> None:
    shape = AnswerShape(options=["yes", "no"])
    state = fold(events(LIFECYCLE["run.started"], _asked("a", reason="approval", expected=shape)))
    assert state.interrupts == (
        OpenInterrupt(
            interrupt_id="a", seq=1, payload={"q": "a"}, reason="approval", expected=shape
        ),
    )


def test_an_answer_closes_its_own_interrupt_only() -> None:
    state = fold(events(LIFECYCLE["run.started"], _asked("a"), _asked("b"), _asked("c")))
    state = then(state, AnswerRecorded(interrupt_id="b", value="yes"))
    assert [i.interrupt_id for i in state.interrupts] == ["a", "c"]
    assert state.status is WAITING
    assert state.pending is not None and state.pending.interrupt_id == "a"
    state = then(state, AnswerRecorded(interrupt_id="a", value="no"))
    assert [i.interrupt_id for i in state.interrupts] == ["c"]


def test_an_answer_to_an_interrupt_that_is_not_open_changes_nothing() -> None:
    state = fold(events(LIFECYCLE["run.started"], _asked("a")))
    after = then(state, AnswerRecorded(interrupt_id="zzz", value=1))
    assert after.interrupts == state.interrupts


def test_an_answer_while_not_waiting_changes_nothing() -> None:
    state = state_in(RUNNING)
    assert then(state, AnswerRecorded(interrupt_id="a")).interrupts == ()


def test_a_resume_clears_every_open_interrupt() -> None:
    state = fold(events(LIFECYCLE["run.started"], _asked("a"), _asked("b")))
    state = then(state, RunResumed(interrupt_id="a"))
    assert state.status is RUNNING
    assert state.interrupts == () and state.pending is None


@pytest.mark.parametrize("kind", ["run.cancelled"])
def test_a_terminal_event_clears_every_open_interrupt(kind: str) -> None:
    state = fold(events(LIFECYCLE["run.started"], _asked("a"), _asked("b")))
    state = then(state, LIFECYCLE[kind])
    assert state.status is CANCELLED
    assert state.interrupts == ()


def test_a_duplicate_interrupt_id_is_counted_once() -> None:
    state = fold(events(LIFECYCLE["run.started"], _asked("a"), _asked("b"), _asked("a")))
    assert [(i.interrupt_id, i.seq) for i in state.interrupts] == [("a", 1), ("b", 2)]


def test_a_refused_interrupt_does_not_open_a_question() -> None:
    state = then(state_in(PAUSED), _asked("a"))
    assert state.status is PAUSED
    assert state.interrupts == ()


# --------------------------------------------------------------------------- timers


def test_wake_at_comes_from_run_paused() -> None:
    wake = TS + timedelta(hours=1)
    state = fold(events(LIFECYCLE["run.started"], RunPaused(reason="timer", wake_at=wake)))
    assert state.status is PAUSED
    assert state.wake_at == wake


def test_wake_at_is_utc_whatever_zone_it_was_given_in() -> None:
    wake = datetime(2025, 6, 1, 12, tzinfo=timezone(timedelta(hours=2)))
    state = fold(events(LIFECYCLE["run.started"], RunPaused(wake_at=wake)))
    assert state.wake_at == wake
    assert state.wake_at is not None and state.wake_at.utcoffset() == timedelta(0)


def test_a_pause_without_a_timer_has_no_wake_at() -> None:
    assert state_in(PAUSED).wake_at is None


def test_wake_at_survives_non_lifecycle_events_and_clears_on_resume() -> None:
    wake = TS + timedelta(hours=1)
    state = fold(events(LIFECYCLE["run.started"], RunPaused(wake_at=wake)))
    state = then(state, ControlRequested(verb="cancel"))
    state = then(state, Report(message="still parked"))
    assert state.wake_at == wake
    state = then(state, RunPaused(wake_at=wake + timedelta(days=1)))  # refused: already paused
    assert state.wake_at == wake
    state = then(state, RunResumed(reason="timer fired"))
    assert state.wake_at is None


def test_wake_at_clears_when_a_paused_run_is_cancelled() -> None:
    state = fold(events(LIFECYCLE["run.started"], RunPaused(wake_at=TS)))
    state = then(state, ControlObserved(verb="cancel", safe_point="suspended"))
    state = then(state, RunCancelled())
    assert (state.status, state.wake_at) == (CANCELLED, None)


def test_last_seq_and_last_ts_follow_every_event() -> None:
    log = events(LIFECYCLE["run.started"], TextDelta(message_id="m", text="x"), RunCompleted())
    state = fold(log)
    assert (state.last_seq, state.last_ts) == (2, log[-1].ts)
    assert RunState().last_seq == -1


# --------------------------------------------------------------------------- the operation table


def test_the_operation_table_has_every_status_and_operation() -> None:
    assert set(OPERATIONS) == set(RunStatus) == set(EXPECTED_OPERATIONS)
    for status, row in OPERATIONS.items():
        assert set(row) == set(Operation), status


OPERATION_CELLS = [(s, op) for s in RunStatus for op in Operation]


@pytest.mark.parametrize(
    ("status", "operation"), OPERATION_CELLS, ids=[f"{s}-{op}" for s, op in OPERATION_CELLS]
)
def test_each_operation_cell_matches_the_reference(status: RunStatus, operation: Operation) -> None:
    verdict, hint = EXPECTED_OPERATIONS[status][operation]
    rule = operation_verdict(status, operation)
    assert rule is OPERATIONS[status][operation]
    assert rule.verdict is verdict
    assert rule.hint == hint


def test_cancelling_a_suspended_run_ends_it_at_once() -> None:
    for status in (PAUSED, WAITING):
        note = OPERATIONS[status][Operation.CANCEL].note
        assert note is not None and "at once" in note


def test_the_operation_table_is_read_only() -> None:
    with pytest.raises(TypeError):
        OPERATIONS[RUNNING] = OPERATIONS[PAUSED]  # type: ignore[index]
    with pytest.raises(TypeError):
        OPERATIONS[RUNNING][Operation.ANSWER] = OPERATIONS[WAITING][Operation.ANSWER]  # type: ignore[index]
    with pytest.raises(TypeError):
        TRANSITIONS[RUNNING] = frozenset()  # type: ignore[index]


# --------------------------------------------------------------------------- property: a pure fold

_ids = st.sampled_from(["a", "b", "c"])
_payloads = st.one_of(
    st.sampled_from(list(LIFECYCLE.values())),
    st.builds(_asked, _ids),
    st.builds(AnswerRecorded, interrupt_id=_ids, value=st.integers()),
    st.builds(RunResumed, interrupt_id=st.none() | _ids),
    st.builds(RunPaused, wake_at=st.none() | st.just(TS + timedelta(minutes=5))),
    st.sampled_from(NON_LIFECYCLE),
)
logs = st.builds(
    lambda started, ps: events(*([LIFECYCLE["run.started"]] if started else []), *ps),
    st.booleans(),  # most interesting logs start the run; some never do
    st.lists(_payloads, max_size=25),
)


def _reduce(log: Iterable[Event]) -> RunState:
    return functools.reduce(apply, log, RunState())


@given(log=logs)
def test_fold_is_apply_reduced(log: list[Event]) -> None:
    assert fold(log) == _reduce(log)


@given(log=logs, data=st.data())
def test_folding_in_two_chunks_equals_folding_at_once(
    log: list[Event], data: st.DataObject
) -> None:
    cut = data.draw(st.integers(min_value=0, max_value=len(log)))
    assert fold(log[cut:], fold(log[:cut])) == fold(log)


@given(log=logs)
def test_folded_state_is_consistent(log: list[Event]) -> None:
    state = RunState()
    for event in log:
        before = state
        state = apply(state, event)
        if before.status in TERMINAL:
            assert state.status is before.status
        if state.status is not before.status:
            assert event.kind in TRANSITIONS[before.status]
        assert not state.interrupts or state.status is WAITING
        assert state.wake_at is None or state.status is PAUSED
        ids = [i.interrupt_id for i in state.interrupts]
        assert len(ids) == len(set(ids))
        assert [i.seq for i in state.interrupts] == sorted(i.seq for i in state.interrupts)
