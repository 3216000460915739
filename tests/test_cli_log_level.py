"""`-v`/`--log-level` before or after the command, on a store that needs a plugin (SQLite):
the `agentdeck.*` debug lines appear only when asked for."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from agentdeck import Deck
from agentdeck.settings import Settings


def run_command(*arguments: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentdeck", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


async def create_store(url: str) -> None:
    """Open (and so create) the store once: a read command never creates a named one."""
    async with Deck(settings=Settings(env={"AGENTDECK_STATE": url}), observers=()):
        pass


def test_log_level_before_or_after_the_command(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    asyncio.run(create_store(url))
    env = {**os.environ, "AGENTDECK_STATE": url}
    quiet = run_command("runs", "list", env=env)
    assert "DEBUG" not in quiet.stderr
    for arguments in (["--log-level", "DEBUG", "runs", "list"], ["runs", "list", "-vv"]):
        loud = run_command(*arguments, env=env)
        assert loud.returncode == 0, loud.stderr
        assert "agentdeck: DEBUG agentdeck." in loud.stderr, arguments
    refused = run_command("--log-level", "chatty", "plugins", env=env)
    assert refused.returncode == 2
    assert "invalid choice: 'chatty'" in refused.stderr
