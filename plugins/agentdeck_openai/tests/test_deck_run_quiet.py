"""``Deck.run`` plays quietly (``Runner.run``): the same log as a stream, less the deltas.

Each comparison plays one script twice, on two loopback servers holding identical scripts (so
ids minted by the server match): once with ``deck.run`` (which asks for no deltas) and once with
``deck.stream``. Everything but ``text.delta``/``thought.delta`` must be recorded identically,
and the model must have been asked without ``stream`` by the first and with it by the second.
Then run control: a quiet play's safe points (the dispatch gate, after a final reply, before a
settled turn continues), each paused and resumed without asking the model or running a tool
twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import engine_support as support  # loaded by conftest.py
import pytest
from agents import Agent as SDKAgent
from agents.items import MessageOutputItem
from agents.models.fake_id import FAKE_RESPONSES_ID
from agents.run_context import RunContextWrapper
from agents.stream_events import RawResponsesStreamEvent, RunItemStreamEvent
from agents.tool import FunctionTool
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
)
from pydantic import BaseModel

from agentdeck import Agent, Deck, InterruptResult, RunFailedError, RunStatus, TurnResult, tool
from agentdeck.errors import ConfigError
from agentdeck.model.content import ImageBlock, TextBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import MessageCompleted, RunInterrupted, TextDelta, UsageReported
from agentdeck.ports import Engine, Entry, Invocable, Invocation
from agentdeck.settings import Settings
from agentdeck.testing.engine_kit import (
    DriveResult,
    check_completed,
    check_control,
    drive,
    make_invocation,
)
from agentdeck.vocabulary import ControlVerb, SafePoint
from agentdeck_openai.dispatch_gate import DispatchGate, declares_approval, gated
from agentdeck_openai.scope import RunScope
from agentdeck_openai.settings import RunnerSettings
from agentdeck_openai.testing import (
    LoopbackModelServer,
    ModelRequest,
    Script,
    Turn,
    Usage,
    call,
    handoff,
    rate_limited,
    reply,
    server_error,
    structured,
    tool_call,
    tool_calls,
)
from agentdeck_openai.translate import Translator

DELTAS = frozenset({"text.delta", "thought.delta"})
RAN: list[str] = []


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    RAN.append(order_id)
    return f"order {order_id} is in transit"


def explode(order_id: str) -> str:
    """Always fails."""
    raise RuntimeError("no")


@tool
def sketch() -> list[Any]:
    """Draw the route."""
    return [ImageBlock(media_type="image/png", data_b64="iVBORw0KGgo="), TextBlock(text="route")]


class Invoice(BaseModel):
    number: str
    total: float


BOT = Agent(name="bot", instructions="Help.", tools=[lookup, explode, sketch])
BILLING = Agent(name="Billing", instructions="Bill.", output_type=Invoice)
TRIAGE = Agent(name="Triage", instructions="Route.", handoffs=[BILLING])


@dataclass(frozen=True)
class Played:
    """One play of a script: the run's log and what the model was asked."""

    events: list[Event]
    requests: list[ModelRequest]

    @property
    def kinds(self) -> list[str]:
        return [event.kind for event in self.events]

    def recorded(self) -> list[dict[str, Any]]:
        """Every payload but the deltas, as JSON data, with the run's own id masked where the
        engine makes a message id up from it (Chat Completions items carry none)."""
        run_id = self.events[0].run_id
        recorded = []
        for event in self.events:
            if event.kind in DELTAS:
                continue
            recorded.append(json.loads(event.payload.model_dump_json().replace(run_id, "<run>")))
        return recorded


async def play(
    turns: Callable[[], Sequence[Turn]],
    agent: str,
    *,
    streamed: bool,
    chat: bool = False,
    **env: str,
) -> Played:
    """Play ``agent`` on a fresh server scripted with ``turns()``: ``deck.stream`` or
    ``deck.run`` (a run that fails or parks included)."""
    with LoopbackModelServer(Script(list(turns()))) as server:
        settings = Settings(
            env={**server.env(), "OPENAI_USE_RESPONSES": "false" if chat else "true", **env}
        )
        async with Deck(agents=[BOT, TRIAGE], settings=settings, observers=()) as deck:
            if streamed:
                events = [event async for event in deck.stream(agent, "where is A-1?")]
            else:
                try:
                    result = await deck.run(agent, "where is A-1?")
                except RunFailedError as failed:
                    run_id = failed.run_id
                else:
                    assert isinstance(result, TurnResult | InterruptResult)
                    run_id = result.run_id
                run = await deck.runs.get(run_id)
                events = [event async for event in run.events()]
        return Played(events=events, requests=list(server.model_requests))


