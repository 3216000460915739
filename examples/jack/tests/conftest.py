"""Fixtures: a small documentation tree on disk, the loopback model server, Jack's deck on it.

Nothing is mocked: the deck is a real Deck with the OpenAI engine, talking HTTP to the loopback
OpenAI-compatible server, which answers from the turns each test scripts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from agentdeck import Deck, Settings
from agentdeck_openai.testing import LoopbackModelServer

from jack.agent import build_deck
from jack.corpus import DocsCorpus

PAGES = {
    "docs/runs-and-control.md": """\
# Runs and control

Every turn is a run with one ordered event log.

## Pausing and resuming a run

`await run.pause()` records a pause request and returns at once; the engine pauses the run at
its next safe point. A paused run keeps its state: `await run.resume()` continues it, and a
paused run can still be cancelled.

```python
await run.pause()
# a comment line in code is not a heading
await run.resume()
```

## Cancelling a run

`await run.cancel()` ends the run at its next safe point, or at once when it is suspended.
""",
    "docs/reference/events.md": """\
# Events reference

## Kinds

### `run.paused` {#run-paused}

Suspends the run.

### `run.resumed` {#run-resumed}

The run continues.
""",
    "docs/sessions.md": """\
# Sessions

A session is the conversation an agent remembers between turns. Pass `session_id=` to
`deck.stream()` and a follow-up question sees the earlier turns. One turn runs per session at
a time.
""",
    "docs/workflows.md": """\
# Workflows

A workflow body is ordinary async Python. Its steps are journaled, so a workflow resumes after
a restart without repeating a step. Questions park the workflow until someone answers them.
""",
    "plugins/agentdeck_demo/README.md": """\
# agentdeck-demo

A plugin that registers a demo store.

## Install

Run `pip install agentdeck-demo`.

## Install

The second heading of the same name gets its own anchor.
""",
    "README.md": "Intro text before any heading.\n\n# AgentDeck\n\nA harness for agents.\n",
    "notes/ignored.md": "# Not documentation\n\npause pause pause\n",
}


@pytest.fixture(autouse=True)
def _state_in_the_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Jack's decks keep the default state (``.agentdeck/state.db`` of the working directory):
    each test gets a working directory of its own, so no run one test left behind is taken up
    by the next test's deck, and nothing is written into the checkout."""
    workdir = tmp_path / "workdir"
    workdir.mkdir()
    monkeypatch.chdir(workdir)


@pytest.fixture
def docs_root(tmp_path: Path) -> Path:
    for relative, text in PAGES.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


@pytest.fixture
def corpus(docs_root: Path) -> DocsCorpus:
    return DocsCorpus.from_directory(docs_root)


@pytest.fixture
def model_server() -> Iterator[LoopbackModelServer]:
    with LoopbackModelServer() as server:
        yield server


@pytest.fixture
def settings(model_server: LoopbackModelServer) -> Settings:
    """The deck's settings: exactly the loopback server's, nothing from this machine."""
    return Settings(env=model_server.env())


@pytest.fixture
async def deck(settings: Settings) -> AsyncIterator[Deck]:
    async with build_deck(settings) as deck:
        yield deck
