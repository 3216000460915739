"""Subagents as child runs, and several approvals open at once, on a real Deck.

An agent calling a catalog agent or workflow as a tool starts it as a child run: a run of its own
in the log (``parent_run_id`` set, keyed ``"<parent run id>:<call id>"``), whose result reaches
the model as the tool output. A child that parks parks the parent; the child ending resumes it;
cancelling the parent cancels the child. The model is the loopback server, routed per agent by
the instructions each request carries.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from agentdeck import (
    Agent,
    ApprovalDecided,
    Deck,
    RunFailedError,
    RunStatus,
    RunSuspendedError,
    TurnResult,
    WorkflowCtx,
    tool,
    workflow,
)
from agentdeck.authoring.workflows import WorkflowDefinition
from agentdeck.deck.runs import Run
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunPaused
from agentdeck.ports import Observer
from agentdeck.settings import Settings
from agentdeck.vocabulary import WaitKind
from agentdeck_openai.testing import (
    LoopbackModelServer,
    ModelRequest,
    call,
    reply,
    tool_call,
    tool_calls,
)

LEAD = "You lead."
RESEARCH = "Find facts."


def to(instructions: str) -> Callable[[ModelRequest], bool]:
    """A script rule: the request comes from the agent with these instructions."""

    def rule(request: ModelRequest) -> bool:
        return request.instructions == instructions

    rule.__name__ = f"to({instructions!r})"
    return rule


@workflow
async def refund(order_id: str) -> dict[str, Any]:
    """Refund an order."""
    return {"order_id": order_id, "refunded": True}


@workflow
async def refund_after_ok(ctx: WorkflowCtx[Any], order_id: str) -> dict[str, Any]:
    """Refund an order once a person agrees."""
    agreed = await ctx.ask({"refund": order_id})
    return {"order_id": order_id, "agreed": agreed}


@workflow
async def broken(order_id: str) -> str:
    """Always fails."""
    raise RuntimeError(f"ledger locked for {order_id}")


researcher = Agent(name="Researcher", instructions=RESEARCH, description="Finds and checks facts.")


def lead_with(*subagents: Agent | WorkflowDefinition | str, **fields: Any) -> Agent:
    return Agent(name="Lead", instructions=LEAD, subagents=subagents, **fields)


def deck_with(
    server: LoopbackModelServer, lead: Agent, *, observers: tuple[Observer, ...] = ()
) -> Deck:
    return Deck(
        agents=[lead, researcher],
        workflows=[refund, refund_after_ok, broken],
        settings=Settings(env=server.env()),
        observers=observers,
    )


async def log_of(run: Run) -> list[Event]:
    return [event async for event in run.events()]


def tool_output_sent(server: LoopbackModelServer, call_id: str) -> str:
    for request in reversed(server.model_requests):
        if call_id in request.tool_outputs:
            return request.tool_outputs[call_id]
    raise AssertionError(f"no request sent the model an output for {call_id}")


async def until_ended(run: Run, after_seq: int) -> Event:
    """Follow ``run`` past ``after_seq`` to its next ending (terminal or suspension)."""
    ending: Event | None = None
    async for event in run.events(from_seq=after_seq + 1, follow=True):
        ending = event
    assert ending is not None
    return ending


# =========================================================================== child runs


async def test_a_workflow_subagent_is_a_child_run_whose_result_reaches_the_model(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(
        tool_call("refund", {"order_id": "A-1"}, call_id="w1"), reply("Refunded A-1.")
    )
    async with deck_with(model_server, lead_with("refund")) as deck:
        result = await deck.run("Lead", "refund A-1")
        assert isinstance(result, TurnResult) and result.output == "Refunded A-1."

        child = await deck.runs.get(key=f"{result.run_id}:w1")
        assert (child.name, child.kind) == ("refund", "workflow")
        assert await child.result() == {"order_id": "A-1", "refunded": True}
        child_log = await log_of(child)
        assert {event.parent_run_id for event in child_log} == {result.run_id}
        assert child_log[0].payload.input[0].data == {"order_id": "A-1"}  # type: ignore[union-attr]
        [by_id] = [run for run in await deck.runs.list() if run.id == child.id]
        assert by_id.name == "refund", "the child is listed like any run"

        sent = tool_output_sent(model_server, "w1")
        assert json.loads(sent) == {"order_id": "A-1", "refunded": True}
        offered = model_server.model_requests[0].body["tools"]
        [schema] = [t["parameters"] for t in offered if t["name"] == "refund"]
        assert schema["required"] == ["order_id"]
        parent_kinds = [event.kind for event in await log_of(await deck.runs.get(result.run_id))]
        assert parent_kinds.count("tool.call.started") == 1
        assert parent_kinds.count("tool.call.completed") == 1
        assert "approval.decided" not in parent_kinds


async def test_an_agent_subagent_is_a_child_run_of_its_own(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(
        tool_call("Researcher", {"input": "capital of France?"}, call_id="r1", when=to(LEAD)),
        reply("Paris", when=to(RESEARCH)),
        reply("It is Paris.", when=to(LEAD)),
    )
    async with deck_with(model_server, lead_with(researcher)) as deck:
        result = await deck.run("Lead", "what is the capital of France?")
        assert result.output == "It is Paris."

        child = await deck.runs.get(key=f"{result.run_id}:r1")
        assert (child.name, child.kind) == ("Researcher", "agent")
        child_result = await child.result()
        assert isinstance(child_result, TurnResult) and child_result.output == "Paris"
        assert (await log_of(child))[0].parent_run_id == result.run_id
        [asked] = [r for r in model_server.model_requests if r.instructions == RESEARCH]
        assert asked.last_user_text == "capital of France?"
        assert tool_output_sent(model_server, "r1") == "Paris"
        assert child_result.usage.requests == 1, "the child's usage is its own"
        assert result.usage.requests == 2


async def test_a_child_parked_on_a_question_pauses_the_parent_and_its_answer_resumes_it(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(
        tool_call("refund_after_ok", {"order_id": "A-7"}, call_id="w1"), reply("Refunded A-7.")
    )
    async with deck_with(model_server, lead_with("refund_after_ok")) as deck:
        parent = await deck.runs.start("Lead", "refund A-7")
        with pytest.raises(RunSuspendedError) as suspended:
            await parent
        assert suspended.value.status is RunStatus.PAUSED

        child = await deck.runs.get(key=f"{parent.id}:w1")
        assert await child.status() is RunStatus.WAITING_ANSWER
        paused = (await log_of(parent))[-1]
        assert paused.payload == RunPaused(
            reason=f"waiting for child run {child.id}",
            waiting_on=WaitKind.CHILD_RUNS,
            waiting_for=[child.id],
        )
        [question] = await child.pending_all()
        assert question.payload == {"refund": "A-7"}

        await child.answer(True)
        ending = await until_ended(parent, paused.seq)

        assert ending.kind == "run.completed"
        assert (await parent.result()).output == "Refunded A-7."
        assert await child.result() == {"order_id": "A-7", "agreed": True}
        assert json.loads(tool_output_sent(model_server, "w1")) == {
            "order_id": "A-7",
            "agreed": True,
        }
        assert len(await deck.runs.list()) == 2, "the continuation attached to the same child"
        kinds = [event.kind for event in await log_of(parent)]
        assert kinds.count("tool.call.started") == kinds.count("tool.call.completed") == 1
        model_server.script.assert_consumed()


async def test_cancelling_a_parent_that_waits_on_a_parked_child_cancels_the_child(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(tool_call("refund_after_ok", {"order_id": "A-8"}, call_id="w1"))
    async with deck_with(model_server, lead_with("refund_after_ok")) as deck:
        parent = await deck.runs.start("Lead", "refund A-8")
        with pytest.raises(RunSuspendedError):
            await parent
        child = await deck.runs.get(key=f"{parent.id}:w1")
        assert await child.status() is RunStatus.WAITING_ANSWER

        await parent.cancel("customer hung up")

        assert await parent.status() is RunStatus.CANCELLED
        assert await child.status() is RunStatus.CANCELLED
        with pytest.raises(RunFailedError) as cancelled:
            await child
        assert cancelled.value.reason == "customer hung up"


class Tap(Observer):
    """Sets ``seen`` when an event matching ``wanted`` has been recorded."""

    def __init__(self, wanted: Callable[[Event], bool]) -> None:
        self.wanted = wanted
        self.seen = asyncio.Event()

    async def emit(self, event: Event) -> None:
        if self.wanted(event):
            self.seen.set()


async def test_cancelling_a_parent_while_its_child_streams_cancels_both(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(
        tool_call("Researcher", {"input": "everything"}, call_id="r1", when=to(LEAD)),
        reply([f"w{i} " for i in range(300)], delay=0.01, when=to(RESEARCH)),
    )
    tap = Tap(lambda event: event.kind == "text.delta" and event.parent_run_id is not None)
    async with deck_with(model_server, lead_with("Researcher"), observers=(tap,)) as deck:
        parent = await deck.runs.start("Lead", "tell me everything")
        await asyncio.wait_for(tap.seen.wait(), timeout=30)

        await parent.cancel("enough")

        with pytest.raises(RunFailedError):
            await asyncio.wait_for(parent.result(), timeout=30)
        child = await deck.runs.get(key=f"{parent.id}:r1")
        assert await child.status() is RunStatus.CANCELLED
        assert await parent.status() is RunStatus.CANCELLED
        child_kinds = [event.kind for event in await log_of(child)]
        assert child_kinds[-1] == "run.cancelled" and child_kinds.count("text.delta") < 300
        parent_log = await log_of(parent)
        assert [e.kind for e in parent_log[-3:]] == [
            "control.requested",
            "control.observed",
            "run.cancelled",
        ]
        assert parent_log[-2].payload.safe_point == "tool_dispatch"  # type: ignore[union-attr]


async def test_a_child_that_fails_fails_the_parent_as_its_tools_error(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(tool_call("broken", {"order_id": "A-9"}, call_id="w1"))
    async with deck_with(model_server, lead_with("broken")) as deck:
        with pytest.raises(RunFailedError) as failed:
            await deck.run("Lead", "refund A-9")
        assert (failed.value.error_code, failed.value.where) == ("tool_error", "broken")
        child = await deck.runs.get(key=f"{failed.value.run_id}:w1")
        assert await child.status() is RunStatus.FAILED
        parent_log = "".join(event.to_json() for event in await log_of(child))
        assert "ledger locked" not in parent_log


async def test_arguments_a_workflow_cannot_take_reach_the_model_and_start_no_child(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(
        tool_call("refund", {"order": "A-1"}, call_id="w1"),
        tool_call("refund", {"order_id": "A-1"}, call_id="w2"),
        reply("Refunded."),
    )
    async with deck_with(model_server, lead_with(refund)) as deck:
        result = await deck.run("Lead", "refund A-1")
        assert result.output == "Refunded."
        sent = tool_output_sent(model_server, "w1")
        assert sent.startswith("Error: the workflow 'refund' was not started")
        assert "'order_id'" in sent
        names = [run.name for run in await deck.runs.list()]
        assert names == ["Lead", "refund"], "only the call that fits started a child"


async def test_a_subagent_in_interrupt_on_starts_its_child_only_once_approved(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(
        tool_calls(
            call("refund", {"order_id": "A-1"}, call_id="w1"),
            call("refund", {"order_id": "A-2"}, call_id="w2"),
        ),
        reply("Refunded A-1 only."),
    )
    lead = lead_with("refund", interrupt_on=["refund"])
    async with deck_with(model_server, lead) as deck:
        parked = await deck.runs.start("Lead", "refund both")
        with pytest.raises(RunSuspendedError):
            await parked
        asked = await parked.pending_all()
        assert [q.payload["call_id"] for q in asked] == ["w1", "w2"]
        assert [run.name for run in await deck.runs.list()] == ["Lead"], "no child yet"

        await parked.answer({"approved": True}, interrupt_id=asked[0].interrupt_id)
        await parked.answer(
            {"approved": False, "message": "Not A-2."}, interrupt_id=asked[1].interrupt_id
        )
        result = await parked.result()

        assert result.output == "Refunded A-1 only."
        assert [run.name for run in await deck.runs.list()] == ["Lead", "refund"]
        assert (await deck.runs.get(key=f"{parked.id}:w1")).name == "refund"
        assert tool_output_sent(model_server, "w2") == "Not A-2."


# =========================================================================== approvals


@tool
def cancel_order(order_id: str) -> str:
    """Cancel an order."""
    return f"cancelled {order_id}"


async def test_two_parallel_approvals_are_open_at_once_and_answered_by_id(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(
        tool_calls(
            call("cancel_order", {"order_id": "A-1"}, call_id="c1"),
            call("cancel_order", {"order_id": "A-2"}, call_id="c2"),
        ),
        reply("Cancelled A-1; kept A-2."),
    )
    bot = Agent(name="Lead", instructions=LEAD, tools=[cancel_order], interrupt_on=["cancel_order"])
    async with deck_with(model_server, bot) as deck:
        run = await deck.runs.start("Lead", "cancel both")
        with pytest.raises(RunSuspendedError):
            await run
        assert await run.status() is RunStatus.WAITING_ANSWER
        pending = await run.pending_all()
        assert len(pending) == 2
        by_call = {q.payload["call_id"]: q.interrupt_id for q in pending}
        assert set(by_call) == {"c1", "c2"}

        await run.answer({"approved": False}, interrupt_id=by_call["c2"])
        assert await run.status() is RunStatus.WAITING_ANSWER, "one question is still open"
        await run.answer({"approved": True}, interrupt_id=by_call["c1"])
        result = await run.result()

        assert result.output == "Cancelled A-1; kept A-2."
        decided = [e.payload for e in await log_of(run) if isinstance(e.payload, ApprovalDecided)]
        assert sorted((d.call_id, d.approved, d.interrupt_id) for d in decided) == [
            ("c1", True, by_call["c1"]),
            ("c2", False, by_call["c2"]),
        ]
        assert tool_output_sent(model_server, "c1") == "cancelled A-1"
        assert tool_output_sent(model_server, "c2") == "The tool call was not approved."