SCRIPTS: dict[str, Callable[[], Sequence[Turn]]] = {
    "tool turn": lambda: [
        tool_call(
            "lookup",
            {"order_id": "A-1"},
            reasoning="I should look it up",
            usage=Usage(input_tokens=120, output_tokens=7, cached_tokens=100),
        ),
        reply("It is in transit.", reasoning="Now answer", usage=Usage(200, 9, reasoning_tokens=3)),
    ],
    "two tools at once, then text": lambda: [
        tool_calls(call("lookup", {"order_id": "A-1"}), call("lookup", {"order_id": "A-2"})),
        reply(["Both ", "are ", "in ", "transit."]),
    ],
    "malformed tool-call JSON": lambda: [
        tool_call("lookup", '{"order_id": '),
        reply("Sorry, let me retry that."),
    ],
    "a 429, then success": lambda: [
        rate_limited(),
        tool_call("lookup", {"order_id": "A-1"}),
        reply("In transit."),
    ],
    "HTTP 500": lambda: [server_error("upstream broke")],
    "a raising tool": lambda: [tool_call("explode", {"order_id": "A-1"})],
    "no usage reported": lambda: [reply("fine", usage=None)],
    "an image tool": lambda: [tool_call("sketch", {}), reply("Here is the route.")],
}


@pytest.mark.parametrize("chat", [False, True], ids=["responses", "chat"])
@pytest.mark.parametrize("name", list(SCRIPTS))
async def test_deck_run_records_what_a_stream_records_less_the_deltas(
    name: str, chat: bool
) -> None:
    RAN.clear()
    streamed = await play(SCRIPTS[name], "bot", streamed=True, chat=chat)
    ran_streamed = list(RAN)
    RAN.clear()
    whole = await play(SCRIPTS[name], "bot", streamed=False, chat=chat)

    assert whole.recorded() == streamed.recorded()
    assert not DELTAS & set(whole.kinds)
    assert ran_streamed == RAN
    assert [request.stream for request in streamed.requests] == [True] * len(streamed.requests)
    assert [request.stream for request in whole.requests] == [False] * len(whole.requests)
    assert len(whole.requests) == len(streamed.requests)


async def test_the_comparison_sees_deltas_and_usage_where_there_are_some() -> None:
    """Guards the test above against comparing empty logs: the stream has deltas, both have
    the scripted usage per call, and Deck.run's total is their sum."""
    streamed = await play(SCRIPTS["tool turn"], "bot", streamed=True)
    whole = await play(SCRIPTS["tool turn"], "bot", streamed=False)
    assert {"text.delta", "thought.delta"} <= set(streamed.kinds)
    used = [
        (e.payload.usage.input_tokens, e.payload.usage.output_tokens)
        for e in whole.events
        if isinstance(e.payload, UsageReported)
    ]
    assert used == [(120, 7), (200, 9)]
    completed = whole.events[-1].payload
    assert completed.kind == "run.completed"
    assert completed.usage.requests == 2 and completed.usage.total_tokens == 336  # type: ignore[union-attr]
    assert "tool.call.completed" in whole.kinds and "message.completed" in whole.kinds
    drawn = await play(SCRIPTS["an image tool"], "bot", streamed=False)
    assert "artifact.created" in drawn.kinds


@pytest.mark.parametrize("chat", [False, True], ids=["responses", "chat"])
async def test_a_handoff_to_structured_output_is_recorded_alike(chat: bool) -> None:
    def turns() -> list[Turn]:
        return [handoff("Billing"), structured({"number": "A-1", "total": 12.5})]

    streamed = await play(turns, "Triage", streamed=True, chat=chat)
    whole = await play(turns, "Triage", streamed=False, chat=chat)
    assert whole.recorded() == streamed.recorded()
    assert "agent.changed" in whole.kinds
    assert whole.events[-1].payload.output[-1].data == {"number": "A-1", "total": 12.5}  # type: ignore[union-attr]


