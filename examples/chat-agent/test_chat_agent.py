"""The chat-agent example, run offline: its `main()` against a scripted loopback model, its
offline fallback exactly as the README shows it, and the same project through the CLI."""

from __future__ import annotations

import importlib.util
import json
import os
import runpy
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from agentdeck import Deck, Settings, ToolCallCompleted, ToolCallStarted
from agentdeck_openai.testing import LoopbackModelServer, Script, reply, tool_call

HERE = Path(__file__).resolve().parent
PROVIDER_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "AGENTDECK_STATE")


def _load_main() -> ModuleType:
    spec = importlib.util.spec_from_file_location("chat_agent_main", HERE / "main.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


example = _load_main()


def readme_output() -> str:
    """The block the README promises under "Expected output"."""
    after = (HERE / "README.md").read_text(encoding="utf-8").split("Expected output", 1)[1]
    return after.split("```text\n", 1)[1].split("```", 1)[0]


@pytest.fixture
def clean_env() -> Iterator[None]:
    """No provider configured, and whatever the example sets undone afterwards."""
    saved = dict(os.environ)
    for name in PROVIDER_ENV:
        os.environ.pop(name, None)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


async def test_the_agent_looks_the_order_up_and_answers_from_the_result(
    clean_env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = f"sqlite:///{tmp_path / 'state.db'}"
    script = Script(
        [
            tool_call("order_status", {"order_id": "A-1004"}, call_id="call_1"),
            reply("Your order A-1004 is still being packed; expect it next week."),
        ]
    )
    with LoopbackModelServer(script) as server:
        os.environ.update(server.env(), AGENTDECK_STATE=state)
        run_id = await example.main("Where is my order A-1004?")

    first, second = server.model_requests
    assert first.last_user_text == "Where is my order A-1004?"
    assert "order_status" in first.tool_names
    assert json.loads(second.tool_outputs["call_1"])["status"] == "packing"
    assert "still being packed" in capsys.readouterr().out

    # The run is in the durable store, readable by any other deck.
    async with Deck(settings=Settings(env={"AGENTDECK_STATE": state})) as reader:
        run = await reader.runs.get(run_id)
        assert (await run.status()).value == "completed"
        events = [event async for event in run.events()]
    kinds = [event.kind for event in events]
    assert kinds[0] == "run.started" and kinds[-1] == "run.completed"
    [started] = [e.payload for e in events if isinstance(e.payload, ToolCallStarted)]
    [completed] = [e.payload for e in events if isinstance(e.payload, ToolCallCompleted)]
    assert (started.tool, started.args) == ("order_status", {"order_id": "A-1004"})
    assert '"carrier": "-"' in completed.result_preview and completed.error is None


def test_without_a_provider_it_prints_what_the_readme_shows(
    clean_env: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setattr(sys, "argv", ["main.py"])
    monkeypatch.setenv("AGENTDECK_STATE", f"sqlite:///{tmp_path}/state.db")  # not the checkout
    runpy.run_path(str(HERE / "main.py"), run_name="__main__")
    assert capsys.readouterr().out == readme_output()


def test_the_cli_plays_the_same_project(tmp_path: Path) -> None:
    script = Script([tool_call("order_status", {"order_id": "A-1003"}), reply("On its way.")])
    with LoopbackModelServer(script) as server:
        env = {k: v for k, v in os.environ.items() if k not in PROVIDER_ENV}
        # The state goes to the test's directory, not the default file inside the checkout.
        env.update(server.env(), NO_COLOR="1", AGENTDECK_STATE=f"sqlite:///{tmp_path}/state.db")
        done = subprocess.run(
            [sys.executable, "-m", "agentdeck", "run", "support", "Where is A-1003?"],
            cwd=HERE,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    assert "order_status" in done.stdout and "DHL" in done.stdout
    assert "On its way." in done.stdout
