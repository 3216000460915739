"""Tool approvals: a run parks on a call that needs one, and continues from the store alone.

"The store alone" is what a restarted worker has: the run's log read back from JSON and the
engine-state area. Every continuation here runs on a *fresh* engine instance built from the same
settings, so nothing in memory carries over.
"""

from __future__ import annotations

from typing import Any

import engine_support as support  # loaded by conftest.py
import pytest

from agentdeck import Agent
from agentdeck.authoring.context import ToolCtx
from agentdeck.authoring.tools import tool
from agentdeck.errors import ReplayError
from agentdeck.model.content import TextBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    ApprovalDecided,
    RunInterrupted,
    ToolCallCompleted,
    ToolCallStarted,
    UsageReported,
)
from agentdeck.ports import Entry
from agentdeck.testing.engine_kit import (
    DriveResult,
    MemoryStateArea,
    check_completed,
    check_interrupted,
    drive,
    make_invocation,
)
from agentdeck.vocabulary import AnswerOrigin, InterruptReason
from agentdeck_openai.approvals import APPROVAL_SHAPE, STATE_NAME
from agentdeck_openai.testing import LoopbackModelServer, call, reply, tool_call, tool_calls

DELETED: list[str] = []


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    DELETED.append(path)
    return f"deleted {path}"


@tool(needs_approval=True)
def wire_money(amount: int) -> str:
    """Send money."""
    return f"sent {amount}"


@pytest.fixture(autouse=True)
def _no_deletions() -> None:
    DELETED.clear()


CLEANER = Agent(
    name="Cleaner", instructions="Tidy up.", tools=[delete_file], interrupt_on=["delete_file"]
)


async def start(server: LoopbackModelServer, agent: Agent, context: Any = None) -> DriveResult:
    async with support.opened(support.make_engine(server)) as engine:
        return await drive(engine, make_invocation(engine, agent, "tidy", context=context))


async def answer_elsewhere(
    server: LoopbackModelServer,
    agent: Agent,
    parked: DriveResult,
    answers: dict[str, Any],
    context: Any = None,
) -> DriveResult:
    """Continue ``parked`` as a restarted worker would: a new engine, the log from JSON, a copy
    of the state area."""
    history = [Event.from_json(event.to_json()) for event in parked.events]
    area = parked.state_area
    assert isinstance(area, MemoryStateArea)
    async with support.opened(support.make_engine(server)) as fresh:
        return await drive(
            fresh,
            make_invocation(fresh, agent, context=context),
            history=history,
            entry=Entry.ANSWERED,
            answers=answers,
            state=area.copy(),
        )


