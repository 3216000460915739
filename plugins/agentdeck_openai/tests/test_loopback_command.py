"""``agentdeck-openai loopback``: the loopback model server as a process, driving the real
``agentdeck run`` of an example project offline (issue 22, item 8)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdeck.errors import ConfigError
from agentdeck_openai.loopback import DEFAULT_REPLY, load_script
from agentdeck_openai.testing import ModelRequest

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "chat-agent" / ".agentdeck"


@pytest.fixture
def chat_agent(tmp_path: Path) -> Path:
    """A copy of the example project: its default state file is written beside the copy, not
    into the checkout's example."""
    copy = tmp_path / "chat-agent" / ".agentdeck"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("state.db*", "__pycache__"))
    return copy


class Served:
    def __init__(self, process: subprocess.Popen[str], env: dict[str, str]) -> None:
        self.process, self.env = process, env

    def stop(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGINT)
        _, err = self.process.communicate(timeout=30)
        return self.process.returncode, err


def serve(*arguments: str) -> Iterator[Served]:
    process = subprocess.Popen(
        [sys.executable, "-m", "agentdeck_openai.loopback", "loopback", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    env: dict[str, str] = {}
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("export "):
                name, _, value = line.removeprefix("export ").strip().partition("=")
                env[name] = value
            if line.startswith("# loopback model server on"):
                break
        assert set(env) == {"OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL"}, env
        yield Served(process, env)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)


def agentdeck(served: Served, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTDECK_", "OPENAI_"))}
    return subprocess.run(
        [sys.executable, "-m", "agentdeck", *arguments],
        env={**env, **served.env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_agentdeck_run_plays_an_agent_turn_against_the_scripted_server(
    tmp_path: Path, chat_agent: Path
) -> None:
    script = tmp_path / "turns.json"
    script.write_text(
        json.dumps(
            [
                {"tool_call": "order_status", "arguments": {"order_id": "A-1003"}},
                {"reply": "Order A-1003 is with DHL, due Thursday."},
            ]
        ),
        encoding="utf-8",
    )
    for served in serve("--script", str(script)):
        done = agentdeck(served, "run", "support", "Where is A-1003?", "--project", str(chat_agent))
        assert done.returncode == 0, done.stderr
        assert "order_status(" in done.stdout and '"carrier": "DHL"' in done.stdout
        assert "Order A-1003 is with DHL, due Thursday." in done.stdout
        status, err = served.stop()
        assert status == 0 and "served 2 model request(s)" in err


def test_without_a_script_every_request_gets_the_same_reply(chat_agent: Path) -> None:
    for served in serve():
        for _ in range(2):
            done = agentdeck(served, "run", "support", "hello", "--project", str(chat_agent))
            assert done.returncode == 0, done.stderr
            assert DEFAULT_REPLY in done.stdout
        status, err = served.stop()
        assert status == 0 and "served 2 model request(s)" in err


def test_a_python_script_file_defines_SCRIPT(tmp_path: Path) -> None:
    source = tmp_path / "turns.py"
    source.write_text(
        "from agentdeck_openai.testing import Script, reply\n"
        "SCRIPT = Script([reply('from python', times=None)])\n",
        encoding="utf-8",
    )
    script = load_script(source)
    request = ModelRequest(index=0, method="POST", path="/v1/responses", headers={}, body={})
    turn = script.take(request)
    assert turn is not None and "".join(turn.text or ()) == "from python"
    assert script.take(request) is turn  # times=None: it answers every request


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("turns.json", '{"reply": "x"}', "not a list of turns"),
        ("turns.json", '[{"say": "x"}]', "turn 0 has keys ['say']"),
        ("turns.json", '[{"reply": "x", "times": 0}]', "times is 0"),
        ("turns.json", "[", "is not JSON"),
        ("turns.py", "X = 1\n", "defines no SCRIPT"),
        ("turns.txt", "", "neither .py nor .json"),
    ],
)
def test_a_bad_script_is_a_config_error_naming_the_file(
    tmp_path: Path, name: str, text: str, problem: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(problem)) as refused:
        load_script(path)
    assert str(path) in str(refused.value)


def test_a_missing_script_exits_2_with_the_reason(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentdeck_openai.loopback", "loopback", "--script", "nope.json"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "script nope.json does not exist" in done.stderr