async def test_deck_run_parks_on_an_approval_and_the_answer_continues_it(
    model_server: LoopbackModelServer,
) -> None:
    RAN.clear()
    model_server.script.add(tool_call("lookup", {"order_id": "A-7"}), reply("It moves."))
    careful = Agent(name="careful", instructions="Help.", tools=[lookup], interrupt_on=["lookup"])
    async with Deck(
        agents=[careful], settings=Settings(env=model_server.env()), observers=()
    ) as deck:
        parked = await deck.run("careful", "where is A-7?")
        assert isinstance(parked, InterruptResult) and parked.payload["tool"] == "lookup"
        assert [r.stream for r in model_server.model_requests] == [False]
        run = await deck.runs.get(parked.run_id)
        assert await run.status() is RunStatus.WAITING_ANSWER
        assert RAN == []
        await run.answer({"approved": True})
        result = await run
        assert isinstance(result, TurnResult) and result.output == "It moves."
    assert RAN == ["A-7"]


async def test_the_setting_streams_deck_run_too() -> None:
    played = await play(
        SCRIPTS["tool turn"], "bot", streamed=False, AGENTDECK_RUNNER_DELTAS="always"
    )
    assert {"text.delta", "thought.delta"} <= set(played.kinds)
    assert [request.stream for request in played.requests] == [True, True]


def test_the_setting_takes_only_its_two_values() -> None:
    assert Settings(env={}).section(RunnerSettings).deltas == "when-asked"
    with pytest.raises(ConfigError, match="AGENTDECK_RUNNER_DELTAS"):
        Settings(env={"AGENTDECK_RUNNER_DELTAS": "sometimes"}).section(RunnerSettings)


# --------------------------------------------------------------------------- run control


COUNTER = Agent(name="Counter", instructions="Count.", tools=[lookup])


async def resume_quietly(engine: Engine, agent: Agent, paused: DriveResult) -> DriveResult:
    """Continue a paused drive as ``Deck.run``'s continuation would, asking for no deltas."""
    return await drive(
        engine,
        replace(make_invocation(engine, agent), deltas=False),
        history=paused.events,
        entry=Entry.AFTER_PAUSE,
        state=paused.state_area,
    )


TALKER = Agent(name="Talker", instructions="Talk.")


async def test_a_pause_at_the_dispatch_gate_holds_the_call_and_a_new_engine_runs_it_once(
    model_server: LoopbackModelServer,
) -> None:
    RAN.clear()
    model_server.script.add(tool_call("lookup", {"order_id": "A-2"}), reply("done"))
    async with support.opened(support.make_engine(model_server)) as engine:
        invocation = replace(make_invocation(engine, COUNTER, "go"), deltas=False)
        # The first safe point: the dispatch gate, once the reply's events are recorded.
        paused = await drive(engine, invocation, directives={1: ControlVerb.PAUSE})
    check_control(paused, ControlVerb.PAUSE)
    assert paused.safe_points == (SafePoint.TOOL_DISPATCH,)
    recorded = ["usage.reported", "tool.call.started", "control.requested"]
    assert support.kinds(paused)[1:4] == recorded
    assert RAN == []

    async with support.opened(support.make_engine(model_server)) as fresh:
        resumed = await resume_quietly(fresh, COUNTER, paused)
    assert check_completed(resumed) == [TextBlock(text="done")]
    assert RAN == ["A-2"]
    # The held call ran from the saved state: the model was not asked for it again.
    assert [request.stream for request in model_server.model_requests] == [False, False]
    assert resumed.safe_points[0] == SafePoint.TOOL_DISPATCH
    assert [event.kind for event in resumed.new_events][:2] == [
        "run.resumed",
        "tool.call.completed",
    ]


async def test_a_pause_holds_every_call_of_the_turn_and_the_resumed_run_runs_each_once(
    model_server: LoopbackModelServer,
) -> None:
    """One dispatch safe point per model turn: the SDK checks every call before it runs any."""
    RAN.clear()
    model_server.script.add(
        tool_calls(call("lookup", {"order_id": "B-1"}), call("lookup", {"order_id": "B-2"})),
        reply("both done"),
    )
    async with support.opened(support.make_engine(model_server)) as engine:
        invocation = replace(make_invocation(engine, COUNTER, "go"), deltas=False)
        paused = await drive(engine, invocation, directives={1: ControlVerb.PAUSE})
        check_control(paused, ControlVerb.PAUSE)
        assert paused.safe_points == (SafePoint.TOOL_DISPATCH,)
        assert RAN == []
        resumed = await resume_quietly(engine, COUNTER, paused)
    assert check_completed(resumed) == [TextBlock(text="both done")]
    assert RAN == ["B-1", "B-2"]
    started = [e.payload.call_id for e in paused.events if e.kind == "tool.call.started"]
    completed = [e.payload.call_id for e in resumed.events if e.kind == "tool.call.completed"]
    assert sorted(completed) == sorted(started) and len(started) == 2


