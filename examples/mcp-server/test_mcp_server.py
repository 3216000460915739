"""The mcp-server example, run offline: the deck starts the stdio MCP server `.mcp.json`
declares, the model is offered its tools, and a call reaches the server process and back."""

from __future__ import annotations

import importlib.util
import json
import os
import runpy
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from agentdeck import MCP, ConfigError, Deck, Settings, ToolCallCompleted, ToolCallStarted
from agentdeck_openai.testing import LoopbackModelServer, Script, reply, tool_call

HERE = Path(__file__).resolve().parent
PROVIDER_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "AGENTDECK_STATE")


def _load_main() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mcp_server_main", HERE / "main.py")
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
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run from the example's directory with this interpreter's `python` first on PATH (what an
    activated virtualenv gives `.mcp.json`'s command); no provider configured; whatever the
    example sets undone afterwards."""
    monkeypatch.chdir(HERE)
    saved = dict(os.environ)
    for name in PROVIDER_ENV:
        os.environ.pop(name, None)
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


async def test_the_agent_answers_with_the_mcp_servers_tools(
    clean_env: None, tmp_path: Path
) -> None:
    state = f"sqlite:///{tmp_path / 'state.db'}"
    script = Script(
        [
            tool_call("stock_level", {"sku": "mat-xl"}, call_id="call_m"),
            reply("3 left, in Porto."),
        ]
    )
    with LoopbackModelServer(script) as server:
        os.environ.update(server.env(), AGENTDECK_STATE=state)
        run_id = await example.main("How many XL mats are left?")

    first, second = server.model_requests
    assert {"list_products", "stock_level"} <= set(first.tool_names)
    # The answer came from the server process: its stock table is nowhere else.
    assert json.loads(second.tool_outputs["call_m"]) == {
        "sku": "MAT-XL",
        "name": "Sleeping mat XL",
        "in_stock": 3,
        "warehouse": "Porto",
    }

    async with Deck(settings=Settings(env={"AGENTDECK_STATE": state})) as reader:
        events = [event async for event in (await reader.runs.get(run_id)).events()]
    [started] = [e.payload for e in events if isinstance(e.payload, ToolCallStarted)]
    [completed] = [e.payload for e in events if isinstance(e.payload, ToolCallCompleted)]
    assert (started.tool, started.args) == ("stock_level", {"sku": "mat-xl"})
    assert "Porto" in completed.result_preview and completed.error is None
    assert events[-1].kind == "run.completed"


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


async def test_a_server_that_cannot_start_refuses_the_open_naming_it(
    clean_env: None, tmp_path: Path
) -> None:
    broken = MCP.from_dict(
        {"mcpServers": {"inventory": {"command": "python", "args": ["mcp_server/gone.py"]}}}
    )
    script = Script([])
    with LoopbackModelServer(script) as server:
        env = {**server.env(), "AGENTDECK_STATE": f"sqlite:///{tmp_path}/state.db"}
        deck = Deck.from_project(example.PROJECT, mcp=broken, settings=Settings(env=env))
        with pytest.raises(ConfigError, match="MCP server 'inventory' could not be started"):
            await deck.open()
