"""``agentdeck chat`` with a real OpenAI Agents SDK agent, through a pseudo-terminal.

The model is the ``agentdeck-openai`` loopback server in this process, streaming its reply in
deltas over real HTTP; the chat is a separate process on a pty, typed at like a person would.
It shows the reply as it streams, asks for the approval of a tool call inline (``y``/``n``),
and continues the agent once approved.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from agentdeck_openai.testing import LoopbackModelServer, Script, reply, tool_call

ROOT = Path(__file__).resolve().parents[1]

AGENT = """\
from agentdeck import Agent, tool

DELETED = []


@tool
def delete_file(path: str) -> str:
    \"\"\"Delete a file.\"\"\"
    DELETED.append(path)
    return f"deleted {path}"


cleaner = Agent(
    name="cleaner",
    instructions="Tidy up.",
    tools=[delete_file],
    interrupt_on=["delete_file"],
)
"""


def _pty_support() -> ModuleType:
    path = ROOT / "agentdeck_core" / "tests" / "pty_support.py"
    spec = importlib.util.spec_from_file_location("pty_support", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_chat_streams_an_agents_reply_and_asks_for_a_tool_approval(tmp_path: Path) -> None:
    bundle = tmp_path / ".agentdeck" / "agents" / "cleaner"
    bundle.mkdir(parents=True)
    (bundle / "agent.py").write_text(AGENT, encoding="utf-8")
    script = Script(
        [
            reply(["Hello! ", "I can ", "tidy up."]),
            tool_call("delete_file", {"path": "old.log"}),
            reply(["Deleted ", "old.log."]),
        ]
    )
    with LoopbackModelServer(script) as server:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("AGENTDECK_", "OPENAI_"))},
            **server.env(),
            "NO_COLOR": "1",
            "TERM": "xterm",
        }
        chat = _pty_support().PtyProcess(
            [sys.executable, "-m", "agentdeck", "chat", "--project", ".agentdeck"],
            env=env,
            cwd=tmp_path,
        )
        try:
            chat.expect("Chatting with cleaner (agent).")
            chat.expect("you> ")
            chat.sendline("hi")
            chat.expect("Hello! I can tidy up.\n")  # three deltas, one line
            chat.expect("you> ")
            chat.sendline("delete old.log")
            question = chat.expect("y/n> ")
            assert 'approve delete_file({"path": "old.log"})?  [y/n]' in question
            chat.sendline("y")
            chat.expect('+ answered: {"approved": true}')
            chat.expect('* delete_file({"path": "old.log"}) -> deleted old.log')
            chat.expect("Deleted old.log.\n")
            chat.expect("you> ")
            chat.end_input()
            assert chat.wait() == 0
        finally:
            chat.close()
    assert len(server.model_requests) == 3  # the scripted calls, over the SDK's real client
