"""Subagents as child runs at the engine boundary: what the engine asks of the runtime's
child-run port, and how a parent parked on a child continues from the store alone.

The port (``Invocation.invoke_child``) is the runtime's; here it is a recording stand-in, as in
the core's own engine tests, so each continuation can run on a *fresh* engine instance with
nothing but the JSON log and a copy of the state area. ``test_deck_subagents`` covers the same
behaviour end to end with the real runtime.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import engine_support as support  # loaded by conftest.py

from agentdeck import Agent
from agentdeck.authoring.catalog import Catalog
from agentdeck.authoring.workflows import workflow
from agentdeck.errors import RunSuspendedError
from agentdeck.model.content import TextBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunPaused
from agentdeck.ports import Entry
from agentdeck.testing.engine_kit import (
    DriveResult,
    MemoryStateArea,
    check_completed,
    check_failed,
    drive,
    make_invocation,
)
from agentdeck.vocabulary import ControlVerb, RunStatus, SafePoint, WaitKind
from agentdeck_openai.approvals import STATE_NAME
from agentdeck_openai.testing import LoopbackModelServer, call, reply, tool_call, tool_calls


@workflow
async def refund(order_id: str) -> dict[str, Any]:
    """Refund an order."""
    return {"order_id": order_id}


LEAD = Agent(name="Lead", instructions="Lead.", subagents=["refund"])
CATALOG = Catalog(agents=[LEAD], workflows=[refund])


class ChildPort:
    """Stands in for the runtime's ``invoke_child``: records each call, then answers with
    ``outcome`` (raised when it is an exception). ``trace`` shows calls interleaving."""

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome
        self.calls: list[tuple[str, Any, str | None]] = []
        self.trace: list[str] = []

    async def __call__(self, name: str, input: Any = None, *, key: str | None = None) -> Any:
        self.calls.append((name, input, key))
        self.trace.append(f"start {key}")
        for _ in range(3):
            await asyncio.sleep(0)  # a child takes a while; others may start meanwhile
        self.trace.append(f"end {key}")
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome


async def start(
    server: LoopbackModelServer,
    port: ChildPort | None,
    directives: dict[int, ControlVerb] | None = None,
) -> DriveResult:
    async with support.opened(support.make_engine(server, catalog=CATALOG)) as engine:
        invocation = dataclasses.replace(
            make_invocation(engine, LEAD, "refund A-1"), invoke_child=port
        )
        return await drive(
            engine,
            invocation,
            directives=directives,
        )


async def continue_elsewhere(
    server: LoopbackModelServer, stopped: DriveResult, port: ChildPort
) -> DriveResult:
    """Continue ``stopped`` as a restarted worker would: a new engine, the log from JSON, a
    copy of the state area."""
    history = [Event.from_json(event.to_json()) for event in stopped.events]
    area = stopped.state_area
    assert isinstance(area, MemoryStateArea)
    async with support.opened(support.make_engine(server, catalog=CATALOG)) as fresh:
        invocation = dataclasses.replace(make_invocation(fresh, LEAD), invoke_child=port)
        return await drive(
            fresh, invocation, history=history, entry=Entry.AFTER_PAUSE, state=area.copy()
        )


async def test_a_parked_child_pauses_the_parent_and_a_fresh_engine_continues_it(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(
        tool_call("refund", {"order_id": "A-1"}, call_id="w1"), reply("Refunded.")
    )
    parked_child = RunSuspendedError(run_id="child-1", status=RunStatus.WAITING_ANSWER)
    waiting = ChildPort(parked_child)
    parked = await start(model_server, waiting)

    parked.assert_clean()
    assert parked.last.payload == RunPaused(
        reason="waiting for child run child-1",
        waiting_on=WaitKind.CHILD_RUNS,
        waiting_for=["child-1"],
    )
    key = f"{parked.invocation.run_id}:w1"
    assert waiting.calls == [("refund", {"order_id": "A-1"}, key)]
    assert STATE_NAME in parked.state_area.snapshot()  # type: ignore[attr-defined]

    ended = ChildPort({"order_id": "A-1", "refunded": True})
    done = await continue_elsewhere(model_server, parked, ended)

    done.assert_clean()
    assert check_completed(done) == [TextBlock(text="Refunded.")]
    assert {called_key for _, _, called_key in ended.calls} == {key}, "the same child each time"
    sent = support.tool_output_sent(model_server, "w1")
    assert json.loads(sent) == {"order_id": "A-1", "refunded": True}
    assert STATE_NAME not in done.state_area.snapshot()  # type: ignore[attr-defined]


async def test_a_pause_before_the_children_start_leaves_them_to_the_continuation(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(tool_call("refund", {"order_id": "A-1"}, call_id="w1"), reply("ok"))
    probe = await start(model_server, ChildPort({"order_id": "A-1"}))
    before_children = probe.safe_points.index(SafePoint.TOOL_DISPATCH) + 1

    model_server.script.add(tool_call("refund", {"order_id": "A-1"}, call_id="w2"), reply("ok"))
    port = ChildPort({"order_id": "A-1"})
    paused = await start(model_server, port, {before_children: ControlVerb.PAUSE})

    paused.assert_clean()
    assert paused.kinds[-1] == "run.paused" and paused.directive is not None
    assert port.calls == [], "no child starts after the run was told to pause"

    done = await continue_elsewhere(model_server, paused, port)

    assert check_completed(done) == [TextBlock(text="ok")]
    keys = {called_key for _, _, called_key in port.calls}
    assert keys == {f"{paused.invocation.run_id}:w2"}


async def test_the_children_of_one_turn_start_together(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(
        tool_calls(
            call("refund", {"order_id": "A-1"}, call_id="a"),
            call("refund", {"order_id": "A-2"}, call_id="b"),
        ),
        reply("Both refunded."),
    )
    port = ChildPort({"refunded": True})
    done = await start(model_server, port)

    assert check_completed(done) == [TextBlock(text="Both refunded.")]
    run_id = done.invocation.run_id
    first_two = port.trace[:4]
    assert first_two == [
        f"start {run_id}:a",
        f"start {run_id}:b",
        f"end {run_id}:a",
        f"end {run_id}:b",
    ]


async def test_without_a_child_run_port_the_call_fails_naming_the_subagent(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(tool_call("refund", {"order_id": "A-1"}, call_id="w1"))
    failed = check_failed(await start(model_server, None))
    assert (failed.error_code, failed.where) == ("tool_error", "refund")
    assert failed.message == "tool 'refund' raised ConfigError"