async def test_a_cancel_at_the_dispatch_gate_never_runs_the_tool(
    model_server: LoopbackModelServer,
) -> None:
    RAN.clear()
    model_server.script.add(tool_call("lookup", {"order_id": "A-3"}))
    async with support.opened(support.make_engine(model_server)) as engine:
        invocation = replace(make_invocation(engine, COUNTER, "go"), deltas=False)
        result = await drive(engine, invocation, directives={1: ControlVerb.CANCEL})

    check_control(result, ControlVerb.CANCEL)
    assert result.safe_points == (SafePoint.TOOL_DISPATCH,)
    assert RAN == []
    assert result.state_area.snapshot() == {}  # type: ignore[attr-defined]


async def test_a_cancel_waits_for_the_model_call_in_progress_then_stops(
    model_server: LoopbackModelServer,
) -> None:
    """A quiet reply is one item: the safe point comes when it has ended (and is recorded)."""
    model_server.script.add(reply([f"w{i} " for i in range(20)], delay=0.01))
    async with support.opened(support.make_engine(model_server)) as engine:
        invocation = replace(make_invocation(engine, TALKER, "talk"), deltas=False)
        result = await drive(engine, invocation, directives={1: ControlVerb.CANCEL})

    check_control(result, ControlVerb.CANCEL)
    assert result.safe_points == (SafePoint.STREAM_ITEM,)
    assert support.kinds(result) == [
        "run.started",
        "usage.reported",
        "message.completed",
        "control.requested",
        "control.observed",
        "run.cancelled",
    ]
    assert not support.payloads(result, TextDelta)


