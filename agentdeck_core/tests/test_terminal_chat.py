"""The terminal chat (``Terminal.stdio()``, ``agentdeck chat``) through a pseudo-terminal.

Each test starts a real process on a pty and types at it: messages, answers to questions,
Ctrl-C and Ctrl-D. The deck in the child is real; the agent is a scripted one (streamed text, a
tool call, a tool approval), or a native workflow from a project directory for ``agentdeck
chat``. A real OpenAI agent's deltas are covered in ``tests/test_terminal_openai.py`` at the
repository root.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


PtyProcess = _load("pty_support").PtyProcess
Spawn = Callable[..., Any]
"""Start a command on a pseudo-terminal: ``spawn(*argv) -> PtyProcess``."""

SCRIPTED_CHAT = """\
import warnings

import agentdeck
from agentdeck import Deck
from agentdeck.bindings import Terminal
from agentdeck.model.payloads import (
    AnswerShape,
    MessageCompleted,
    ToolCallCompleted,
    ToolCallStarted,
)
from agentdeck.memory import plugin as memory_plugin
from agentdeck.plugins.host import PluginHost
from agentdeck.runtime.config import NonDurableStoreWarning
from agentdeck.settings import Settings
from agentdeck.testing import ScriptedEngine
from agentdeck.testing.engine_kit import Ask, Complete, Script, Yield

warnings.simplefilter("ignore", NonDurableStoreWarning)

APPROVAL = AnswerShape(
    json_schema={
        "type": "object",
        "properties": {"approved": {"type": "boolean"}, "message": {"type": "string"}},
        "required": ["approved"],
    }
)
helper = Script(
    "helper",
    [
        Yield.text("Let me "),
        Yield.text("look that up."),
        Yield(MessageCompleted(message_id="msg-1", text="Let me look that up.")),
        Yield(ToolCallStarted(call_id="c1", tool="search", args={"q": "refund policy"})),
        Yield(ToolCallCompleted(call_id="c1", tool="search", result_preview="30 days")),
        Ask(
            "approval-c2",
            payload={"tool": "refund", "args": {"order": "A-1"}, "call_id": "c2"},
            reason="approval",
            expected=APPROVAL,
        ),
        Yield.text("Refunded ", message_id="msg-2"),
        Yield.text("A-1.", message_id="msg-2"),
        Yield(MessageCompleted(message_id="msg-2", text="Refunded A-1.")),
        Complete("Refunded A-1."),
    ],
    kind="agent",
)


class Scripted:
    @agentdeck.hookimpl
    def agentdeck_register_engines(self, register):
        register(ScriptedEngine)


host = PluginHost.from_plugins(("memory", memory_plugin), ("scripted", Scripted()))
deck = Deck(
    workflows=[helper],
    settings=Settings(env={"AGENTDECK_STATE": "memory://"}),
    plugins=host,
    observers=(),
)
deck.serve(Terminal.stdio())
"""

APPROVE = """\
from agentdeck import WorkflowCtx, workflow


@workflow
async def approve(order_id: str, ctx: WorkflowCtx) -> dict:
    await ctx.report("checking", order_id=order_id)
    decision = await ctx.ask({"question": f"approve {order_id}?"}, options=["y", "n"])
    return {"order_id": order_id, "approved": decision == "y"}
"""

SLOW = """\
import asyncio

from agentdeck import WorkflowCtx, workflow


@workflow
async def slow(task: str, ctx: WorkflowCtx) -> str:
    await ctx.report("working on " + task)
    while True:  # until someone stops it: the safe point is where a cancel takes effect
        await ctx.safepoint()
        await asyncio.sleep(0.01)
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AGENTDECK_", "OPENAI_")) and key not in ("FORCE_COLOR",)
    }
    environ.update(NO_COLOR="1", TERM="xterm", PYTHONUNBUFFERED="1")
    return environ


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name, source in (("approve", APPROVE), ("slow", SLOW)):
        bundle = tmp_path / ".agentdeck" / "workflows" / name
        bundle.mkdir(parents=True)
        (bundle / "workflow.py").write_text(source, encoding="utf-8")
    return tmp_path / ".agentdeck"


