"""Answers racing across processes on every durable store: the loser is told, never ``None``.

Two worker processes (``answer_worker.py``) hold open decks on one SQLite file, PostgreSQL
schema or Redis prefix. For each trial the test parks a run on a question and sends both workers
their command at once: two different answers (double answer), or an answer and a cancel. The
store's conditional append decides the race; the runtime's answer rules must then tell the
truth to the loser:

- double answer: exactly one call returns, the other raises ``AlreadyAnsweredError`` carrying
  the winner's origin; the log holds exactly one ``answer.recorded``, the returning caller's;
- answer vs cancel: the cancel always returns and the run ends cancelled; the answer returns
  only if its value is in the log, and otherwise raises ``RunCancelledError``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentdeck.model.payloads import AnswerRecorded, RunInterrupted
from agentdeck.model.status import fold
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import BackendRequest, EventStore
from agentdeck.testing import new_run
from agentdeck.testing.fixtures import PostgresSchema, RedisPrefix
from agentdeck.testing.processes import JsonLinesWorker
from agentdeck.vocabulary import RunStatus

WORKER = Path(__file__).with_name("answer_worker.py")
TRIALS = 200
WAIT = 60.0


def _worker(url: str) -> JsonLinesWorker:
    """One answer worker process on ``url``."""
    return JsonLinesWorker(WORKER, url, wait=WAIT)


@pytest.fixture(params=["sqlite", "postgresql", "redis"])
def durable_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """One durable state every process of the test shares."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'shared.db'}"
    if request.param == "postgresql":
        schema: PostgresSchema = request.getfixturevalue("postgres_schema")
        return schema.url
    prefix: RedisPrefix = request.getfixturevalue("redis_prefix")
    return f"{prefix.url}?prefix={prefix.prefix}"


@pytest.fixture
def pair(durable_url: str) -> Iterator[tuple[JsonLinesWorker, JsonLinesWorker]]:
    first, second = _worker(durable_url), _worker(durable_url)
    try:
        assert first.reply() == {"ready": True}
        assert second.reply() == {"ready": True}
        yield first, second
    finally:
        first.stop()
        second.stop()


@pytest.fixture
async def store(durable_url: str) -> AsyncIterator[EventStore]:
    store = PluginHost.discover().event_store(BackendRequest(url=durable_url))
    await store.open()
    yield store
    await store.close()


async def _parked(store: EventStore) -> str:
    outcome = await store.open_run(new_run(name="approval", invocable_kind="workflow"))
    assert outcome.event is not None
    run_id = outcome.event.run_id
    await store.append(run_id, [RunInterrupted(interrupt_id="ask-0", payload="ship it?")])
    return run_id


def _race(
    first: JsonLinesWorker, second: JsonLinesWorker, one: dict[str, Any], two: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    first.send(**one)  # both commands are on their way before either reply is read
    second.send(**two)
    return first.reply(), second.reply()


async def _answers(store: EventStore, run_id: str) -> list[AnswerRecorded]:
    return [e.payload for e in await store.read(run_id) if isinstance(e.payload, AnswerRecorded)]


async def test_two_answers_racing_have_one_winner_and_a_told_loser(
    pair: tuple[JsonLinesWorker, JsonLinesWorker], store: EventStore
) -> None:
    first, second = pair
    wins = {"a": 0, "b": 0}
    for _ in range(TRIALS):
        run_id = await _parked(store)
        replies = _race(
            first,
            second,
            {"op": "answer", "run_id": run_id, "value": "a"},
            {"op": "answer", "run_id": run_id, "value": "b"},
        )
        returned = [value for value, r in zip("ab", replies, strict=True) if "returned" in r]
        lost = [r for r in replies if "raised" in r]
        assert len(returned) == 1 and len(lost) == 1, replies
        assert lost[0]["raised"] == "AlreadyAnsweredError", replies
        assert (lost[0]["refusal"], lost[0]["origin"]) == ("answered", "human"), replies
        recorded = await _answers(store, run_id)
        assert [answer.value for answer in recorded] == returned, (replies, recorded)
        wins[returned[0]] += 1
    assert sum(wins.values()) == TRIALS


async def test_an_answer_racing_a_cancel_returns_only_if_it_was_recorded(
    pair: tuple[JsonLinesWorker, JsonLinesWorker], store: EventStore
) -> None:
    answerer, canceller = pair
    outcomes = {"answered": 0, "cancelled first": 0}
    for _ in range(TRIALS):
        run_id = await _parked(store)
        answer, cancel = _race(
            answerer,
            canceller,
            {"op": "answer", "run_id": run_id, "value": "yes"},
            {"op": "cancel", "run_id": run_id},
        )
        assert cancel == {"returned": True}, cancel
        assert fold(await store.read(run_id)).status is RunStatus.CANCELLED
        recorded = await _answers(store, run_id)
        if "returned" in answer:
            assert [a.value for a in recorded] == ["yes"], (answer, recorded)
            outcomes["answered"] += 1
        else:
            assert (answer["raised"], answer["refusal"]) == ("RunCancelledError", "cancelled")
            assert recorded == [], (answer, recorded)
            outcomes["cancelled first"] += 1
    assert sum(outcomes.values()) == TRIALS
