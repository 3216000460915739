"""``@workflow``: declaring a body, binding its input, fingerprinting its code."""

import textwrap
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import pytest

from agentdeck.authoring.context import ToolCtx, WorkflowCtx
from agentdeck.authoring.workflows import WorkflowDefinition, bind_input, code_digest, workflow
from agentdeck.errors import ConfigError, ContextTypeError, InvalidInputError


class Orders:
    def __init__(self) -> None:
        self.refunded: list[str] = []


@workflow
async def refund_approval(order_id: str, ctx: WorkflowCtx[Orders], reason: str = "") -> str:
    """Refund an order once a person approves.

    Longer notes that are not part of the description.
    """
    ctx.data.refunded.append(order_id)
    return f"refunded {order_id}"


@workflow
async def summarize(payload: Any, ctx: WorkflowCtx[Any]) -> Any:
    """Takes its one input whole."""
    return payload


@workflow
async def heartbeat() -> str:
    return "ok"


class FakeWorkflowCtx(WorkflowCtx[Any]):
    """The smallest complete implementation: proves the interface can be implemented."""

    async def ask(
        self,
        question: Any,
        *,
        schema: type[Any] | Mapping[str, Any] | None = None,
        options: Sequence[str] | None = None,
    ) -> Any:
        return "yes"

    async def safepoint(self) -> None:
        return None

    async def step(self, name: str, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    async def invoke(self, name: str, input: Any) -> Any:
        return None

    async def sleep_until(self, when: datetime) -> None:
        return None

    async def report(self, message: str, *, level: str = "info", **fields: Any) -> None:
        return None

    async def emit(self, name: str, data: Any = None) -> None:
        return None


# --------------------------------------------------------------------------- declaring


def test_a_body_is_declared_with_its_name_description_and_parameters() -> None:
    assert isinstance(refund_approval, WorkflowDefinition)
    assert refund_approval.name == "refund_approval"
    assert refund_approval.description == "Refund an order once a person approves."
    assert refund_approval.params == ("order_id", "reason")
    assert refund_approval.required_params == ("order_id",)


def test_the_name_can_be_given() -> None:
    @workflow(name="RefundApproval", description="Refunds.")
    async def body(order_id: str) -> None: ...

    assert (body.name, body.description) == ("RefundApproval", "Refunds.")


def test_the_context_parameter_is_recorded_and_never_a_param() -> None:
    requirement = refund_approval.context_requirement

    assert requirement is not None
    assert (requirement.parameter, requirement.required) == ("ctx", Orders)
    assert "ctx" not in refund_approval.params


def test_a_sync_body_is_refused() -> None:
    def sync_body(order_id: str) -> str:
        return order_id

    with pytest.raises(ConfigError, match="async def"):
        workflow(sync_body)  # type: ignore[arg-type]


def test_a_body_taking_star_args_is_refused() -> None:
    async def spread(*orders: str) -> None: ...

    with pytest.raises(ConfigError, match=r"\*orders"):
        workflow(spread)


def test_workflow_ctx_can_be_implemented_by_an_engine() -> None:
    ctx = FakeWorkflowCtx(Orders(), run_id="r-1")

    assert isinstance(ctx, ToolCtx)
    assert ctx.run_id == "r-1"


# --------------------------------------------------------------------------- binding input


def test_a_mapping_binds_by_name() -> None:
    assert bind_input(refund_approval, {"order_id": "A-1003"}) == {"order_id": "A-1003"}
    assert bind_input(refund_approval, {"order_id": "A-1", "reason": "late"}) == {
        "order_id": "A-1",
        "reason": "late",
    }


def test_a_missing_parameter_is_named() -> None:
    with pytest.raises(InvalidInputError, match="missing 'order_id'") as invalid:
        bind_input(refund_approval, {"reason": "late"})

    assert invalid.value.field == "order_id"
    assert invalid.value.name == "refund_approval"


def test_an_unknown_key_is_named_with_what_the_body_takes() -> None:
    with pytest.raises(InvalidInputError, match=r"unknown 'orderid'.*takes order_id"):
        bind_input(refund_approval, {"order_id": "A-1", "orderid": "A-1"})


def test_the_context_parameter_cannot_be_bound_from_input() -> None:
    with pytest.raises(InvalidInputError, match="unknown 'ctx'"):
        bind_input(refund_approval, {"order_id": "A-1", "ctx": "forged"})


def test_a_body_with_several_parameters_needs_a_mapping() -> None:
    with pytest.raises(InvalidInputError, match="must be a mapping"):
        bind_input(refund_approval, "A-1003")


def test_a_single_parameter_body_takes_its_input_whole() -> None:
    assert bind_input(summarize, "text") == {"payload": "text"}
    assert bind_input(summarize, [1, 2]) == {"payload": [1, 2]}
    assert bind_input(summarize, {"a": 1, "b": 2}) == {"payload": {"a": 1, "b": 2}}


def test_a_single_parameter_body_binds_a_mapping_naming_it_by_name() -> None:
    assert bind_input(summarize, {"payload": "text"}) == {"payload": "text"}


def test_none_leaves_a_defaulted_single_parameter_to_its_default() -> None:
    @workflow
    async def optional(limit: int = 10) -> int:
        return limit

    assert bind_input(optional, None) == {}
    assert bind_input(summarize, None) == {"payload": None}


def test_a_body_without_parameters_takes_no_input() -> None:
    assert bind_input(heartbeat, None) == {}
    assert bind_input(heartbeat, {}) == {}
    with pytest.raises(InvalidInputError, match="takes no input"):
        bind_input(heartbeat, "hello")


def test_a_body_taking_kwargs_accepts_any_extra_key() -> None:
    @workflow
    async def flexible(order_id: str, **extra: Any) -> None: ...

    assert bind_input(flexible, {"order_id": "A", "note": "x"}) == {"order_id": "A", "note": "x"}


async def test_calling_a_definition_injects_the_context() -> None:
    orders = Orders()
    bound = bind_input(refund_approval, {"order_id": "A-1"})

    result = await refund_approval.call(bound, FakeWorkflowCtx(orders))

    assert result == "refunded A-1"
    assert orders.refunded == ["A-1"]


async def test_calling_a_body_that_declares_a_context_without_one_is_refused() -> None:
    with pytest.raises(ContextTypeError, match=r"refund_approval.*rather than an AgentDeck run"):
        await refund_approval.call({"order_id": "A-1"}, None)


# --------------------------------------------------------------------------- code digest


def _define(source: str) -> WorkflowDefinition:
    namespace: dict[str, Any] = {"workflow": workflow}
    exec(compile(textwrap.dedent(source), "<generated>", "exec"), namespace)
    definition: WorkflowDefinition = namespace["body"]
    return definition


def test_the_digest_is_stable_for_the_same_code() -> None:
    assert code_digest(refund_approval) == code_digest(refund_approval)
    assert len(code_digest(refund_approval)) == 64


def test_the_digest_changes_when_the_code_changes() -> None:
    assert code_digest(refund_approval) != code_digest(summarize)


def test_the_digest_falls_back_to_bytecode_without_source() -> None:
    first = _define("@workflow\nasync def body(x):\n    return x + 1\n")
    same = _define("@workflow\nasync def body(x):\n    return x + 1\n")
    changed = _define("@workflow\nasync def body(x):\n    return x + 2\n")

    assert code_digest(first) == code_digest(same)
    assert code_digest(first) != code_digest(changed)


def test_the_digest_follows_an_edit_to_the_source_file(tmp_path: Any) -> None:
    import importlib.util

    def load(text: str, name: str) -> WorkflowDefinition:
        file = tmp_path / f"{name}.py"
        file.write_text(text)
        spec = importlib.util.spec_from_file_location(name, file)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        definition: WorkflowDefinition = module.body
        return definition

    header = "from agentdeck.authoring.workflows import workflow\n\n@workflow\nasync def body(x):\n"
    before = load(header + "    return x\n", "wf_before")
    moved = load(
        "# a comment above moves the body down\n\n" + header + "    return x\n", "wf_moved"
    )
    edited = load(header + "    return x * 2\n", "wf_edited")

    assert code_digest(before) == code_digest(moved)
    assert code_digest(before) != code_digest(edited)
