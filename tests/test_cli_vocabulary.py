"""One JSON vocabulary for runs: the CLI's ``--json`` uses the field names of the HTTP wire models
(``id``, ``kind``, ``pending``), so one parser reads what either prints (issue 22, item 9)."""

from __future__ import annotations

import asyncio
import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from agentdeck.cli import main
from agentdeck.deck.deck import Deck
from agentdeck.model.payloads import RunCompleted, RunStarted
from agentdeck.ports import NewRun
from agentdeck.settings import CoreSettings, Settings
from agentdeck_http.wire import InterruptView, RunView

DONE, LIVE = "run-vocabulary-done", "run-vocabulary-live"


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'state.db'}"

    async def fill() -> None:
        settings = Settings.load(overrides={CoreSettings.section: {"state": url}})
        async with Deck(settings=settings, observers=()) as deck:
            store = deck.service.store
            started = RunStarted(name="job", invocable_kind="workflow")
            assert (await store.open_run(NewRun(run_id=DONE, started=started))).opened
            await store.append(DONE, [RunCompleted()])
            assert (await store.open_run(NewRun(run_id=LIVE, started=started))).opened

    asyncio.run(fill())
    for name in ("AGENTDECK_EVENTS", "AGENTDECK_CONTROL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTDECK_STATE", url)
    return url


def cli_json(*arguments: str) -> Any:
    captured = io.StringIO()
    with redirect_stdout(captured):
        status = main([*arguments, "--json"])
    assert status == 0, captured.getvalue()
    return json.loads(captured.getvalue())


def test_a_listed_run_has_the_fields_of_the_http_run_view(state: str) -> None:
    [done] = [run for run in cli_json("runs", "list")["runs"] if run["id"] == DONE]

    assert set(done) <= set(RunView.model_fields)
    assert done["kind"] == "workflow" and not {"run_id", "invocable_kind"} & set(done)


def test_a_shown_run_lists_its_open_questions_as_pending_like_http(state: str) -> None:
    shown = cli_json("runs", "show", LIVE)

    assert shown["run"]["id"] == LIVE and "pending" in shown and "open_interrupts" not in shown
    assert set(InterruptView.model_fields) >= {"interrupt_id", "seq", "reason", "payload"}


def test_signal_names_the_run_by_id(state: str) -> None:
    """(``runs answer --json`` is held to ``id`` and ``pending`` in the core's CLI tests.)"""
    signalled = cli_json("runs", "signal", LIVE, "pause")

    assert signalled["id"] == LIVE and "run_id" not in signalled
    assert signalled["verb"] == "pause" and signalled["status_before"] == "running"
