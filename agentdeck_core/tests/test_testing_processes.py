"""``agentdeck.testing.processes``: a worker driven by JSON lines, with deadlines and kills."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from agentdeck.testing.processes import JsonLinesWorker, WorkerGone, start_all

ECHO = """
import json, sys, time
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    command = json.loads(line)
    if command["op"] == "exit":
        break
    if command["op"] == "crash":
        sys.stderr.write("boom\\n")
        sys.exit(3)
    if command["op"] == "sleep":
        time.sleep(60)
    print(json.dumps({"echo": command}), flush=True)
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "echo_worker.py"
    path.write_text(ECHO)
    return path


def test_a_worker_answers_each_command_and_exits_when_told(script: Path) -> None:
    worker = JsonLinesWorker(script, wait=30)
    try:
        start_all([worker])
        assert worker.ask(op="say", text="hi") == {"echo": {"op": "say", "text": "hi"}}
        worker.send(op="a")
        worker.send(op="b")  # both on their way before either reply is read
        assert [worker.reply()["echo"]["op"], worker.reply()["echo"]["op"]] == ["a", "b"]
    finally:
        worker.stop()
    assert worker.process.returncode == 0


def test_a_worker_that_exits_fails_the_wait_with_its_stderr(script: Path) -> None:
    worker = JsonLinesWorker(script, wait=30)
    try:
        start_all([worker])
        worker.send(op="crash")
        with pytest.raises(WorkerGone, match="boom"):
            worker.reply()
    finally:
        worker.stop()


def test_a_silent_worker_fails_the_wait_and_can_be_killed(script: Path) -> None:
    worker = JsonLinesWorker(script, wait=30)
    try:
        start_all([worker])
        worker.send(op="sleep")
        with pytest.raises(WorkerGone, match=r"no reply within 0\.2 s"):
            worker.reply(wait=0.2)
        assert worker.kill() == -signal.SIGKILL
        assert worker.remaining() == []
    finally:
        worker.stop()