async def test_a_pause_after_the_final_reply_completes_with_it_without_asking_again(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(reply("all said"))
    async with support.opened(support.make_engine(model_server)) as engine:
        invocation = replace(make_invocation(engine, TALKER, "talk"), deltas=False)
        paused = await drive(engine, invocation, directives={1: ControlVerb.PAUSE})
        check_control(paused, ControlVerb.PAUSE)
        resumed = await resume_quietly(engine, TALKER, paused)
    assert check_completed(resumed) == [TextBlock(text="all said")]
    assert [event.kind for event in resumed.new_events] == ["run.resumed", "run.completed"]
    assert resumed.events[-1].payload.usage.requests == 1  # type: ignore[union-attr]
    assert len(model_server.model_requests) == 1


async def test_a_pause_before_an_approved_call_runs_keeps_the_approval(
    model_server: LoopbackModelServer,
) -> None:
    """Continuing a settled turn is a dispatch safe point: a pause there saves the approval,
    and the resumed run runs the call once, asking nobody again."""
    RAN.clear()
    model_server.script.add(tool_call("lookup", {"order_id": "C-1"}), reply("moved"))
    careful = Agent(name="careful", instructions="Help.", tools=[lookup], interrupt_on=["lookup"])
    async with support.opened(support.make_engine(model_server)) as engine:
        parked = await drive(engine, replace(make_invocation(engine, careful, "go"), deltas=False))
        interrupted = support.payloads(parked, RunInterrupted)
        assert len(interrupted) == 1
        answered = await drive(
            engine,
            replace(make_invocation(engine, careful), deltas=False),
            history=parked.events,
            entry=Entry.ANSWERED,
            answers={interrupted[0].interrupt_id: {"approved": True}},
            state=parked.state_area,
            directives={1: ControlVerb.PAUSE},
        )
        check_control(answered, ControlVerb.PAUSE)
        assert answered.safe_points == (SafePoint.TOOL_DISPATCH,)
        assert RAN == []
        resumed = await resume_quietly(engine, careful, answered)
    assert check_completed(resumed) == [TextBlock(text="moved")]
    assert RAN == ["C-1"]
    assert not [e for e in resumed.new_events if isinstance(e.payload, RunInterrupted)]


async def test_an_engine_invocation_asking_for_deltas_streams(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(reply(["a ", "b"]), reply(["a ", "b"]))
    async with support.opened(support.make_engine(model_server)) as engine:
        asked = await drive(engine, make_invocation(engine, TALKER, "hi"))
        unasked = await drive(engine, replace(make_invocation(engine, TALKER, "hi"), deltas=False))
    assert [d.text for d in support.payloads(asked, TextDelta)] == ["a ", "b"]
    assert support.payloads(unasked, TextDelta) == []
    assert check_completed(asked) == check_completed(unasked) == [TextBlock(text="a b")]
    assert [request.stream for request in model_server.model_requests] == [True, False]


# --------------------------------------------------------------------------- made-up message ids


def _raw(data: Any) -> RawResponsesStreamEvent:
    return RawResponsesStreamEvent(data=data)


def _delta(text: str) -> RawResponsesStreamEvent:
    return _raw(
        ResponseTextDeltaEvent(
            type="response.output_text.delta",
            item_id=FAKE_RESPONSES_ID,
            output_index=0,
            content_index=0,
            delta=text,
            logprobs=[],
            sequence_number=1,
        )
    )


def _completed(text: str) -> tuple[RawResponsesStreamEvent, RunItemStreamEvent]:
    message = ResponseOutputMessage(
        id=FAKE_RESPONSES_ID,
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )
    response = Response(
        id=FAKE_RESPONSES_ID,
        object="response",
        created_at=0,
        model="m",
        output=[message],
        parallel_tool_calls=False,
        tool_choice="auto",
        tools=[],
    )
    item = MessageOutputItem(agent=SDKAgent(name="a"), raw_item=message)
    return (
        _raw(
            ResponseCompletedEvent(type="response.completed", response=response, sequence_number=2)
        ),
        RunItemStreamEvent(name="message_output_created", item=item),
    )


@pytest.mark.parametrize("shape", ["whole", "streamed without response.created"])
def test_a_call_without_response_created_gets_a_message_id_of_its_own(shape: str) -> None:
    """Endpoints without item ids get one made up per model call. A call counts as begun at
    its first event: the whole answer's ``response.completed``, or the first delta of a stream
    that sends no ``response.created``; each message's deltas and ``message.completed`` agree."""
    invocable = Invocable(name="a", kind="agent", engine="openai", definition=None)
    translator = Translator(RunScope(Invocation(run_id="r1", invocable=invocable, input=[])))
    ids: list[list[str]] = []
    for text in ("first", "second"):
        events = [*([] if shape == "whole" else [_delta(text)]), *_completed(text)]
        payloads = [payload for event in events for payload in translator.translate(event)]
        ids.append([p.message_id for p in payloads if isinstance(p, TextDelta | MessageCompleted)])
    assert ids == (
        [["msg-r1-0-1"], ["msg-r1-0-2"]]
        if shape == "whole"
        else [["msg-r1-0-1", "msg-r1-0-1"], ["msg-r1-0-2", "msg-r1-0-2"]]
    )


# --------------------------------------------------------------------------- the dispatch gate


async def test_the_gate_answers_what_a_tool_declares_before_any_hold() -> None:
    """An application's own approval callable decides first; without a quiet play (no feed)
    nothing is held; a tool that always needs approval is left ungated."""
    asked: list[str] = []

    def policy(context: Any, params: dict[str, Any], call_id: str) -> bool:
        asked.append(call_id)
        return params.get("amount", 0) > 100

    invocable = Invocable(name="a", kind="agent", engine="openai", definition=None)
    streamed = RunContextWrapper(RunScope(Invocation(run_id="r", invocable=invocable, input=[])))
    gate = DispatchGate(policy)
    assert await gate(streamed, {"amount": 500}, "c1") is True
    assert await gate(streamed, {"amount": 5}, "c2") is False
    assert asked == ["c1", "c2"]
    assert await DispatchGate(False)(streamed, {}, "c3") is False

    def body(context: Any, arguments: str) -> Any:
        raise AssertionError("never called")

    always = FunctionTool(
        name="t", description="", params_json_schema={}, on_invoke_tool=body, needs_approval=True
    )
    never = replace(always, needs_approval=False)
    assert gated(always) is always and declares_approval(always)
    assert isinstance(gated(never).needs_approval, DispatchGate)
    assert not declares_approval(gated(never))
    twice = gated(gated(never))
    assert isinstance(twice.needs_approval, DispatchGate)
    assert twice.needs_approval.declared is False  # not a gate behind a gate
