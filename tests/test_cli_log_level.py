"""`-v`/`--log-level` before or after the command, on a store that needs a plugin (SQLite):
the `agentdeck.*` debug lines appear only when asked for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_command(*arguments: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentdeck", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_log_level_before_or_after_the_command(tmp_path: Path) -> None:
    env = {**os.environ, "AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}"}
    quiet = run_command("runs", "list", env=env)
    assert "DEBUG" not in quiet.stderr
    for arguments in (["--log-level", "DEBUG", "runs", "list"], ["runs", "list", "-vv"]):
        loud = run_command(*arguments, env=env)
        assert loud.returncode == 0, loud.stderr
        assert "agentdeck: DEBUG agentdeck." in loud.stderr, arguments
    refused = run_command("--log-level", "chatty", "plugins", env=env)
    assert refused.returncode == 2
    assert "invalid choice: 'chatty'" in refused.stderr
