"""Deck lifecycle, the runs API and run control, played on the model-free scripted engine."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agentdeck import (
    AlreadyAnsweredError,
    AnswerRefusedError,
    ConfigError,
    ContextTypeError,
    DataBlock,
    Deck,
    DuplicateKeyError,
    Event,
    InterruptResult,
    InvalidInputError,
    ManualClock,
    NotFoundError,
    Observer,
    RunCancelledError,
    RunFailedError,
    RunStateError,
    RunStatus,
    RunSuspendedError,
    SessionBusyError,
    TextBlock,
)
from agentdeck.model.payloads import AnswerShape
from agentdeck.model.status import fold
from agentdeck.testing import Ask, Checkpoint, Complete, Raise, Script, Yield
from agentdeck.testing.engine_kit import reserved_kinds_script


def _support() -> Any:
    path = Path(__file__).with_name("deck_support.py")
    spec = importlib.util.spec_from_file_location("deck_support", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("deck_support", module)
    spec.loader.exec_module(module)
    return module


support = _support()

HELLO = Script("hello", [Yield.text("hi"), Yield.text(" there"), Complete("done")])
APPROVE = Script(
    "approve",
    [
        Yield.text("checking"),
        Ask("q1", payload={"question": "refund?"}, expected=AnswerShape(options=["yes", "no"])),
        Complete("approved"),
    ],
)
TWO_QUESTIONS = Script("two_questions", [Ask("a", payload="first?"), Ask("b"), Complete("ok")])
SLOW = Script(
    "slow",
    [Yield.text("1"), Checkpoint(), Yield.text("2"), Checkpoint(), Complete("slow done")],
)
BROKEN = Script("broken", [Yield.text("x"), Raise(ValueError, "secret detail 42")])
CATALOG = [HELLO, APPROVE, TWO_QUESTIONS, SLOW, BROKEN]


@pytest.fixture
async def deck() -> Any:
    async with support.deck(CATALOG) as opened:
        yield opened


def kinds(events: list[Event]) -> list[str]:
    return [event.kind for event in events]


# ------------------------------------------------------------------------------------ lifecycle


async def test_lifecycle_new_built_open_closed() -> None:
    deck = support.deck(CATALOG)
    assert deck.state.value == "new" and not deck.is_open
    assert deck.build() is deck and deck.build() is deck  # idempotent
    assert deck.state.value == "built"
    with pytest.raises(ConfigError, match="open it first"):
        await deck.run("hello")
    async with deck:
        assert deck.is_open
        assert (await deck.run("hello")) == [TextBlock(text="done")]
    assert deck.state.value == "closed" and not deck.is_open
    with pytest.raises(ConfigError, match="closed"):
        await deck.open()
    with pytest.raises(ConfigError, match="closed"):
        await deck.run("hello")


async def test_handles_and_surfaces_are_refused_through_the_service_as_the_deck_is() -> None:
    deck = support.deck(CATALOG)
    with pytest.raises(ConfigError, match="the deck is new: open it first"):
        _ = deck.service.runtime
    deck.build()
    with pytest.raises(ConfigError, match="the deck is built: open it first"):
        await deck.runs.list()
    async with deck:
        assert deck.service.is_open and deck.service.runtime is deck.service.runtime
        run = await deck.runs.start("hello")
        await run
    assert not deck.service.is_open
    for call in (run.status, run.pending, run.resume, lambda: deck.runs.get(run.id)):
        with pytest.raises(ConfigError, match="the deck is closed; construct a new one"):
            await call()
    with pytest.raises(ConfigError, match="closed"):
        [event async for event in run.events()]


async def test_catalogs_are_read_only_mappings(deck: Deck) -> None:
    with pytest.raises(TypeError):
        deck.workflows["x"] = HELLO  # type: ignore[index]
    assert set(deck.workflows) == {s.name for s in CATALOG}


async def test_an_unknown_name_is_not_found_and_lists_what_exists(deck: Deck) -> None:
    with pytest.raises(NotFoundError) as missing:
        await deck.run("nope")
    assert missing.value.available is not None and "hello" in missing.value.available
    assert await deck.runs.list() == []  # nothing was recorded


def test_an_instance_passed_as_the_context_type_is_refused() -> None:
    class Calendar:
        pass

    with pytest.raises(ContextTypeError):
        Deck(context=Calendar())


# ------------------------------------------------------------------------------------ turns


async def test_run_returns_the_result_and_stream_yields_the_log(deck: Deck) -> None:
    result = await deck.run("hello")
    assert result == [TextBlock(text="done")]

    events = [event async for event in deck.stream("hello")]
    assert kinds(events) == ["run.started", "text.delta", "text.delta", "run.completed"]
    assert [event.seq for event in events] == [0, 1, 2, 3]
    assert all(type(event) is Event for event in events)
    run = await deck.runs.get(events[0].run_id)
    assert kinds([e async for e in run.events()]) == kinds(events)


async def test_a_reserved_kind_an_engine_yields_is_recorded_and_moves_no_status() -> None:
    async with support.deck([reserved_kinds_script("reserved")]) as deck:
        events = [event async for event in deck.stream("reserved")]
        run = await deck.runs.get(events[0].run_id)
        stored = [event async for event in run.events()]
        assert await run.status() is RunStatus.COMPLETED
    assert "input.appended" in kinds(events)
    assert stored == events  # recorded as streamed, and read back equal
    assert [fold(stored[: n + 1]).status for n in range(len(stored) - 1)] == [RunStatus.RUNNING] * (
        len(stored) - 1
    )


async def test_a_failing_engine_ends_the_run_failed_without_its_exception_text(deck: Deck) -> None:
    with pytest.raises(RunFailedError) as failed:
        await deck.run("broken")
    assert failed.value.status is RunStatus.FAILED
    assert failed.value.error_code == "engine_error"
    run = await deck.runs.get(failed.value.run_id)
    log = [event async for event in run.events()]
    assert log[-1].kind == "run.failed"
    assert "secret detail" not in log[-1].to_json()


async def test_a_deadline_ends_the_run_with_the_deadline_code() -> None:
    clock = ManualClock()
    async with support.deck(CATALOG, clock=clock) as deck:
        run = await deck.runs.start("slow", deadline=clock.now() - timedelta(seconds=1))
        with pytest.raises(RunFailedError) as failed:
            await run
        assert failed.value.error_code == "deadline"


# ------------------------------------------------------------------------------------ runs API


async def test_runs_get_by_id_and_key_and_list_by_status_are_namespace_isolated(
    deck: Deck,
) -> None:
    run = await deck.runs.start("approve", namespace="acme", key="order-1234")
    with pytest.raises(RunSuspendedError):
        await run
    assert (await deck.runs.get(run.id, namespace="acme")).id == run.id
    assert (await deck.runs.get(namespace="acme", key="order-1234")).id == run.id
    with pytest.raises(NotFoundError):
        await deck.runs.get(run.id)  # the default namespace has never heard of it
    waiting = await deck.runs.list(namespace="acme", status=RunStatus.WAITING_ANSWER)
    assert [r.id for r in waiting] == [run.id]
    assert await deck.runs.list(status=RunStatus.WAITING_ANSWER) == []


async def test_a_reused_key_raises_naming_the_holder_or_returns_it_on_request(deck: Deck) -> None:
    first = await deck.runs.start("hello", key="k-1")
    await first
    with pytest.raises(DuplicateKeyError) as clash:
        await deck.runs.start("hello", key="k-1")
    assert clash.value.holder_run_id == first.id and first.id in str(clash.value)
    again = await deck.runs.start("hello", key="k-1", if_exists="return")
    assert again.id == first.id
    assert len(await deck.runs.list()) == 1


async def test_get_takes_exactly_one_of_id_and_key(deck: Deck) -> None:
    with pytest.raises(InvalidInputError):
        await deck.runs.get()
    with pytest.raises(InvalidInputError):
        await deck.runs.get("x", key="y")


# ------------------------------------------------------------------------------------ human input


async def test_ask_parks_the_run_and_an_answer_completes_it(deck: Deck) -> None:
    parked = await deck.run("approve")
    assert isinstance(parked, InterruptResult)
    assert parked["type"] == "interrupt" and parked.payload == {"question": "refund?"}
    run = await deck.runs.get(parked.run_id)
    assert await run.status() is RunStatus.WAITING_ANSWER
    with pytest.raises(RunSuspendedError) as suspended:
        await run
    assert suspended.value.status is RunStatus.WAITING_ANSWER
    assert suspended.value.pending["payload"] == {"question": "refund?"}
    assert (await run.pending()) == parked

    await run.answer("yes")
    result = await run
    assert result[0] == DataBlock(data={"interrupt_id": "q1", "answer": "yes"})
    log = kinds([e async for e in run.events()])
    assert log == [
        "run.started",
        "text.delta",
        "run.interrupted",
        "answer.recorded",
        "run.resumed",
        "run.completed",
    ]


async def test_an_answer_outside_the_options_is_refused_and_the_run_stays_parked(
    deck: Deck,
) -> None:
    parked = await deck.run("approve")
    run = await deck.runs.get(parked.run_id)
    with pytest.raises(AnswerRefusedError) as refused:
        await run.answer("maybe")
    assert "maybe" not in refused.value.reason
    assert await run.status() is RunStatus.WAITING_ANSWER
    assert [e async for e in run.events()][-1].kind == "answer.refused"
    await run.answer("no")
    await run


async def test_answering_twice_applies_once(deck: Deck) -> None:
    parked = await deck.run("approve")
    run = await deck.runs.get(parked.run_id)
    outcomes = await asyncio.gather(run.answer("yes"), run.answer("no"), return_exceptions=True)
    assert sum(1 for o in outcomes if o is None) == 1
    assert all(isinstance(o, RunStateError) for o in outcomes if o is not None)
    result = await run
    assert result[0].data["answer"] in {"yes", "no"}


async def test_several_open_questions_need_an_interrupt_id(deck: Deck) -> None:
    run = await deck.runs.start("two_questions")
    with pytest.raises(RunSuspendedError):
        await run
    # The scripted engine asks one question per play; answer it, then the next one opens.
    await run.answer("A")
    with pytest.raises(RunSuspendedError):
        await run
    [pending] = await run.pending_all()
    assert pending.interrupt_id == "b"
    with pytest.raises(AlreadyAnsweredError) as taken:
        await run.answer("B", interrupt_id="a")  # a different value for a closed question
    assert (taken.value.interrupt_id, taken.value.origin) == ("a", "human")
    await run.answer("A", interrupt_id="a")  # the very answer recorded: a quiet retry
    with pytest.raises(InvalidInputError):
        await run.answer("B", interrupt_id="c")  # no such question
    await run.answer("B", interrupt_id="b")
    await run


async def test_answering_a_running_or_paused_run_says_which_call_is_right(deck: Deck) -> None:
    run = await deck.runs.start("slow")
    await run.pause("operator stepped away")
    with pytest.raises(RunSuspendedError) as parked:
        await run
    assert parked.value.status is RunStatus.PAUSED and parked.value.pending is None
    with pytest.raises(RunStateError) as refused:
        await run.answer("yes")
    assert refused.value.hint == "resume"


# ------------------------------------------------------------------------------------ control


async def test_pause_at_a_safe_point_then_resume_completes(deck: Deck) -> None:
    run = await deck.runs.start("slow")
    assert await run.pause("hold on") is True
    with pytest.raises(RunSuspendedError):
        await run
    log = kinds([e async for e in run.events()])
    assert log[-3:] == ["control.requested", "control.observed", "run.paused"]
    await run.resume()
    assert await run == [TextBlock(text="slow done")]


async def test_cancel_of_a_suspended_run_ends_it_at_once(deck: Deck) -> None:
    parked = await deck.run("approve")
    run = await deck.runs.get(parked.run_id)
    await run.cancel("user closed the tab")
    assert await run.status() is RunStatus.CANCELLED
    with pytest.raises(RunFailedError):
        await run
    await run.cancel()  # what it asks for already holds: quiet
    with pytest.raises(RunCancelledError) as late:
        await run.answer("yes")  # the person answering is told the run was cancelled
    assert late.value.cancel_reason == "user closed the tab" and late.value.refusal == "cancelled"
    with pytest.raises(RunCancelledError):
        await run.pause()
    with pytest.raises(RunCancelledError):
        await run.resume()


async def test_resume_on_a_waiting_run_refuses_unless_a_pause_is_pending(deck: Deck) -> None:
    parked = await deck.run("approve")
    run = await deck.runs.get(parked.run_id)
    with pytest.raises(RunStateError) as refused:
        await run.resume()
    assert refused.value.hint == "answer"
    await run.pause()
    with pytest.raises(RunStateError, match="pause"):
        await run.answer("yes")  # the pending pause holds answers back
    await run.resume()  # lifts it
    await run.answer("yes")
    await run


async def test_a_consumer_walking_away_from_a_stream_cancels_the_run(deck: Deck) -> None:
    stream = deck.stream("slow")
    first = await anext(stream)
    await stream.aclose()
    run = await deck.runs.get(first.run_id)
    with pytest.raises(RunFailedError):
        await run
    assert await run.status() is RunStatus.CANCELLED


async def test_following_a_run_from_its_start_reads_through_the_parks_it_moved_past(
    deck: Deck,
) -> None:
    parked = await deck.runs.start("approve")
    with pytest.raises(RunSuspendedError):
        await parked
    assert kinds([e async for e in parked.events(follow=True)])[-1] == "run.interrupted"

    await parked.answer("yes")
    await parked
    followed = kinds([e async for e in parked.events(follow=True)])
    assert followed == kinds([e async for e in parked.events()])
    assert followed.count("run.interrupted") == 1 and followed[-1] == "run.completed"


async def test_following_a_parked_then_cancelled_run_reaches_its_cancellation(deck: Deck) -> None:
    parked = await deck.runs.start("two_questions")
    with pytest.raises(RunSuspendedError):
        await parked
    await parked.cancel("no longer needed")
    followed = kinds([e async for e in parked.events(follow=True)])
    assert followed == kinds([e async for e in parked.events()])
    assert followed[-1] == "run.cancelled"


# ------------------------------------------------------------------------------------ sessions


async def test_one_turn_in_flight_per_session(deck: Deck) -> None:
    parked = await deck.run("approve", session_id="wa-1")
    with pytest.raises(SessionBusyError) as busy:
        await deck.run("hello", session_id="wa-1")
    assert busy.value.holder_run_id == parked.run_id
    assert f"session 'wa-1' already has run '{parked.run_id}' in flight" in str(busy.value)
    await deck.run("hello", session_id="wa-2")  # another session is free
    run = await deck.runs.get(parked.run_id)
    await run.answer("yes")
    await run
    await deck.run("hello", session_id="wa-1")  # free again once the holder finished


async def test_two_concurrent_opens_on_one_session_have_one_winner(deck: Deck) -> None:
    outcomes = await asyncio.gather(
        *(deck.runs.start("approve", session_id="s") for _ in range(10)),
        return_exceptions=True,
    )
    winners = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(winners) == 1
    assert all(isinstance(o, SessionBusyError) for o in outcomes if o not in winners)


# ------------------------------------------------------------------------------------ observers


class Recording(Observer):
    def __init__(self) -> None:
        self.events: list[Event] = []
        self.closed = False

    async def emit(self, event: Event) -> None:
        self.events.append(event)

    async def close(self) -> None:
        self.closed = True


class Raising(Observer):
    async def emit(self, event: Event) -> None:
        raise RuntimeError("observer broke")


async def test_observers_see_every_event_and_a_raising_one_costs_nothing() -> None:
    recording = Recording()
    async with support.deck(CATALOG, observers=[Raising(), recording]) as deck:
        result = await deck.run("hello")
        assert result == [TextBlock(text="done")]
    assert recording.closed
    assert kinds(recording.events) == ["run.started", "text.delta", "text.delta", "run.completed"]


async def test_an_observer_whose_start_raises_refuses_the_open() -> None:
    class Refuses(Observer):
        async def start(self) -> None:
            raise ConfigError("no keys")

        async def emit(self, event: Event) -> None:
            pass

    deck = support.deck(CATALOG, observers=[Refuses()])
    with pytest.raises(ConfigError, match="no keys"):
        await deck.open()
    assert not deck.is_open


# ------------------------------------------------------------------------------------ scale


async def test_a_thousand_concurrent_runs_complete_with_gapless_seq(deck: Deck) -> None:
    runs = await asyncio.gather(*(deck.runs.start("hello") for _ in range(1000)))
    results = await asyncio.gather(*(run.result() for run in runs))
    assert all(result == [TextBlock(text="done")] for result in results)
    for run in runs[::50]:
        seqs = [event.seq async for event in run.events()]
        assert seqs == list(range(len(seqs)))
    assert len(await deck.runs.list(status=RunStatus.COMPLETED)) == 1000


# ------------------------------------------------------------------------------------ budgets


async def test_a_usage_budget_ends_the_run_with_budget_exceeded(deck: Deck) -> None:
    from agentdeck import Budget, Usage, UsageReported

    hungry = Script(
        "hungry",
        [
            Yield(UsageReported(model="m", usage=Usage(requests=1, total_tokens=60))),
            Yield(UsageReported(model="m", usage=Usage(requests=1, total_tokens=60))),
            Yield.text("never"),
            Complete("done"),
        ],
    )
    async with support.deck([hungry]) as budgeted:
        run = await budgeted.runs.start("hungry", budget=Budget(max_total_tokens=100))
        with pytest.raises(RunFailedError) as failed:
            await run
        assert failed.value.error_code == "budget_exceeded"
        assert "total tokens: 120 used, budget 100" in (failed.value.reason or "")
        log = kinds([e async for e in run.events()])
        assert "text.delta" not in log
        assert await budgeted.run("hungry", budget=Budget(max_total_tokens=500)) == [
            TextBlock(text="done")
        ]


async def test_a_budget_is_recorded_and_caps_the_whole_run_in_whichever_deck_continues_it(
    tmp_path: Path,
) -> None:
    from agentdeck import Budget, RunStarted, Usage, UsageReported

    sixty = UsageReported(model="m", usage=Usage(requests=1, total_tokens=60))
    thirsty = Script(
        "thirsty", [Yield(sixty), Ask("more", payload="go on?"), Yield(sixty), Complete("done")]
    )
    env = {"AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}"}
    async with support.deck([thirsty], env=env) as first:
        run = await first.runs.start("thirsty", budget=Budget(max_total_tokens=100))
        with pytest.raises(RunSuspendedError):
            await run
        [opened] = [e async for e in run.events()][:1]
    assert isinstance(opened.payload, RunStarted)
    assert opened.payload.budget == Budget(max_total_tokens=100)

    # Another deck (a restart, another process) continues it: the recorded budget applies to
    # the run's whole usage, the 60 tokens of the first play included.
    async with support.deck([thirsty], env=env) as second:
        again = await second.runs.get(run.id)
        await again.answer("yes")
        with pytest.raises(RunFailedError) as failed:
            await again
    assert failed.value.error_code == "budget_exceeded"
    assert "total tokens: 120 used, budget 100" in (failed.value.reason or "")


# ------------------------------------------------------------------------------------ input


async def test_an_inline_block_over_the_cap_is_refused_before_anything_is_recorded() -> None:
    from agentdeck import INLINE_CAP_BYTES, ContentTooLargeError

    agentish = Script("agentish", [Complete(echo_input=True)], kind="agent")
    async with support.deck([agentish]) as deck:
        huge = {
            "type": "image",
            "media_type": "image/png",
            "data_b64": "A" * (INLINE_CAP_BYTES * 2),
        }
        with pytest.raises(ContentTooLargeError):
            await deck.run("agentish", [huge])
        assert await deck.runs.list() == []
        result = await deck.run("agentish", "hello")
        assert result.output == "hello" and result.run_id


async def test_answer_racing_cancel_has_exactly_one_terminal_outcome(deck: Deck) -> None:
    for _ in range(20):
        parked = await deck.run("approve")
        run = await deck.runs.get(parked.run_id)
        await asyncio.gather(run.answer("yes"), run.cancel("too late"), return_exceptions=True)
        with contextlib.suppress(RunFailedError):
            await run
        log = [e async for e in run.events()]
        terminal = [e.kind for e in log if e.kind in {"run.completed", "run.cancelled"}]
        assert len(terminal) == 1, kinds(log)
        assert log[-1].kind == terminal[0]
