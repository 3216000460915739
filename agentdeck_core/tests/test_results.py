"""``result_of``: the one place a play's ending becomes what its caller gets -- ``await run`` --
or, in its JSON form, what a parent gets for a child run."""

from __future__ import annotations

from typing import Any

import pytest

from agentdeck.errors import RunFailedError, RunSuspendedError
from agentdeck.model.content import DataBlock, TextBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    AnswerShape,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunPaused,
    Usage,
)
from agentdeck.model.results import InterruptResult, TurnResult, result_of
from agentdeck.testing import event_examples as ex
from agentdeck.vocabulary import ErrorCode, RunStatus


def ending(payload: Any, seq: int = 4) -> Event:
    return ex.record(payload, seq=seq, run_id="run-1", session_id="s-1")


def test_a_completed_agent_gives_a_turn_result_and_its_output_as_json() -> None:
    completed = RunCompleted(
        output=[TextBlock(text="draft"), TextBlock(text="final")],
        usage=Usage(requests=1, total_tokens=9),
    )
    result = result_of(ending(completed), kind="agent")
    assert result == TurnResult(
        output="final",
        usage=Usage(requests=1, total_tokens=9),
        run_id="run-1",
        session_id="s-1",
        blocks=[TextBlock(text="draft"), TextBlock(text="final")],
    )
    assert result_of(ending(completed), kind="agent", as_json=True) == "final"


def test_a_completed_workflow_gives_its_value_and_blocks_as_json_data() -> None:
    value = RunCompleted(output=[DataBlock(data={"total": 5})])
    assert result_of(ending(value), kind="workflow") == {"total": 5}
    assert result_of(ending(value), kind="workflow", as_json=True) == {"total": 5}
    blocks = RunCompleted(output=[TextBlock(text="a"), TextBlock(text="b")])
    assert result_of(ending(blocks), kind="workflow") == [TextBlock(text="a"), TextBlock(text="b")]
    assert result_of(ending(blocks), kind="workflow", as_json=True) == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "b"},
    ]


@pytest.mark.parametrize("as_json", [False, True])
def test_a_failed_or_cancelled_run_raises_why(as_json: bool) -> None:
    failed = RunFailed(error_code=ErrorCode.DEADLINE, message="late", where="step")
    with pytest.raises(RunFailedError) as raised:
        result_of(ending(failed), kind="workflow", as_json=as_json)
    assert (raised.value.status, raised.value.error_code) == (RunStatus.FAILED, "deadline")
    assert (raised.value.reason, raised.value.where) == ("late", "step")
    with pytest.raises(RunFailedError) as cancelled:
        result_of(ending(RunCancelled(reason="enough")), kind="agent", as_json=as_json)
    assert cancelled.value.status is RunStatus.CANCELLED and cancelled.value.reason == "enough"


def test_a_run_waiting_for_an_answer_raises_with_the_question() -> None:
    asked = RunInterrupted(interrupt_id="q1", payload="ok?", expected=AnswerShape(options=["y"]))
    with pytest.raises(RunSuspendedError) as raised:
        result_of(ending(asked, seq=7), kind="workflow")
    assert raised.value.status is RunStatus.WAITING_ANSWER and raised.value.hint == "answer"
    pending = raised.value.pending
    assert isinstance(pending, InterruptResult)
    assert (pending.run_id, pending.interrupt_id, pending.payload) == ("run-1", "q1", "ok?")


def test_a_paused_run_raises_with_nothing_pending() -> None:
    with pytest.raises(RunSuspendedError) as raised:
        result_of(ending(RunPaused(reason="lunch")), kind="agent", as_json=True)
    assert raised.value.status is RunStatus.PAUSED and raised.value.pending is None
    assert raised.value.hint == "resume"
