"""The run's context reaches nodes through LangGraph's own runtime-context channel, and the
deck's build-time check walks every node that asks for it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from lg_graphs import Calendar, Greeting, greet_ctx, greet_runtime, greeter

from agentdeck import ToolCtx
from agentdeck.authoring.catalog import Catalog
from agentdeck.errors import ConfigError, ContextTypeError
from agentdeck.model.content import DataBlock
from agentdeck.testing.engine_kit import check_completed, drive, make_invocation
from agentdeck_langgraph import LangGraphEngine, Workflow

NO_INPUT = [DataBlock(data={})]


class Warehouse:
    """A context type unrelated to Calendar."""


@pytest_asyncio.fixture
async def engine() -> AsyncIterator[LangGraphEngine]:
    engine = LangGraphEngine(checkpointer="memory://")
    await engine.open()
    yield engine
    await engine.close()


async def test_a_runtime_node_receives_the_runs_context_object(engine: LangGraphEngine) -> None:
    workflow = Workflow("hello", greeter(greet_runtime))
    invocation = make_invocation(engine, workflow, NO_INPUT, context=Calendar("ada"))
    [output] = check_completed(await drive(engine, invocation))
    assert output.data == {"who": "ada"}  # type: ignore[union-attr]


async def test_a_toolctx_node_receives_a_handle_with_the_context_and_run_identity(
    engine: LangGraphEngine,
) -> None:
    calendar = Calendar("ada")
    workflow = Workflow("hello", greeter(greet_ctx))
    invocation = make_invocation(engine, workflow, NO_INPUT, context=calendar, session_id="s-1")
    [output] = check_completed(await drive(engine, invocation))
    assert output.data == {"who": "ada", "run": invocation.run_id}  # type: ignore[union-attr]


async def test_a_toolctx_node_keeps_what_langgraph_injects_besides(
    engine: LangGraphEngine,
) -> None:
    seen: dict[str, Any] = {}

    def sync_node(
        state: Greeting,
        config: RunnableConfig,
        cal: ToolCtx[Calendar],
        runtime: Runtime[Calendar],
    ) -> dict[str, Any]:
        seen["thread"] = config["configurable"]["thread_id"]
        return {"who": f"{cal.data.owner}/{runtime.context.owner}"}

    workflow = Workflow("hello", greeter(sync_node))
    invocation = make_invocation(engine, workflow, NO_INPUT, context=Calendar("ada"))
    [output] = check_completed(await drive(engine, invocation))
    assert output.data == {"who": "ada/ada"}  # type: ignore[union-attr]
    assert seen["thread"] == invocation.run_id


async def test_without_a_context_a_node_reads_none_as_after_an_autonomous_resume(
    engine: LangGraphEngine,
) -> None:
    for node in (greet_runtime, greet_ctx):
        workflow = Workflow("hello", greeter(node))
        [output] = check_completed(await drive(engine, make_invocation(engine, workflow, NO_INPUT)))
        assert output.data["who"] == "nobody"  # type: ignore[union-attr]


def test_the_build_time_check_names_a_runtime_node_and_the_type_it_requires() -> None:
    catalog = Catalog(workflows=[Workflow("hello", greeter(greet_runtime))])
    catalog.check_context_types(Calendar)
    with pytest.raises(ContextTypeError) as refused:
        catalog.check_context_types(Warehouse)
    message = str(refused.value)
    assert "node 'greet' (greet_runtime) of workflow 'hello'" in message
    assert "requires Runtime[Calendar] (parameter 'runtime')" in message
    assert "context=Warehouse" in message


def test_the_build_time_check_names_a_toolctx_node() -> None:
    catalog = Catalog(workflows=[Workflow("hello", greeter(greet_ctx))])
    with pytest.raises(
        ContextTypeError, match=r"requires ToolCtx\[Calendar\] \(parameter 'calendar'\)"
    ):
        catalog.check_context_types(Warehouse)


def test_the_build_time_check_walks_into_compiled_subgraphs() -> None:
    inner = greeter(greet_runtime).compile()
    outer: StateGraph[Greeting, Calendar, Greeting, Greeting] = StateGraph(Greeting)
    outer.add_node("inner", inner)
    outer.add_edge(START, "inner")
    outer.add_edge("inner", END)
    workflow = Workflow("nested", outer)
    assert [site for site, _ in workflow.context_sites()] == [
        "node 'inner > greet' (greet_runtime)"
    ]
    with pytest.raises(ContextTypeError, match="node 'inner > greet'"):
        Catalog(workflows=[workflow]).check_context_types(Warehouse)


def test_a_toolctx_node_in_a_graph_that_runs_unchanged_is_refused() -> None:
    with pytest.raises(ConfigError, match="already compiled graph"):
        Workflow.from_graph("hello", greeter(greet_ctx).compile())
    outer: StateGraph[Greeting, Calendar, Greeting, Greeting] = StateGraph(Greeting)
    outer.add_node("inner", greeter(greet_ctx).compile())
    outer.add_edge(START, "inner")
    with pytest.raises(ConfigError, match=r"node 'inner > greet' \(greet_ctx\)"):
        Workflow("nested", outer).compile_graph()


def test_the_users_builder_is_not_modified_by_the_bridge() -> None:
    builder = greeter(greet_ctx)
    before = builder.nodes["greet"].runnable
    Workflow("hello", builder).compile_graph()
    assert builder.nodes["greet"].runnable is before


async def test_the_headless_path_passes_the_context_too() -> None:
    workflow = Workflow("hello", greeter(greet_ctx))
    state = await workflow.run({}, context=Calendar("grace"))
    assert state == {"who": "grace", "run": None}
