"""SIGTERM drains a served deck: the live run parks at a safe point, the process exits cleanly,
and another process continues the run from the durable store — a rolling restart loses nothing.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import signal
import sys
from pathlib import Path
from typing import Any

import httpx
from http_test_support import SAFETY, frames

from agentdeck.vocabulary import RunStatus

HERE = Path(__file__).parent


async def _listening_port(log: asyncio.StreamReader) -> int:
    """The port uvicorn reports once it listens (``Uvicorn running on http://host:port``)."""
    while line := (await log.readline()).decode():
        found = re.search(r"Uvicorn running on http://127\.0\.0\.1:(\d+)", line)
        if found:
            return int(found.group(1))
    raise AssertionError("the served process exited before it listened")


def _served_app() -> Any:
    spec = importlib.util.spec_from_file_location("http_served_app", HERE / "served_app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_sigterm_parks_the_live_run_and_another_process_finishes_it(
    sqlite_path: Path, tmp_path: Path
) -> None:
    state_url = f"sqlite:///{sqlite_path}"
    flag = tmp_path / "finish"
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        str(HERE / "served_app.py"),
        state_url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    try:
        port = await asyncio.wait_for(_listening_port(child.stderr), SAFETY)
        rest_of_log = asyncio.create_task(child.stderr.read())  # keep the pipe from filling
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=SAFETY) as client:
            started = await client.post(
                "/runs", json={"name": "long_job", "input": {"flag": str(flag)}}
            )
            assert started.status_code == 201
            run_id = started.json()["id"]
            kinds: list[str | None] = []
            async with client.stream("GET", f"/runs/{run_id}/events") as response:
                async for frame in frames(response):
                    kinds.append(frame.event)
                    if frame.event == "step.completed":
                        child.send_signal(signal.SIGTERM)  # the run is inside its loop now
        assert kinds[-3:] == ["control.requested", "control.observed", "run.paused"]
        assert await asyncio.wait_for(child.wait(), SAFETY) == 0
        rest = await child.stdout.read()
        assert rest.decode().strip().splitlines()[-1] == "exited"
        assert "Traceback" not in (await rest_of_log).decode()
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()

    served_app = _served_app()
    async with served_app.make_deck(state_url) as deck:
        run = await deck.runs.get(run_id)
        assert await run.status() is RunStatus.PAUSED
        flag.touch()
        await run.resume()
        assert await run == "finished"