async def test_a_call_in_interrupt_on_parks_the_run_with_the_tool_and_its_arguments(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(tool_call("delete_file", {"path": "notes.txt"}, call_id="c1"))
    parked = await start(model_server, CLEANER)

    interrupt_id = check_interrupted(parked)
    asked = parked.last.payload
    assert isinstance(asked, RunInterrupted)
    assert asked.reason == InterruptReason.APPROVAL
    assert asked.payload == {
        "tool": "delete_file",
        "args": {"path": "notes.txt"},
        "call_id": "c1",
        "agent": "Cleaner",
    }
    assert asked.expected == APPROVAL_SHAPE
    assert interrupt_id == "approval-c1"
    assert DELETED == []
    assert STATE_NAME in parked.state_area.snapshot()  # type: ignore[attr-defined]
    [started] = support.payloads(parked, ToolCallStarted)
    assert started.call_id == "c1"


async def test_an_approval_answered_on_a_fresh_engine_runs_the_tool_and_completes(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(
        tool_call("delete_file", {"path": "notes.txt"}, call_id="c1"), reply("Deleted.")
    )
    parked = await start(model_server, CLEANER)
    interrupt_id = check_interrupted(parked)

    done = await answer_elsewhere(model_server, CLEANER, parked, {interrupt_id: {"approved": True}})

    assert check_completed(done) == [TextBlock(text="Deleted.")]
    assert DELETED == ["notes.txt"]
    [decided] = support.payloads(done.new_events, ApprovalDecided)
    assert (decided.call_id, decided.tool, decided.approved) == ("c1", "delete_file", True)
    assert (decided.origin, decided.interrupt_id) == (AnswerOrigin.HUMAN, interrupt_id)
    [completed] = support.payloads(done.new_events, ToolCallCompleted)
    assert (completed.call_id, completed.tool, completed.result_preview) == (
        "c1",
        "delete_file",
        "deleted notes.txt",
    )
    assert support.tool_output_sent(model_server, "c1") == "deleted notes.txt"
    usage = done.last.payload.usage  # type: ignore[union-attr]
    assert usage.requests == len(support.payloads(done, UsageReported)) == 2
    assert STATE_NAME not in done.state_area.snapshot()  # type: ignore[attr-defined]


async def test_a_rejection_never_runs_the_tool_and_the_model_gets_the_message(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(
        tool_call("delete_file", {"path": "thesis.tex"}, call_id="c1"), reply("Understood.")
    )
    parked = await start(model_server, CLEANER)
    interrupt_id = check_interrupted(parked)

    done = await answer_elsewhere(
        model_server,
        CLEANER,
        parked,
        {interrupt_id: {"approved": False, "message": "Never delete the thesis."}},
    )

    assert check_completed(done) == [TextBlock(text="Understood.")]
    assert DELETED == []
    [decided] = support.payloads(done.new_events, ApprovalDecided)
    assert (decided.approved, decided.message) == (False, "Never delete the thesis.")
    assert support.tool_output_sent(model_server, "c1") == "Never delete the thesis."


async def test_parallel_calls_needing_approval_open_separate_interrupts_together(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(
        tool_calls(
            call("delete_file", {"path": "a.txt"}, call_id="ca"),
            call("delete_file", {"path": "b.txt"}, call_id="cb"),
        ),
        reply("Deleted a, kept b."),
    )
    parked = await start(model_server, CLEANER)

    parked.assert_clean()
    assert parked.kinds[-2:] == ["run.interrupted", "run.interrupted"]
    assert parked.open_interrupts == ["approval-ca", "approval-cb"]
    asked = support.payloads(parked, RunInterrupted)
    assert [(a.payload["call_id"], a.payload["args"]) for a in asked] == [
        ("ca", {"path": "a.txt"}),
        ("cb", {"path": "b.txt"}),
    ]
    assert DELETED == []  # nothing runs until every call is decided

    done = await answer_elsewhere(
        model_server,
        CLEANER,
        parked,
        {"approval-ca": True, "approval-cb": {"approved": False}},
    )

    assert check_completed(done) == [TextBlock(text="Deleted a, kept b.")]
    assert DELETED == ["a.txt"]
    decided = support.payloads(done.new_events, ApprovalDecided)
    assert [(d.call_id, d.approved, d.origin, d.interrupt_id) for d in decided] == [
        ("ca", True, AnswerOrigin.HUMAN, "approval-ca"),
        ("cb", False, AnswerOrigin.HUMAN, "approval-cb"),
    ]
    assert support.tool_output_sent(model_server, "ca") == "deleted a.txt"
    assert support.tool_output_sent(model_server, "cb") == "The tool call was not approved."
    assert "run.interrupted" not in support.kinds(done)


async def test_a_policy_and_two_people_decide_one_turn_and_only_people_park_it(
    model_server: LoopbackModelServer,
) -> None:
    agent = CLEANER.clone(hooks=Policy())
    model_server.script.add(
        tool_calls(
            call("delete_file", {"path": "/tmp/cache"}, call_id="t1"),
            call("delete_file", {"path": "notes.txt"}, call_id="t2"),
            call("delete_file", {"path": "draft.txt"}, call_id="t3"),
        ),
        reply("Done."),
    )
    parked = await start(model_server, agent)

    assert parked.open_interrupts == ["approval-t2", "approval-t3"]
    assert DELETED == []

    done = await answer_elsewhere(
        model_server, agent, parked, {"approval-t3": True, "approval-t2": False}
    )

    check_completed(done)
    assert sorted(DELETED) == ["/tmp/cache", "draft.txt"]
    decided = support.payloads(done, ApprovalDecided)
    assert [(d.call_id, d.approved, d.origin) for d in decided] == [
        ("t1", True, AnswerOrigin.POLICY),
        ("t2", False, AnswerOrigin.HUMAN),
        ("t3", True, AnswerOrigin.HUMAN),
    ]


async def test_a_tools_own_needs_approval_parks_too(model_server: LoopbackModelServer) -> None:
    model_server.script.add(tool_call("wire_money", {"amount": 5}, call_id="w1"), reply("Sent."))
    agent = Agent(name="Bank", instructions="x", tools=[wire_money])
    parked = await start(model_server, agent)
    interrupt_id = check_interrupted(parked)

    done = await answer_elsewhere(model_server, agent, parked, {interrupt_id: {"approved": True}})

    assert check_completed(done) == [TextBlock(text="Sent.")]
    assert support.tool_output_sent(model_server, "w1") == "sent 5"


async def test_the_continued_tool_receives_the_context_given_to_the_continuation(
    model_server: LoopbackModelServer,
) -> None:
    @tool
    def archive(ctx: ToolCtx[dict[str, str]], path: str) -> str:
        """Archive a file."""
        return f"{ctx.data['user']} archived {path}"

    agent = Agent(name="Archivist", instructions="x", tools=[archive], interrupt_on=["archive"])
    model_server.script.add(tool_call("archive", {"path": "x"}, call_id="a1"), reply("ok"))
    parked = await start(model_server, agent, context={"user": "first"})
    interrupt_id = check_interrupted(parked)

    done = await answer_elsewhere(
        model_server, agent, parked, {interrupt_id: {"approved": True}}, context={"user": "ada"}
    )

    check_completed(done)
    assert support.tool_output_sent(model_server, "a1") == "ada archived x"
    assert b"first" not in parked.state_area.snapshot()[STATE_NAME]  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- policy


class Policy:
    """Approves deletions under /tmp, rejects the rest of /, leaves anything else to a person."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str, Any]] = []

    def approve_tool_call(self, agent: str, tool: str, args: Any) -> Any:
        self.asked.append((agent, tool, args))
        path = args.get("path", "")
        if path.startswith("/tmp/"):
            return True
        if path.startswith("/"):
            return {"approved": False, "message": "System files are off limits."}
        return None


async def test_a_policy_decision_never_parks_and_is_recorded_as_policy(
    model_server: LoopbackModelServer,
) -> None:
    policy = Policy()
    agent = CLEANER.clone(hooks=policy)
    model_server.script.add(
        tool_calls(
            call("delete_file", {"path": "/tmp/cache"}, call_id="t1"),
            call("delete_file", {"path": "/etc/passwd"}, call_id="t2"),
        ),
        reply("Cleaned the cache."),
    )
    done = await start(model_server, agent)

    assert check_completed(done) == [TextBlock(text="Cleaned the cache.")]
    assert "run.interrupted" not in support.kinds(done)
    assert DELETED == ["/tmp/cache"]
    decided = support.payloads(done, ApprovalDecided)
    assert [(d.call_id, d.approved, d.origin, d.message) for d in decided] == [
        ("t1", True, AnswerOrigin.POLICY, None),
        ("t2", False, AnswerOrigin.POLICY, "System files are off limits."),
    ]
    assert support.tool_output_sent(model_server, "t2") == "System files are off limits."
    assert policy.asked[0] == ("Cleaner", "delete_file", {"path": "/tmp/cache"})


async def test_a_policy_that_abstains_leaves_the_call_to_a_person(
    model_server: LoopbackModelServer,
) -> None:
    agent = CLEANER.clone(hooks=Policy())
    model_server.script.add(
        tool_calls(
            call("delete_file", {"path": "/tmp/cache"}, call_id="t1"),
            call("delete_file", {"path": "notes.txt"}, call_id="t2"),
        ),
        reply("Done."),
    )
    parked = await start(model_server, agent)

    interrupt_id = check_interrupted(parked)
    assert interrupt_id == "approval-t2"
    [by_policy] = support.payloads(parked, ApprovalDecided)
    assert (by_policy.call_id, by_policy.origin) == ("t1", AnswerOrigin.POLICY)

    done = await answer_elsewhere(model_server, agent, parked, {interrupt_id: True})

    check_completed(done)
    assert sorted(DELETED) == ["/tmp/cache", "notes.txt"]
    [by_person] = support.payloads(done.new_events, ApprovalDecided)
    assert (by_person.call_id, by_person.origin) == ("t2", AnswerOrigin.HUMAN)


async def test_an_answer_that_is_not_an_approval_rejects_the_call(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(tool_call("delete_file", {"path": "x"}, call_id="c1"), reply("ok"))
    parked = await start(model_server, CLEANER)
    interrupt_id = check_interrupted(parked)

    done = await answer_elsewhere(model_server, CLEANER, parked, {interrupt_id: "sure, why not"})

    check_completed(done)
    assert DELETED == []
    [decided] = support.payloads(done.new_events, ApprovalDecided)
    assert decided.approved is False


async def test_a_parked_run_whose_agent_changed_is_refused_as_a_replay_error(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(tool_call("delete_file", {"path": "x"}, call_id="c1"))
    parked = await start(model_server, CLEANER)
    interrupt_id = check_interrupted(parked)
    changed = CLEANER.clone(name="Tidier")  # the state names an agent this graph lacks

    done = await answer_elsewhere(model_server, changed, parked, {interrupt_id: True})

    assert isinstance(done.raised, ReplayError)
    assert done.raised.reason == "code_changed"
    assert done.last.kind == "run.failed"
    assert DELETED == []
