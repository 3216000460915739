"""What a LangGraph run records: node updates, stream writes, model tokens, failures, outputs.

Each test plays a real graph through the engine with the core's ``drive`` (the runtime's
semantics, model-free) on the memory checkpointer, and reads the log it recorded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import pytest
import pytest_asyncio
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from lg_graphs import (
    SECRET,
    START_STATE,
    Counter,
    chain,
    failing,
    plan,
    review,
    three_nodes,
)

from agentdeck.errors import ConfigError
from agentdeck.model.payloads import Custom, NodeUpdated, Report, RunCompleted, RunFailed, TextDelta
from agentdeck.ports import EngineRequest
from agentdeck.settings import Settings
from agentdeck.testing.engine_kit import check_completed, check_failed, drive, make_invocation
from agentdeck.vocabulary import ErrorCode, ReportLevel
from agentdeck_langgraph import LangGraphEngine, Workflow, emit, report


@pytest_asyncio.fixture
async def engine() -> AsyncIterator[LangGraphEngine]:
    engine = LangGraphEngine(checkpointer="memory://")
    await engine.open()
    yield engine
    await engine.close()


async def test_a_three_node_graph_records_one_node_update_per_node_then_its_state(
    engine: LangGraphEngine,
) -> None:
    workflow = Workflow("pipeline", three_nodes(), description="plan, work, review")
    result = await drive(engine, make_invocation(engine, workflow, START_STATE))

    assert result.kinds == [
        "run.started",
        "node.updated",
        "node.updated",
        "node.updated",
        "run.completed",
    ]
    started = result.events[0].payload
    assert started.name == "pipeline" and started.invocable_kind == "workflow"  # type: ignore[union-attr]
    updates = [event.payload for event in result.events if isinstance(event.payload, NodeUpdated)]
    assert [(u.node, u.update, u.step) for u in updates] == [
        ("plan", {"n": 2, "log": ["plan"]}, 1),
        ("work", {"log": ["work"]}, 2),
        ("review", {"log": ["review"]}, 3),
    ]
    [output] = check_completed(result)
    assert output.data == {"n": 2, "log": ["plan", "work", "review"]}  # type: ignore[union-attr]
    assert result.safe_points == ("node_boundary", "node_boundary")


async def test_stream_writes_become_reports_and_custom_events_by_shape(
    engine: LangGraphEngine,
) -> None:
    async def chatty(state: Counter) -> dict[str, Any]:
        report("halfway", level="warning", done=5)
        emit("app.progress", {"percent": 50})
        write = get_stream_writer()
        write("plain text")
        write({"rows": 3, "at": (1, 2)})
        write(42)
        return {"log": ["chatty"]}

    result = await drive(
        engine, make_invocation(engine, Workflow("chatty", chain(chatty)), START_STATE)
    )
    check_completed(result)
    written = [e.payload for e in result.events if isinstance(e.payload, Report | Custom)]
    assert written == [
        Report(level=ReportLevel.WARNING, message="halfway", fields={"done": 5}),
        Custom(name="app.progress", data={"percent": 50}),
        Report(level=ReportLevel.INFO, message="plain text"),
        Report(
            level=ReportLevel.RECORD,
            message="langgraph stream write",
            fields={"rows": 3, "at": [1, 2]},
        ),
        Report(level=ReportLevel.RECORD, message="langgraph stream write", fields={"value": 42}),
    ]


async def test_tokens_of_a_chat_model_called_in_a_node_stream_as_text_deltas(
    engine: LangGraphEngine,
) -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage("hello big world")]))

    async def talk(state: Counter) -> dict[str, Any]:
        reply = await model.ainvoke("hi")
        return {"log": [str(reply.content)]}

    result = await drive(
        engine, make_invocation(engine, Workflow("talk", chain(talk)), START_STATE)
    )
    deltas = [e.payload for e in result.events if isinstance(e.payload, TextDelta)]
    assert "".join(d.text for d in deltas) == "hello big world"
    assert len(deltas) > 1 and len({d.message_id for d in deltas}) == 1
    kinds = result.kinds
    assert kinds.index("text.delta") < kinds.index("node.updated")
    [output] = check_completed(result)
    assert output.data["log"] == ["hello big world"]  # type: ignore[union-attr]


async def test_a_run_played_without_deltas_records_the_reply_but_no_tokens(
    engine: LangGraphEngine,
) -> None:
    """``Deck.run()`` asks for no deltas: the model is not made to stream, its reply is whole
    in the node's update and the output."""
    model = GenericFakeChatModel(messages=iter([AIMessage("hello big world")]))

    async def talk(state: Counter) -> dict[str, Any]:
        reply = await model.ainvoke("hi")
        return {"log": [str(reply.content)]}

    invocation = make_invocation(engine, Workflow("talk", chain(talk)), START_STATE)
    result = await drive(engine, replace(invocation, deltas=False))

    assert result.kinds == ["run.started", "node.updated", "run.completed"]
    [output] = check_completed(result)
    assert output.data["log"] == ["hello big world"]  # type: ignore[union-attr]


