"""Cross-process races through the public API, judged by what each caller was told.

Two worker processes (``deck_worker.py``) hold open decks on one durable store. Each trial
sends both of them a command at once; the store's conditional writes decide the race, and the
callers must be told the truth:

* **double answer** -- exactly one ``answer()`` returns, the other raises
  ``AlreadyAnsweredError``; the log holds one ``answer.recorded``, the returning caller's, and
  the run ends with that value;
* **answer vs cancel** -- the cancel returns; the answer returns only if its value is in the
  log, and otherwise raises ``RunCancelledError``; the run ends either way;
* **two turns on one session** -- at most one turn holds the session at a time: a turn that
  could not open raises ``SessionBusyError``, never plays beside the other;
* **double resume** -- both calls return, the paused run is resumed once (one
  ``run.resumed``) and plays to its end once.

Every log must be gapless. Trial counts come from ``AGENTDECK_CHAOS_RACE_TRIALS`` (default
below); the figures are printed (``pytest -s``) for the closing note.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from support import SLACK, deck_on, eventually, spawn, trials

from agentdeck import Deck, Run, RunStatus
from agentdeck.model.events import Event
from agentdeck.model.payloads import AnswerRecorded, RunResumed
from agentdeck.testing.processes import JsonLinesWorker, start_all

TRIALS = trials("race_trials", 10)
SETTLE = 30.0
"""Seconds a raced run may take to reach the state a trial waits for."""


@pytest.fixture
def workers(durable_url: str) -> Iterator[tuple[JsonLinesWorker, JsonLinesWorker]]:
    first, second = spawn(durable_url), spawn(durable_url)  # starting side by side
    try:
        start_all([first, second])
        yield first, second
    finally:
        first.stop()
        second.stop()


@pytest.fixture
async def deck(durable_url: str) -> AsyncIterator[Deck]:
    async with deck_on(durable_url) as opened:
        yield opened


def _race(
    first: JsonLinesWorker, second: JsonLinesWorker, one: dict[str, Any], two: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    first.send(**one)  # both commands are on their way before either reply is read
    second.send(**two)
    return first.reply(), second.reply()


async def _reaches(deck: Deck, run_id: str, *wanted: RunStatus) -> RunStatus:
    handle = await deck.runs.get(run_id)

    async def reached() -> RunStatus | None:
        status = await handle.status()
        return status if status in wanted else None

    status, _ = await eventually(reached, within=SETTLE + SLACK)
    return status


async def _log(deck: Deck, run_id: str) -> list[Event]:
    events = [event async for event in (await deck.runs.get(run_id)).events()]
    assert [event.seq for event in events] == list(range(len(events))), "the log has a gap"
    return events


async def _waiting_for_an_answer(deck: Deck) -> Run:
    """A fresh ``approval`` run, once it waits for its answer: what an answer races on."""
    run = await deck.runs.start("approval")
    await _reaches(deck, run.id, RunStatus.WAITING_ANSWER)
    return run


async def _answers_recorded(deck: Deck, run_id: str) -> list[Any]:
    """The values of the run's ``answer.recorded`` events, in log order (the log gapless)."""
    events = await _log(deck, run_id)
    return [e.payload.value for e in events if isinstance(e.payload, AnswerRecorded)]


def _report(race: str, url: str, outcomes: Counter[str]) -> None:
    store = url.split(":", 1)[0]
    figures = ", ".join(f"{name}: {count}" for name, count in sorted(outcomes.items()))
    print(f"\n[chaos] {race} on {store}: {sum(outcomes.values())} trials ({figures}); 0 failed")


async def test_two_answers_racing_have_one_winner_and_a_told_loser(
    workers: tuple[JsonLinesWorker, JsonLinesWorker], deck: Deck, durable_url: str
) -> None:
    first, second = workers
    outcomes: Counter[str] = Counter()
    for _ in range(TRIALS):
        run = await _waiting_for_an_answer(deck)
        replies = _race(
            first,
            second,
            {"op": "answer", "run_id": run.id, "value": "a"},
            {"op": "answer", "run_id": run.id, "value": "b"},
        )
        returned = [value for value, r in zip("ab", replies, strict=True) if "returned" in r]
        lost = [r for r in replies if "raised" in r]
        assert len(returned) == 1 and len(lost) == 1, replies
        assert lost[0]["raised"] == "AlreadyAnsweredError", replies
        await _reaches(deck, run.id, RunStatus.COMPLETED)
        assert await run.result() == returned[0]
        recorded = await _answers_recorded(deck, run.id)
        assert recorded == returned, (replies, recorded)
        outcomes[f"{returned[0]} won"] += 1
    _report("double answer", durable_url, outcomes)


