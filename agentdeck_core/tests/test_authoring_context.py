"""The context handle: what a callable that asks for the run's context receives."""

import pytest

from agentdeck.authoring.context import Context, ToolCtx, WorkflowCtx


class Calendar:
    def find(self, day: str) -> str:
        return f"{day} 09:00"


def test_context_is_the_same_class_as_toolctx() -> None:
    assert Context is ToolCtx
    assert Context[Calendar] == ToolCtx[Calendar]


def test_the_handle_carries_data_by_reference_and_identity_read_only() -> None:
    calendar = Calendar()
    ctx = ToolCtx(calendar, run_id="r-1", session_id="s-1", namespace="acme")

    assert ctx.data is calendar
    assert (ctx.run_id, ctx.session_id, ctx.namespace) == ("r-1", "s-1", "acme")
    with pytest.raises(AttributeError):
        ctx.data = Calendar()  # type: ignore[misc]


def test_a_tool_call_handle_keeps_the_run_and_adds_the_call() -> None:
    ctx = ToolCtx(Calendar(), run_id="r-1").for_tool_call(tool_call_id="c-1", tool_name="find")

    assert (ctx.run_id, ctx.tool_call_id, ctx.tool_name) == ("r-1", "c-1", "find")


def test_the_handle_repr_never_shows_the_data() -> None:
    class Secret:
        def __repr__(self) -> str:
            return "password=hunter2"

    assert "hunter2" not in repr(ToolCtx(Secret()))


def test_workflow_ctx_is_an_abstract_tool_ctx() -> None:
    assert issubclass(WorkflowCtx, ToolCtx)
    with pytest.raises(TypeError):
        WorkflowCtx(Calendar())  # type: ignore[abstract]
