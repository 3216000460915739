"""The langgraph-existing-graph example, run offline: the compiled graph runs on a deck as it is
(its model call answered by a loopback server), parks on its `interrupt()`, resumes with the
answer, and is left unchanged -- it still runs on its own afterwards."""

from __future__ import annotations

import importlib.util
import os
import runpy
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from agentdeck import Deck, Settings
from agentdeck_openai.testing import LoopbackModelServer, Script, reply

HERE = Path(__file__).resolve().parent
PROVIDER_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "AGENTDECK_STATE")
DRAFT = "We are sorry! A new mug ships today."


@pytest.fixture
def clean_env(tmp_path: Path) -> Iterator[str]:
    """No provider configured, runs parked in a SQLite file of this test's own (yielded), and
    whatever the example sets undone afterwards."""
    saved = dict(os.environ)
    for name in PROVIDER_ENV:
        os.environ.pop(name, None)
    os.environ["AGENTDECK_STATE"] = f"sqlite:///{tmp_path / 'state.db'}"
    try:
        yield os.environ["AGENTDECK_STATE"]
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture
def example(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """main.py, imported the way `python main.py` imports it (its directory on sys.path)."""
    monkeypatch.syspath_prepend(str(HERE))
    spec = importlib.util.spec_from_file_location("langgraph_example_main", HERE / "main.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def readme_output() -> str:
    """The block the README promises under "Expected output"."""
    after = (HERE / "README.md").read_text(encoding="utf-8").split("Expected output", 1)[1]
    return after.split("```text\n", 1)[1].split("```", 1)[0]


async def test_the_wrapped_graph_drafts_parks_for_review_and_sends(
    clean_env: str, example: ModuleType
) -> None:
    with LoopbackModelServer(Script([reply(DRAFT)])) as server:
        os.environ.update(server.env())
        final = await example.main("The mug was broken.", answer="send")

    assert final == {
        "email": "The mug was broken.",
        "draft": DRAFT,
        "verdict": "send",
        "sent": True,
    }
    [request] = server.model_requests
    assert request.api == "chat" and request.last_user_text == "The mug was broken."

    async with Deck(settings=Settings(env={"AGENTDECK_STATE": clean_env})) as reader:
        [record] = await reader.runs.list()
        events = [event async for event in record.events()]
    assert [(e.kind, getattr(e.payload, "node", None)) for e in events] == [
        ("run.started", None),
        ("node.updated", "draft"),
        ("run.interrupted", None),
        ("answer.recorded", None),
        ("run.resumed", None),
        ("node.updated", "review"),
        ("node.updated", "send"),
        ("run.completed", None),
    ]
    assert events[2].payload.payload == {"question": "Send this reply?", "draft": DRAFT}


async def test_a_discarded_draft_is_not_sent(clean_env: str, example: ModuleType) -> None:
    with LoopbackModelServer(Script([reply(DRAFT)])) as server:
        os.environ.update(server.env())
        final = await example.main("The mug was broken.", answer="discard")
    assert final["verdict"] == "discard" and "sent" not in final


async def test_the_graph_is_left_unchanged_and_still_runs_on_its_own(
    clean_env: str, example: ModuleType
) -> None:
    graph = example.graph
    own_checkpointer = graph.checkpointer
    assert isinstance(own_checkpointer, InMemorySaver)
    with LoopbackModelServer(Script([reply(DRAFT), reply(DRAFT)])) as server:
        os.environ.update(server.env())
        await example.main("first", answer="send")  # on the deck

        config = {"configurable": {"thread_id": "standalone"}}  # and without it
        parked = await graph.ainvoke({"email": "second"}, config)
        assert parked["__interrupt__"][0].value["draft"] == DRAFT
        done = await graph.ainvoke(Command(resume="send"), config)

    assert done["sent"] is True
    assert graph.checkpointer is own_checkpointer


def test_without_a_provider_it_prints_what_the_readme_shows(
    clean_env: str,
    example: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(sys, "argv", ["main.py", "--answer", "send"])
    runpy.run_path(str(HERE / "main.py"), run_name="__main__")
    assert capsys.readouterr().out == readme_output()