async def test_the_deltas_setting_taps_tokens_for_runs_that_did_not_ask() -> None:
    settings = Settings(env={"AGENTDECK_LANGGRAPH_DELTAS": "always"})
    engine = LangGraphEngine(
        EngineRequest(settings=settings, state_url="memory://"), checkpointer="memory://"
    )
    await engine.open()
    model = GenericFakeChatModel(messages=iter([AIMessage("hello big world")]))

    async def talk(state: Counter) -> dict[str, Any]:
        reply = await model.ainvoke("hi")
        return {"log": [str(reply.content)]}

    try:
        invocation = make_invocation(engine, Workflow("talk", chain(talk)), START_STATE)
        result = await drive(engine, replace(invocation, deltas=False))
    finally:
        await engine.close()
    deltas = [e.payload for e in result.events if isinstance(e.payload, TextDelta)]
    assert "".join(d.text for d in deltas) == "hello big world"


def test_a_deltas_setting_it_does_not_know_is_a_config_error_naming_it() -> None:
    settings = Settings(env={"AGENTDECK_LANGGRAPH_DELTAS": "sometimes"})
    with pytest.raises(ConfigError, match="AGENTDECK_LANGGRAPH_DELTAS"):
        LangGraphEngine(EngineRequest(settings=settings, state_url="memory://"))


async def test_a_raising_node_fails_the_run_naming_the_node_and_only_the_exception_type(
    engine: LangGraphEngine,
) -> None:
    result = await drive(
        engine, make_invocation(engine, Workflow("doomed", failing()), START_STATE)
    )
    failed = check_failed(result, failure_text=SECRET)
    assert failed == RunFailed(
        error_code=ErrorCode.ENGINE_ERROR, message="ValueError", where="explode"
    )
    assert result.raised is None  # the engine recorded the failure itself, it did not raise
    assert [e.payload.node for e in result.events if isinstance(e.payload, NodeUpdated)] == ["plan"]
    assert all(SECRET not in event.to_json() for event in result.events)


async def test_state_and_writes_that_are_not_plain_json_are_recorded_in_their_json_form(
    engine: LangGraphEngine,
) -> None:
    @dataclass
    class Point:
        x: int
        at: datetime

    class Opaque:
        pass

    async def odd(state: Counter) -> dict[str, Any]:
        get_stream_writer()({"thing": Opaque()})
        when = datetime(2026, 1, 2, tzinfo=UTC)
        return {"answer": {"pair": (1, 2), "nan": float("nan"), "point": Point(1, when)}}

    result = await drive(engine, make_invocation(engine, Workflow("odd", chain(odd)), START_STATE))
    [output] = check_completed(result)
    as_json = {"pair": [1, 2], "nan": None, "point": {"x": 1, "at": "2026-01-02T00:00:00Z"}}
    assert output.data["answer"] == as_json  # type: ignore[union-attr]
    [update] = [e.payload for e in result.events if isinstance(e.payload, NodeUpdated)]
    assert update.update == {"answer": as_json}
    [written] = [e.payload for e in result.events if isinstance(e.payload, Report)]
    assert written.fields == {"thing": "<unserializable Opaque>"}