@pytest.fixture
def spawn(env: dict[str, str], tmp_path: Path) -> Iterator[Spawn]:
    started: list[Any] = []

    def start(*argv: str) -> Any:
        process = PtyProcess(argv, env=env, cwd=tmp_path)
        started.append(process)
        return process

    yield start
    for process in started:
        process.close()


AGENTDECK = [sys.executable, "-m", "agentdeck"]


def test_an_agent_streams_its_reply_shows_its_tool_call_and_asks_for_approval_inline(
    spawn: Spawn, tmp_path: Path
) -> None:
    script = tmp_path / "scripted_chat.py"
    script.write_text(SCRIPTED_CHAT, encoding="utf-8")
    chat = spawn(sys.executable, str(script))

    chat.expect("Chatting with helper (agent).")
    chat.expect("you> ")
    chat.sendline("refund order A-1")
    chat.expect("Let me look that up.\n")  # the two deltas, on one line as they streamed
    tool = chat.expect("\n")
    assert tool.strip() == '* search({"q": "refund policy"}) -> 30 days'
    assert chat.expect("y/n> ").strip() == '? approve refund({"order": "A-1"})?  [y/n]'
    chat.sendline("perhaps")
    chat.expect("answer y or n")  # asked again, nothing sent to the run
    chat.expect("y/n> ")
    chat.sendline("y")
    chat.expect('+ answered: {"approved": true}')
    chat.expect("Refunded A-1.\n")
    chat.expect("you> ")
    chat.end_input()  # Ctrl-D leaves

    assert chat.wait() == 0


def test_agentdeck_chat_refuses_an_answer_that_does_not_fit_and_asks_again(
    spawn: Spawn, project: Path
) -> None:
    chat = spawn(*AGENTDECK, "chat", "approve", "--project", str(project))

    chat.expect("Chatting with approve (workflow).")
    chat.expect("you> ")
    chat.sendline('{"order_id": "A-1"}')
    chat.expect('[info] checking {"order_id": "A-1"}')
    # (The memory store's warning that parked runs die with the process may come first.)
    assert chat.expect("y/n> ").strip().endswith("? approve A-1?  [y/n]")
    chat.sendline("maybe")
    chat.expect("refused: the answer must be one of the offered options: 'y', 'n'")
    chat.expect("y/n> ")
    chat.sendline("y")
    chat.expect("+ answered: y")
    chat.expect('-> {"order_id": "A-1", "approved": true}')
    chat.expect("you> ")
    chat.sendline("/exit")

    assert chat.wait() == 0


def test_ctrl_c_cancels_the_turn_in_flight_and_a_second_one_leaves(
    spawn: Spawn, project: Path
) -> None:
    chat = spawn(*AGENTDECK, "chat", "slow", "--project", str(project))

    chat.expect("you> ")
    chat.sendline("the report")
    chat.expect("[info] working on the report")
    chat.interrupt()
    chat.expect("stopping this turn (Ctrl-C again to leave)")
    chat.expect("cancel taken at workflow_safepoint")
    chat.expect("x cancelled: stopped from the terminal (Ctrl-C)")
    chat.expect("you> ")  # the conversation goes on
    chat.interrupt()  # the second Ctrl-C since the last message: leave

    assert chat.wait() == 0


def test_ctrl_c_at_the_prompt_says_how_to_leave_and_twice_leaves(
    spawn: Spawn, project: Path
) -> None:
    chat = spawn(*AGENTDECK, "chat", "approve", "--project", str(project))

    chat.expect("you> ")
    chat.interrupt()
    chat.expect("(Ctrl-C again or Ctrl-D to leave)")
    chat.expect("you> ")
    chat.interrupt()

    assert chat.wait() == 0
