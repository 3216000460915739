"""The native engine as a plugin: declared by agentdeck-core's own metadata, found by the plugin
host like any third-party engine, and compiling ``@workflow`` definitions into invocables."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

import pytest

from agentdeck import WorkflowCtx, workflow
from agentdeck.authoring.workflows import code_digest
from agentdeck.errors import ConfigError
from agentdeck.native import NativeWorkflowEngine
from agentdeck.plugins.host import ALLOW_ENV, DENY_ENV, PluginHost
from agentdeck.ports import EngineRequest


class Shop:
    pass


@workflow
async def refund_approval(order_id: str, ctx: WorkflowCtx[Shop]) -> dict[str, Any]:
    """Approve a refund.

    Asks a person when the amount is large.
    """
    return {"order_id": order_id}


def test_core_declares_the_native_entry_point() -> None:
    declared = {ep.name: ep for ep in entry_points(group="agentdeck")}
    native = declared["native"]
    assert native.value == "agentdeck.native.plugin"
    assert native.dist is not None and native.dist.name == "agentdeck-core"


def test_the_plugin_host_builds_the_workflow_engine_from_the_entry_point() -> None:
    host = PluginHost.discover(env={ALLOW_ENV: "native"})
    [plugin] = host.plugins()
    assert (plugin.name, plugin.distribution) == ("native", "agentdeck-core")
    assert plugin.provides["engines"] == ["workflow"]
    request = EngineRequest()
    [engine] = host.engines(request)
    assert isinstance(engine, NativeWorkflowEngine)
    assert engine.request is request


def test_the_native_engine_can_be_switched_off_like_any_plugin() -> None:
    host = PluginHost.discover(env={ALLOW_ENV: "native", DENY_ENV: "native"})
    assert host.engines() == []


def test_compiling_a_workflow_records_its_identity_digest_and_context_type() -> None:
    invocable = NativeWorkflowEngine().compile(refund_approval)
    assert (invocable.name, invocable.kind, invocable.engine) == (
        "refund_approval",
        "workflow",
        "workflow",
    )
    assert invocable.definition is refund_approval
    assert invocable.code_digest == code_digest(refund_approval)
    assert invocable.context_type is Shop
    assert invocable.description == "Approve a refund."


def test_only_workflow_definitions_are_accepted() -> None:
    engine = NativeWorkflowEngine()
    assert engine.accepts(refund_approval)
    assert not engine.accepts(refund_approval.fn), "a bare function is not a @workflow"
    with pytest.raises(ConfigError, match="runs @workflow definitions, not function"):
        engine.compile(refund_approval.fn)
