"""A durable workflow's question is answered in another process: nothing but the checkpointer
(real SQLite files, the real PostgreSQL server) and the run's log crosses the boundary."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from lg_graphs import START_STATE, asking

from agentdeck.model.events import Event
from agentdeck.model.payloads import NodeUpdated
from agentdeck.model.status import fold
from agentdeck.testing.engine_kit import check_interrupted, drive, make_invocation
from agentdeck.testing.fixtures import PostgresSchema
from agentdeck.vocabulary import RunStatus
from agentdeck_langgraph import LangGraphEngine, Workflow

CHILD = Path(__file__).resolve().parent / "answer_child.py"


async def _park(url: str) -> list[Event]:
    engine = LangGraphEngine(checkpointer=url)
    await engine.open()
    try:
        parked = await drive(
            engine, make_invocation(engine, Workflow("approval", asking()), START_STATE)
        )
    finally:
        await engine.close()
    check_interrupted(parked)
    return list(parked.events)


def _answer_in_a_new_process(
    url: str, history: list[Event], answer: object, tmp: Path
) -> list[Event]:
    log, answer_file, out = tmp / "log.jsonl", tmp / "answer.json", tmp / "out.jsonl"
    log.write_text("\n".join(event.to_json() for event in history))
    answer_file.write_text(json.dumps(answer))
    done = subprocess.run(
        [sys.executable, str(CHILD), url, str(log), str(answer_file), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [Event.from_json(line) for line in out.read_text().splitlines()]


def _assert_answered(history: list[Event], events: list[Event], answer: object) -> None:
    assert events[: len(history)] == history
    continued = events[len(history) :]
    assert [e.kind for e in continued] == [
        "answer.recorded",
        "run.resumed",
        "node.updated",
        "node.updated",
        "run.completed",
    ]
    assert [e.payload.node for e in continued if isinstance(e.payload, NodeUpdated)] == [
        "ask",
        "review",
    ]
    assert fold(events).status is RunStatus.COMPLETED
    state = continued[-1].payload.output[0].data  # type: ignore[union-attr]
    assert state == {"n": 2, "log": ["plan", f"ask:{answer}", "review"], "answer": answer}


async def test_an_interrupt_parked_on_sqlite_is_answered_in_a_new_process(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state-checkpoints.db'}"
    history = await _park(url)
    events = _answer_in_a_new_process(url, history, "ship", tmp_path)
    _assert_answered(history, events, "ship")


async def test_an_interrupt_parked_on_postgresql_is_answered_in_a_new_process(
    postgres_schema: PostgresSchema, tmp_path: Path
) -> None:
    history = await _park(postgres_schema.url)
    events = _answer_in_a_new_process(postgres_schema.url, history, {"approved": True}, tmp_path)
    _assert_answered(history, events, {"approved": True})


async def test_a_durable_workflow_on_the_default_state_survives_a_new_deck(
    isolated_state: Path,
) -> None:
    # Nothing configured: the deck's state is .agentdeck/state.db of the working directory, and
    # the checkpoints follow it into the sibling file -- durable together, with no setting.
    from agentdeck import Deck, RunStatus, RunSuspendedError
    from agentdeck.settings import Settings

    def deck() -> Deck:
        workflow = Workflow("approval", asking(), durable=True)
        return Deck(workflows=[workflow], settings=Settings.load(env={}), observers=())

    async with deck() as first:
        run = await first.runs.start("approval", {"n": 1})
        try:
            await run
        except RunSuspendedError as parked:
            assert parked.status is RunStatus.WAITING_ANSWER
    state = isolated_state / ".agentdeck"
    assert (state / "state.db").is_file()
    assert (state / "state-checkpoints.db").is_file()

    async with deck() as second:
        [waiting] = await second.runs.list(status=RunStatus.WAITING_ANSWER)
        assert waiting.id == run.id
        await waiting.answer("ship")
        result = await waiting
    assert result == {"n": 2, "log": ["plan", "ask:ship", "review"], "answer": "ship"}
