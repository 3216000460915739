"""The README's main-job command (`./dev demo`) runs `python -m agentdeck.demo`."""

from __future__ import annotations

import subprocess
import sys


def test_the_demo_runs_offline_on_the_default_store_and_prints_every_event() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentdeck.demo"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
        check=False,
    )

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("store: memory://")
    kinds = [line.split()[1] for line in lines[1:-1]]
    assert kinds[0] == "run.started"
    assert "run.interrupted" in kinds and "answer.recorded" in kinds
    assert kinds[-1] == "run.completed"
    assert [int(line.split()[0]) for line in lines[1:-1]] == list(range(len(kinds)))
    assert lines[-1] == f"status: completed (folded from {len(kinds)} events)"
