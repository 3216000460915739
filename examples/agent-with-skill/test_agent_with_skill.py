"""The agent-with-skill example, run offline: the model is told about the skills but not their
text, loads the one it needs with `load_skill`, and answers; the README's output is exact."""

from __future__ import annotations

import importlib.util
import os
import runpy
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from agentdeck import Deck, Settings, Skills, ToolCallCompleted, ToolCallStarted
from agentdeck_openai.testing import LoopbackModelServer, Script, reply, tool_call

HERE = Path(__file__).resolve().parent
PROVIDER_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "AGENTDECK_STATE")


def _load_main() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agent_with_skill_main", HERE / "main.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


example = _load_main()
POLICY = Skills(HERE / ".agentdeck" / "skills")["refund-policy"]


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


async def test_the_model_loads_the_skill_it_needs_and_only_then_reads_it(
    clean_env: None, tmp_path: Path
) -> None:
    state = f"sqlite:///{tmp_path / 'state.db'}"
    script = Script(
        [
            tool_call("load_skill", {"name": "refund-policy"}, call_id="call_s"),
            reply("Within 30 days you get a full refund."),
        ]
    )
    with LoopbackModelServer(script) as server:
        os.environ.update(server.env(), AGENTDECK_STATE=state)
        run_id = await example.main("Can I return a jacket I got last week?")

    first, second = server.model_requests
    # Told about every skill by name and description, through the load_skill tool ...
    [load_skill] = [t for t in first.body["tools"] if t["name"] == "load_skill"]
    assert "refund-policy: The shop's rules for returns" in load_skill["description"]
    assert "gift-wrapping: What gift wrapping costs" in load_skill["description"]
    # ... but not its text, until the model asked for it.
    assert "within 30 days of delivery" not in str(first.body)
    assert second.tool_outputs["call_s"] == POLICY.read()
    assert "within 30 days of delivery" in POLICY.read()

    async with Deck(settings=Settings(env={"AGENTDECK_STATE": state})) as reader:
        events = [event async for event in (await reader.runs.get(run_id)).events()]
    [started] = [e.payload for e in events if isinstance(e.payload, ToolCallStarted)]
    [completed] = [e.payload for e in events if isinstance(e.payload, ToolCallCompleted)]
    assert (started.tool, started.args) == ("load_skill", {"name": "refund-policy"})
    assert completed.result_size == len(POLICY.read()) and completed.error is None
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


def test_a_skill_the_project_lacks_is_refused_when_the_deck_builds(tmp_path: Path) -> None:
    from agentdeck import Agent, ConfigError

    typo = Agent(name="returns", instructions="x", skills=["refund-polcy"])
    deck = Deck(agents=[typo], skills=HERE / ".agentdeck" / "skills", settings=Settings())
    with pytest.raises(ConfigError, match="refund-polcy"):
        deck.build()
