"""`./dev demo` with agentdeck-openai installed: after the workflow, one agent turn against the
loopback model server the demo starts as a process (offline)."""

from __future__ import annotations

import subprocess
import sys


def test_the_demo_then_plays_an_agent_turn_against_the_loopback_model_server() -> None:
    """This environment has agentdeck-openai installed: the demo starts its loopback server
    (``agentdeck-openai loopback``) as a process and plays one agent turn on it, offline."""
    done = subprocess.run(
        [sys.executable, "-m", "agentdeck.demo"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin"},
        check=False,
    )

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2].startswith(
        "--- agent turn against the loopback model server (http://127.0.0.1:"
    )
    assert lines[-1] == "assistant: Hello from the loopback model: no provider was called."