async def test_a_state_the_checkpointer_cannot_store_fails_the_run_outside_any_node(
    engine: LangGraphEngine,
) -> None:
    class Opaque:
        pass

    async def odd(state: Counter) -> dict[str, Any]:
        return {"answer": Opaque()}

    result = await drive(engine, make_invocation(engine, Workflow("odd", chain(odd)), START_STATE))
    failed = check_failed(result)
    assert (failed.message, failed.where) == ("TypeError", None)


async def test_an_existing_compiled_graph_runs_unchanged(engine: LangGraphEngine) -> None:
    own_saver = InMemorySaver()
    compiled = chain(plan, review).compile(checkpointer=own_saver)
    nodes_before = dict(compiled.nodes)
    workflow = Workflow.from_graph("legacy", compiled)

    result = await drive(engine, make_invocation(engine, workflow, START_STATE))

    [output] = check_completed(result)
    assert output.data == {"n": 2, "log": ["plan", "review"]}  # type: ignore[union-attr]
    assert compiled.checkpointer is own_saver and dict(compiled.nodes) == nodes_before
    assert workflow.compile_graph() is compiled
    assert list(own_saver.list(None)) == []  # the run checkpointed on the engine's saver only


async def test_a_compiled_graphs_static_breakpoint_pauses_the_run_and_resume_passes_it(
    engine: LangGraphEngine,
) -> None:
    compiled = chain(plan, review).compile(interrupt_before=["review"])
    workflow = Workflow.from_graph("gated", compiled)
    invocation = make_invocation(engine, workflow, START_STATE)

    paused = await drive(engine, invocation)
    assert paused.kinds[-1] == "run.paused"
    assert paused.last.payload.reason == "breakpoint"  # type: ignore[union-attr]
    resumed = await drive(engine, invocation, history=paused.events)
    [output] = check_completed(resumed)
    assert output.data == {"n": 2, "log": ["plan", "review"]}  # type: ignore[union-attr]


async def test_a_workflow_input_that_is_not_a_state_is_refused_before_the_run_opens(
    engine: LangGraphEngine,
) -> None:
    from agentdeck.errors import InvalidInputError

    invocable = engine.compile(Workflow("pipeline", three_nodes()))
    assert engine.prepare_input(invocable, {"n": 1})[0].data == {"n": 1}  # type: ignore[union-attr]
    assert engine.prepare_input(invocable, None)[0].data == {}  # type: ignore[union-attr]
    with pytest.raises(InvalidInputError, match="initial state as a mapping"):
        engine.prepare_input(invocable, "just text")


async def test_a_run_whose_input_is_text_fails_with_the_input_named(
    engine: LangGraphEngine,
) -> None:
    result = await drive(
        engine, make_invocation(engine, Workflow("pipeline", three_nodes()), "hello")
    )
    failed = check_failed(result)
    assert failed.message == "engine 'langgraph' raised InvalidInputError"
    assert isinstance(result.raised, Exception) and "text" in str(result.raised)


def test_the_engine_refuses_what_is_not_a_langgraph_workflow() -> None:
    from agentdeck.authoring.workflows import workflow
    from agentdeck.errors import ConfigError

    @workflow
    async def native() -> None:
        return None

    engine = LangGraphEngine(checkpointer="memory://")
    assert not engine.accepts(native) and not engine.accepts(three_nodes())
    with pytest.raises(ConfigError, match=r"agentdeck_langgraph\.Workflow"):
        engine.compile(native)


async def test_completed_and_update_payloads_are_plain_models(engine: LangGraphEngine) -> None:
    result = await drive(
        engine, make_invocation(engine, Workflow("pipeline", three_nodes()), START_STATE)
    )
    assert isinstance(result.last.payload, RunCompleted)
    result.assert_clean()