async def test_an_answer_racing_a_cancel_returns_only_if_it_was_recorded(
    workers: tuple[JsonLinesWorker, JsonLinesWorker], deck: Deck, durable_url: str
) -> None:
    answerer, canceller = workers
    outcomes: Counter[str] = Counter()
    for _ in range(TRIALS):
        run = await _waiting_for_an_answer(deck)
        answer, cancel = _race(
            answerer,
            canceller,
            {"op": "answer", "run_id": run.id, "value": "yes"},
            {"op": "cancel", "run_id": run.id},
        )
        # A cancel is a request: it returns (and may land after the continuation finished,
        # the run then completed) or is refused because the run already completed.
        assert "returned" in cancel or cancel.get("raised") == "RunFinishedError", cancel
        status = await _reaches(deck, run.id, RunStatus.CANCELLED, RunStatus.COMPLETED)
        recorded = await _answers_recorded(deck, run.id)
        if "returned" in answer:
            assert recorded == ["yes"], (answer, recorded)
            outcomes[f"answered, then {status.value}"] += 1
        else:
            assert answer["raised"] == "RunCancelledError", answer
            assert recorded == [] and status is RunStatus.CANCELLED, (answer, recorded)
            outcomes["cancelled first"] += 1
    _report("answer vs cancel", durable_url, outcomes)


async def test_two_turns_on_one_session_never_play_side_by_side(
    workers: tuple[JsonLinesWorker, JsonLinesWorker], deck: Deck, durable_url: str
) -> None:
    first, second = workers
    outcomes: Counter[str] = Counter()
    for trial in range(TRIALS):
        session = f"contended-{trial}"
        turn = {"op": "turn", "name": "ticking", "input": {"count": 20}, "session": session}
        replies = _race(first, second, turn, turn)
        played = [r for r in replies if r.get("returned") == "20"]
        busy = [r for r in replies if r.get("raised") == "SessionBusyError"]
        assert len(played) >= 1 and len(played) + len(busy) == 2, replies
        runs = await deck.runs.list(session_id=session)
        assert len(runs) == len(played), (replies, [r.id for r in runs])
        assert [await r.status() for r in runs] == [RunStatus.COMPLETED] * len(runs)
        spans = []
        for run in runs:
            events = await _log(deck, run.id)
            spans.append((events[0].ts, events[-1].ts))
        spans.sort()
        for (_, ended), (began, _) in itertools.pairwise(spans):
            assert ended <= began, f"two turns on {session} overlapped: {spans}"
        outcomes["one busy" if busy else "one after the other"] += 1
    _report("two turns on one session", durable_url, outcomes)


async def test_two_resumes_racing_resume_the_run_once(
    workers: tuple[JsonLinesWorker, JsonLinesWorker], deck: Deck, durable_url: str
) -> None:
    first, second = workers
    outcomes: Counter[str] = Counter()
    for _ in range(TRIALS):
        run = await deck.runs.start("ticking", {"count": 100_000})
        await run.pause("to be resumed twice")
        await _reaches(deck, run.id, RunStatus.PAUSED)
        replies = _race(
            first, second, {"op": "resume", "run_id": run.id}, {"op": "resume", "run_id": run.id}
        )
        assert replies == ({"returned": None}, {"returned": None}), replies
        await _reaches(deck, run.id, RunStatus.RUNNING)
        resumed = [e for e in await _log(deck, run.id) if isinstance(e.payload, RunResumed)]
        assert len(resumed) == 1, resumed
        await run.cancel("trial over")
        await _reaches(deck, run.id, RunStatus.CANCELLED)
        outcomes["resumed once"] += 1
    _report("double resume", durable_url, outcomes)
