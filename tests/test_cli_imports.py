"""The commands that only read or signal a store import no engine SDK (issue 22, item 2).

Each command runs as a fresh ``python -X importtime -m agentdeck ...`` process in this
environment, where every first-party plugin (the OpenAI Agents and LangGraph engines among
them) is installed; the interpreter's own import log says which modules were loaded. A store
with a finished run is there to read, so ``runs list`` and ``runs show`` do their real work.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentdeck.deck.deck import Deck
from agentdeck.model.payloads import RunCompleted, RunStarted
from agentdeck.ports import NewRun
from agentdeck.settings import CoreSettings, Settings

ENGINE_SDKS = {"agents", "langgraph", "langchain_core", "openai"}
RUN_ID = "run-cli-imports"
LIVE_ID = "run-cli-imports-live"


def imported(arguments: list[str], state_url: str, *, statuses: tuple[int, ...] = (0,)) -> set[str]:
    """Every module the command imported, from ``-X importtime`` on its standard error."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTDECK_")}
    env["AGENTDECK_STATE"] = state_url
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agentdeck", *arguments],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in statuses, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    modules = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                modules.add(name)
    assert modules, "no import log: -X importtime printed nothing"
    return modules


@pytest.fixture(scope="module")
def state_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('cli-imports') / 'state.db'}"

    async def fill() -> None:
        settings = Settings.load(overrides={CoreSettings.section: {"state": url}})
        async with Deck(settings=settings, observers=()) as deck:
            store = deck.service.store
            started = RunStarted(name="job", invocable_kind="workflow")
            assert (await store.open_run(NewRun(run_id=RUN_ID, started=started))).opened
            await store.append(RUN_ID, [RunCompleted()])
            assert (await store.open_run(NewRun(run_id=LIVE_ID, started=started))).opened

    asyncio.run(fill())
    return url


@pytest.mark.parametrize(
    "arguments",
    [
        ["runs", "list", "--json"],
        ["runs", "list"],
        ["runs", "show", RUN_ID],
        ["runs", "show", RUN_ID, "--json"],
        ["runs", "prune", "--older-than", "1d"],
        ["runs", "signal", LIVE_ID, "pause"],
        ["plugins"],
        ["plugins", "--json"],
    ],
    ids=" ".join,
)
def test_reading_commands_import_no_engine_sdk(arguments: list[str], state_url: str) -> None:
    loaded = imported(arguments, state_url) & ENGINE_SDKS
    assert not loaded, f"agentdeck {' '.join(arguments)} imported {sorted(loaded)}"


DECK_AND_RUNTIME = {
    "agentdeck.deck.deck",
    "agentdeck.deck.service",
    "agentdeck.runtime.runtime",
    "agentdeck.runtime.liveness",
}
"""What acting on runs goes through; reading them goes around it (no deck, so no sweep)."""
SERVING_AND_EXPORTING = {"fastapi", "starlette", "uvicorn", "opentelemetry", "langfuse"}
"""What plugins register but a reader never builds: their registration stays cheap."""


@pytest.mark.parametrize(
    "arguments",
    [["runs", "list", "--json"], ["runs", "list"], ["runs", "show", RUN_ID, "--json"]],
    ids=" ".join,
)
def test_reading_commands_import_no_deck_runtime_server_or_exporter(
    arguments: list[str], state_url: str
) -> None:
    loaded = imported(arguments, state_url)
    assert not loaded & DECK_AND_RUNTIME, sorted(loaded & DECK_AND_RUNTIME)
    roots = {name.split(".")[0] for name in loaded}
    assert not roots & SERVING_AND_EXPORTING, sorted(roots & SERVING_AND_EXPORTING)
    if arguments == ["runs", "list", "--json"]:
        # Nothing to render: neither the transcript's styles nor a subcommand it did not name.
        assert "agentdeck.bindings.transcript" not in loaded
        assert not {"agentdeck.cli.runs.acting", "agentdeck.cli.runs.fork"} & loaded


def test_answering_imports_no_engine_sdk(state_url: str) -> None:
    """A run that asks nothing refuses the answer (status 1), after the same reads and the
    same deck an accepted answer goes through."""
    loaded = imported(["runs", "answer", LIVE_ID, "yes"], state_url, statuses=(0, 1))
    assert not loaded & ENGINE_SDKS


def test_the_engines_are_installed_here(state_url: str) -> None:
    """The check above means something only where the engine SDKs can be imported at all."""
    done = subprocess.run(
        [sys.executable, "-c", "import agents, langgraph"], capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("arguments", [["--help"], ["--version"], ["runs", "--help"]], ids=" ".join)
def test_help_imports_neither_engines_nor_models(arguments: list[str], state_url: str) -> None:
    """``--help`` lists the commands from their names alone: no pydantic model, no deck."""
    loaded = imported(arguments, state_url)
    assert not loaded & ENGINE_SDKS
    if arguments != ["runs", "--help"]:
        assert "pydantic" not in loaded
        assert "agentdeck.deck.deck" not in loaded


def test_importing_agentdeck_loads_no_layer(tmp_path: Path) -> None:
    """``import agentdeck`` resolves its public names on first use."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import agentdeck"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    names = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "pydantic" not in names and not names & ENGINE_SDKS
    assert "agentdeck.deck.deck" not in names
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import agentdeck; print(agentdeck.Deck.__name__, agentdeck.views.__name__)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.split() == ["Deck", "agentdeck.observing.views"], done.stderr
