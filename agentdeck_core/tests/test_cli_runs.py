"""``agentdeck runs ...`` against a named in-memory store shared with a deck in this process.

The deck plays real native workflows (and scripted runs for tool calls and text); the command
runs on its own event loop in a worker thread, exactly as it would in another process, and
reaches the runs through ``AGENTDECK_STATE=memory://<name>``. The cross-process version, on a
SQLite store written by another process, is ``tests/test_cli_stores.py`` at the repository root.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import agentdeck
from agentdeck import Deck, WorkflowCtx, workflow
from agentdeck.cli import main
from agentdeck.cli.common import parse_duration, runtime_of, state_settings
from agentdeck.deck.runs import Run
from agentdeck.errors import InvalidInputError, RunSuspendedError
from agentdeck.memory import plugin as memory_plugin
from agentdeck.model.clock import ManualClock, SystemClock
from agentdeck.model.payloads import (
    AnswerShape,
    MessageCompleted,
    ToolCallCompleted,
    ToolCallStarted,
)
from agentdeck.native import plugin as native_plugin
from agentdeck.plugins.hookspecs import RegisterEngine
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import LeaseState
from agentdeck.settings import Settings
from agentdeck.testing import ScriptedEngine
from agentdeck.testing.engine_kit import Ask, Complete, Script, Yield
from agentdeck.vocabulary import RunStatus

SWEEP = 30.0  # the default sweep interval, which the manual clock is advanced past


@workflow
async def refund(order_id: str, ctx: WorkflowCtx[Any]) -> dict[str, Any]:
    amount = await ctx.step("look_up", lambda: 120)
    await ctx.report("order found", order_id=order_id, amount=amount)
    decision = await ctx.ask({"question": f"Refund {amount} for {order_id}?"}, options=["y", "n"])
    return {"order_id": order_id, "refunded": decision == "y"}


@workflow
async def count(ctx: WorkflowCtx[Any]) -> int:
    how_many = await ctx.ask("how many?", schema=int)
    return int(how_many) * 2


@workflow
async def two_questions(ctx: WorkflowCtx[Any]) -> list[Any]:
    return list(await asyncio.gather(ctx.ask("first?"), ctx.ask("second?")))


@workflow
async def parent(ctx: WorkflowCtx[Any]) -> Any:
    await ctx.report("delegating")
    return await ctx.invoke("refund", {"order_id": "C-7"})


@workflow
async def nap(ctx: WorkflowCtx[Any]) -> str:
    await ctx.sleep_until(datetime(2999, 1, 1, tzinfo=UTC))
    return "rested"


@workflow
async def quick(ctx: WorkflowCtx[Any]) -> str:
    return "done"


HELPER = Script(
    "helper",
    [
        Yield.text("Let me look "),
        Yield.text("that up."),
        Yield(MessageCompleted(message_id="msg-1", text="Let me look that up.")),
        Yield(ToolCallStarted(call_id="c1", tool="search", args={"q": "refund policy"})),
        Yield(ToolCallCompleted(call_id="c1", tool="search", result_preview="30 days")),
        Ask(
            "approve-1",
            payload={"tool": "refund", "arguments": {"order": "A-1"}},
            reason="approval",
            expected=AnswerShape(
                json_schema={
                    "type": "object",
                    "properties": {"approved": {"type": "boolean"}},
                    "required": ["approved"],
                }
            ),
        ),
        Complete("refunded"),
    ],
    kind="agent",
)


class _ScriptedPlugin:
    @agentdeck.hookimpl
    def agentdeck_register_engines(self, register: RegisterEngine) -> None:
        register(ScriptedEngine)


@dataclass
class Outcome:
    status: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """A fresh named in-memory store, configured for the command through the environment."""
    url = f"memory://cli-{uuid.uuid4().hex[:10]}"
    for name in ("AGENTDECK_EVENTS", "AGENTDECK_CONTROL", "AGENTDECK_CONFIG", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTDECK_STATE", url)
    monkeypatch.chdir(tmp_path)  # no stray config.yaml
    return url


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(SystemClock().now())


@pytest.fixture
async def deck(state: str, clock: ManualClock) -> AsyncIterator[Deck]:
    host = PluginHost.from_plugins(
        ("memory", memory_plugin), ("native", native_plugin), ("scripted", _ScriptedPlugin())
    )
    the_deck = Deck(
        workflows=[refund, count, two_questions, parent, nap, quick, HELPER],
        settings=Settings(env={"AGENTDECK_STATE": state}),
        plugins=host,
        clock=clock,
        observers=(),
    )
    async with the_deck:
        yield the_deck


@pytest.fixture
def agentdeck_cli(capsys: pytest.CaptureFixture[str]) -> Any:
    async def call(*argv: str) -> Outcome:
        # Its own event loop on another thread, like another process would have.
        status = await asyncio.to_thread(main, list(argv))
        captured = capsys.readouterr()
        return Outcome(status, captured.out, captured.err)

    return call


async def parked(deck: Deck, name: str, input: Any = None, **options: Any) -> Run:
    run = await deck.runs.start(name, input, **options)
    with pytest.raises(RunSuspendedError):
        await run
    return run


async def kinds(run: Run) -> list[str]:
    return [event.kind async for event in run.events()]


# =========================================================================== list


async def test_list_shows_the_default_namespace_unless_told_otherwise(
    deck: Deck, agentdeck_cli: Any
) -> None:
    mine = await parked(deck, "refund", {"order_id": "A-1"})
    theirs = await parked(deck, "refund", {"order_id": "B-2"}, namespace="acme")

    default = await agentdeck_cli("runs", "list")
    acme = await agentdeck_cli("runs", "list", "--namespace", "acme", "--json")
    everything = await agentdeck_cli("runs", "list", "--all-namespaces")

    assert default.status == 0
    assert mine.id in default.out and theirs.id not in default.out
    assert "waiting_answer" in default.out
    assert [r["id"] for r in acme.json()["runs"]] == [theirs.id]
    assert acme.json()["runs"][0]["namespace"] == "acme"
    assert acme.json()["runs"][0]["status"] == "waiting_answer"
    assert mine.id in everything.out and theirs.id in everything.out
    assert "NAMESPACE" in everything.out and "acme" in everything.out


async def test_list_filters_by_status_and_session(deck: Deck, agentdeck_cli: Any) -> None:
    waiting = await parked(deck, "refund", {"order_id": "A-1"}, session_id="s-1")
    done = await deck.runs.start("quick", session_id="s-2")
    assert await done == "done"

    completed = await agentdeck_cli("runs", "list", "--status", "completed", "--json")
    both = await agentdeck_cli(
        "runs", "list", "--status", "completed", "--status", "waiting_answer", "--json"
    )
    session = await agentdeck_cli("runs", "list", "--session", "s-1", "--json")

    assert [r["id"] for r in completed.json()["runs"]] == [done.id]
    assert {r["id"] for r in both.json()["runs"]} == {done.id, waiting.id}
    assert [r["id"] for r in session.json()["runs"]] == [waiting.id]


async def test_list_is_newest_first_in_pages_with_a_more_hint(
    deck: Deck, agentdeck_cli: Any
) -> None:
    runs = []
    for _ in range(5):
        run = await deck.runs.start("quick")
        assert await run == "done"
        runs.append(run.id)

    first = await agentdeck_cli("runs", "list", "--limit", "2", "--json")
    page = first.json()
    assert [r["id"] for r in page["runs"]] == [runs[4], runs[3]]
    assert page["next_cursor"]
    second = await agentdeck_cli(
        "runs", "list", "--limit", "2", "--cursor", page["next_cursor"], "--json"
    )
    assert [r["id"] for r in second.json()["runs"]] == [runs[2], runs[1]]
    last = await agentdeck_cli(
        "runs", "list", "--limit", "2", "--cursor", second.json()["next_cursor"], "--json"
    )
    assert [r["id"] for r in last.json()["runs"]] == [runs[0]]
    assert last.json()["next_cursor"] is None

    table = await agentdeck_cli("runs", "list", "--limit", "3")
    assert table.out.index(runs[4]) < table.out.index(runs[2]) and runs[1] not in table.out
    [hint] = [line for line in table.err.splitlines() if line.startswith("more: --cursor ")]
    rest = await agentdeck_cli("runs", "list", *hint.removeprefix("more: ").split())
    assert runs[1] in rest.out and runs[0] in rest.out and runs[2] not in rest.out
    assert "more:" not in rest.err

    oldest = await agentdeck_cli("runs", "list", "--oldest-first", "--limit", "1", "--json")
    assert [r["id"] for r in oldest.json()["runs"]] == [runs[0]]
    refused = await agentdeck_cli("runs", "list", "--limit", "0")
    assert refused.status == 2 and "'0' is not a whole number of runs" in refused.err


def test_list_json_uses_the_http_vocabulary() -> None:
    """The keys of a run are those of ``GET /runs`` (``id``, ``kind``), not the record's."""
    from datetime import UTC, datetime

    from agentdeck.cli.common import record_dict
    from agentdeck.ports import RunRecord

    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    data = record_dict(
        RunRecord(
            run_id="r-1",
            name="quick",
            invocable_kind="workflow",
            status=RunStatus.COMPLETED,
            created_at=moment,
            updated_at=moment,
            last_seq=3,
        )
    )
    assert data["id"] == "r-1" and data["kind"] == "workflow" and data["status"] == "completed"
    assert "run_id" not in data and "invocable_kind" not in data
    assert data["created_at"] == "2026-01-02T03:04:05+00:00" and data["wake_at"] is None


async def test_list_of_an_empty_namespace_says_so(deck: Deck, agentdeck_cli: Any) -> None:
    outcome = await agentdeck_cli("runs", "list", "--namespace", "nobody")

    assert outcome.status == 0
    assert outcome.out.startswith("no runs in namespace 'nobody' (events memory://cli-")


# =========================================================================== show


async def test_show_draws_child_runs_questions_and_answers(deck: Deck, agentdeck_cli: Any) -> None:
    outer = await parked(deck, "parent")
    [child] = await deck.runs.list(status=RunStatus.WAITING_ANSWER)

    outcome = await agentdeck_cli("runs", "show", outer.id)

    assert outcome.status == 0
    lines = outcome.out.splitlines()
    assert lines[0] == f"parent (workflow)  paused  run {outer.id}"
    assert any("[info] delegating" in line for line in lines)
    [child_line] = [line for line in lines if "child refund (workflow)" in line]
    assert f"waiting_answer  run {child.id}" in child_line
    question = next(i for i, line in enumerate(lines) if "Refund 120 for C-7?" in line)
    assert lines[question].startswith(("|  ", "   "))  # nested under the child's branch
    assert child_line.startswith(("|- child", "`- child"))
    assert "[y/n]" in lines[question]
    assert "open: waiting for an answer" in lines[question + 1]


async def test_show_puts_a_tool_call_on_one_line_and_streamed_text_in_its_message(
    deck: Deck, agentdeck_cli: Any
) -> None:
    run = await parked(deck, "helper", "refund A-1")

    outcome = await agentdeck_cli("runs", "show", run.id)

    lines = outcome.out.splitlines()
    assert lines[0] == f"helper (agent)  waiting_answer  run {run.id}"
    assert "input: refund A-1" in outcome.out
    [said] = [line for line in lines if "Let me look that up." in line]
    assert said.startswith("|- #")
    [tool] = [line for line in lines if "search(" in line]
    assert tool.endswith('* search({"q": "refund policy"}) -> 30 days')
    [question] = [line for line in lines if "approve refund(" in line]
    assert "[y/n]" in question and "approve-1 (approval)" in question


async def test_show_json_carries_events_children_pending_control_and_open_questions(
    deck: Deck, agentdeck_cli: Any
) -> None:
    outer = await parked(deck, "parent")
    [child] = await deck.runs.list(status=RunStatus.WAITING_ANSWER)
    await child.pause("lunch")  # a waiting run keeps the pause pending (it vetoes answers)

    outcome = await agentdeck_cli("runs", "show", outer.id, "--json")

    tree = outcome.json()
    assert tree["run"]["id"] == outer.id and tree["run"]["status"] == "paused"
    assert tree["events"][0]["kind"] == "run.started"
    [shown_child] = tree["children"]
    assert shown_child["run"]["id"] == child.id
    assert shown_child["run"]["parent_run_id"] == outer.id
    assert [i["interrupt_id"] for i in shown_child["pending"]] == ["ask-0"]
    assert shown_child["pending"][0]["expected"]["options"] == ["y", "n"]
    assert [(c["verb"], c["reason"]) for c in shown_child["pending_control"]] == [
        ("pause", "lunch")
    ]


async def test_show_of_an_unknown_run_fails_naming_it(deck: Deck, agentdeck_cli: Any) -> None:
    outcome = await agentdeck_cli("runs", "show", "no-such-run")

    assert outcome.status == 1
    assert "no run with id 'no-such-run'" in outcome.err


# =========================================================================== tail


async def test_tail_of_a_parked_run_prints_its_log_and_reports_it_suspended(
    deck: Deck, agentdeck_cli: Any
) -> None:
    run = await parked(deck, "refund", {"order_id": "A-1"})

    text = await agentdeck_cli("runs", "tail", run.id)
    as_json = await agentdeck_cli("runs", "tail", run.id, "--json", "--from-seq", "2")

    assert text.status == 3
    assert [line.split()[3] for line in text.out.splitlines()] == [
        "run.started",
        "step.completed",
        "report",
        "run.interrupted",
    ]
    assert as_json.status == 3
    events = [json.loads(line) for line in as_json.out.splitlines()]
    assert [(e["seq"], e["kind"]) for e in events] == [(2, "report"), (3, "run.interrupted")]


async def test_tail_reports_a_finished_run_by_its_exit_status(
    deck: Deck, agentdeck_cli: Any
) -> None:
    done = await deck.runs.start("quick")
    assert await done == "done"
    cancelled = await parked(deck, "refund", {"order_id": "A-1"})
    await cancelled.cancel("not needed")

    assert (await agentdeck_cli("runs", "tail", done.id)).status == 0
    outcome = await agentdeck_cli("runs", "tail", cancelled.id)
    assert outcome.status == 1
    assert outcome.out.splitlines()[-1].split()[3] == "run.cancelled"


# =========================================================================== answer


async def test_answer_without_a_project_is_recorded_and_a_deck_with_the_engine_continues_it(
    deck: Deck, clock: ManualClock, agentdeck_cli: Any
) -> None:
    run = await parked(deck, "refund", {"order_id": "A-1"})

    outcome = await agentdeck_cli("runs", "answer", run.id, "y")

    assert outcome.status == 0
    assert "answer to ask-0 recorded" in outcome.out
    assert (await kinds(run))[-2:] == ["run.interrupted", "answer.recorded"]
    assert await run.status() is RunStatus.WAITING_ANSWER
    assert await run.pending() is None  # the question is closed; the play is owed

    shown = await agentdeck_cli("runs", "show", run.id)
    assert "answered; a deck that has 'refund' continues it at its next sweep" in shown.out

    clock.advance(SWEEP)  # the deck's sweep finds the answered run and plays it
    assert await run == {"order_id": "A-1", "refunded": True}
    assert (await kinds(run))[-3:] == ["answer.recorded", "run.resumed", "run.completed"]


async def test_an_answer_that_does_not_fit_is_refused_and_the_run_keeps_waiting(
    deck: Deck, agentdeck_cli: Any
) -> None:
    run = await parked(deck, "refund", {"order_id": "A-1"})

    outcome = await agentdeck_cli("runs", "answer", run.id, "maybe")

    assert outcome.status == 1
    assert "the answer must be one of the offered options: 'y', 'n'" in outcome.err
    assert "maybe" not in outcome.err.split("refused")[-1]  # the reason never echoes the value
    assert (await kinds(run))[-1] == "answer.refused"
    assert (await run.pending()) is not None


async def test_json_value_answers_a_typed_question(
    deck: Deck, clock: ManualClock, agentdeck_cli: Any
) -> None:
    run = await parked(deck, "count")

    as_text = await agentdeck_cli("runs", "answer", run.id, "3")
    as_json = await agentdeck_cli("runs", "answer", run.id, "3", "--json-value", "--json")
    not_json = await agentdeck_cli("runs", "answer", run.id, "three", "--json-value")

    assert as_text.status == 1 and "does not match the expected schema" in as_text.err
    assert as_json.status == 0
    assert as_json.json() == {
        "id": run.id,
        "interrupt_id": "ask-0",
        "status": "waiting_answer",
        "continued": False,
        "already_recorded": False,
        "pending": [],
    }
    assert not_json.status == 1 and "VALUE is not JSON" in not_json.err
    clock.advance(SWEEP)
    assert await run == 6


async def test_several_open_questions_need_an_interrupt_id(
    deck: Deck, clock: ManualClock, agentdeck_cli: Any
) -> None:
    run = await parked(deck, "two_questions")

    unnamed = await agentdeck_cli("runs", "answer", run.id, "a")
    first = await agentdeck_cli("runs", "answer", run.id, "a", "--interrupt-id", "ask-0")
    second = await agentdeck_cli("runs", "answer", run.id, "b", "--interrupt-id", "ask-1")

    assert unnamed.status == 1 and "has 2 open questions (ask-0, ask-1)" in unnamed.err
    assert first.status == 0 and "still open: ask-1" in first.out
    assert second.status == 0 and "answer to ask-1 recorded" in second.out
    clock.advance(SWEEP)
    assert await run == ["a", "b"]


async def test_answer_with_a_project_continues_the_run_in_the_command(
    state: str, clock: ManualClock, tmp_path: Path, agentdeck_cli: Any
) -> None:
    project = write_project(tmp_path)
    async with Deck.from_project(
        project, settings=Settings(env={"AGENTDECK_STATE": state}), clock=clock, observers=()
    ) as deck:
        run = await parked(deck, "approve", {"order_id": "A-1"})

        outcome = await agentdeck_cli("runs", "answer", run.id, "y", "--project", str(project))

        assert outcome.status == 0
        assert '-> {"order_id": "A-1", "approved": true}' in outcome.out
        assert outcome.out.splitlines()[-1] == f"run {run.id} is completed"
        assert await run == {"order_id": "A-1", "approved": True}
        assert (await kinds(run))[-3:] == ["answer.recorded", "run.resumed", "run.completed"]


# =========================================================================== signal


async def test_cancel_ends_a_waiting_run_at_once(deck: Deck, agentdeck_cli: Any) -> None:
    run = await parked(deck, "refund", {"order_id": "A-1"})

    outcome = await agentdeck_cli("runs", "signal", run.id, "cancel", "--reason", "not needed")
    again = await agentdeck_cli("runs", "signal", run.id, "cancel")

    assert outcome.status == 0
    assert f"run {run.id}: cancel done, now cancelled" in outcome.out
    assert (await kinds(run))[-3:] == ["control.requested", "control.observed", "run.cancelled"]
    assert again.status == 0 and f"run {run.id} is already cancelled" in again.out


async def test_a_pause_holds_answers_back_until_resume_lifts_it(
    deck: Deck, clock: ManualClock, agentdeck_cli: Any
) -> None:
    run = await parked(deck, "refund", {"order_id": "A-1"})

    paused = await agentdeck_cli("runs", "signal", run.id, "pause", "--reason", "audit")
    held = await agentdeck_cli("runs", "answer", run.id, "y")
    lifted = await agentdeck_cli("runs", "signal", run.id, "resume")
    answered = await agentdeck_cli("runs", "answer", run.id, "n")

    assert "answers are held back" in paused.out
    assert held.status == 1
    assert f"from the command line: agentdeck runs signal {run.id} resume" in held.err
    assert lifted.status == 0 and "any pending pause was lifted" in lifted.out
    assert answered.status == 0
    clock.advance(SWEEP)
    assert await run == {"order_id": "A-1", "refunded": False}


async def test_resume_of_a_paused_run_is_recorded_for_a_deck_with_the_engine(
    deck: Deck, clock: ManualClock, agentdeck_cli: Any
) -> None:
    run = await parked(deck, "nap")  # sleeping until 2999: paused with a wake time

    outcome = await agentdeck_cli("runs", "signal", run.id, "resume", "--reason", "wake up")

    assert outcome.status == 0 and "resume of run" in outcome.out
    assert (await kinds(run))[-1] == "control.requested"
    assert await run.status() is RunStatus.PAUSED
    clock.advance(SWEEP)
    assert await run == "rested"
    resumed = [e async for e in run.events() if e.kind == "run.resumed"]
    assert resumed[-1].payload.reason == "wake up"  # type: ignore[union-attr]


def test_control_db_is_the_sqlite_control_url_and_the_state_when_nothing_else_is_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("AGENTDECK_STATE", "AGENTDECK_EVENTS", "AGENTDECK_CONTROL", "AGENTDECK_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)

    alone = state_settings(argparse.Namespace(control_db="/srv/state.db"))
    with_events = state_settings(
        argparse.Namespace(control_db="run/state.db", events="redis://localhost/0")
    )

    assert alone.control_url == "sqlite:////srv/state.db"
    assert alone.events_url == "sqlite:////srv/state.db"
    assert with_events.control_url == "sqlite:///run/state.db"
    assert with_events.events_url == "redis://localhost/0"


# =========================================================================== prune


async def test_prune_lists_first_and_deletes_only_finished_runs_with_yes(
    deck: Deck, agentdeck_cli: Any
) -> None:
    finished = [await deck.runs.start("quick") for _ in range(2)]
    for run in finished:
        assert await run == "done"
    waiting = await parked(deck, "refund", {"order_id": "A-1"})

    young = await agentdeck_cli("runs", "prune", "--older-than", "1h")
    listed = await agentdeck_cli("runs", "prune", "--older-than", "0s")
    deleted = await agentdeck_cli("runs", "prune", "--older-than", "0s", "--yes", "--json")
    left = await agentdeck_cli("runs", "list", "--json")

    assert "nothing to prune" in young.out
    assert listed.status == 0
    assert all(run.id in listed.out for run in finished) and "pass --yes" in listed.out
    assert deleted.json() == {"deleted": 2}
    assert [r["id"] for r in left.json()["runs"]] == [waiting.id]


async def test_prune_deletes_the_lease_rows_of_the_runs_it_deletes(
    deck: Deck, agentdeck_cli: Any
) -> None:
    finished = await deck.runs.start("quick")
    assert await finished == "done"
    waiting = await parked(deck, "refund", {"order_id": "A-2"})
    leases = runtime_of(deck).leases
    # What a worker that died after its run ended would have left behind (once this deck has
    # released its own lease of the run), and a live lease.
    for _ in range(500):
        if await leases.acquire(finished.id, "a-dead-worker", 3600.0):
            break
        await asyncio.sleep(0.01)
    assert await leases.state(finished.id) is LeaseState.ALIVE
    assert await leases.acquire(waiting.id, "a-live-worker", 3600.0)

    deleted = await agentdeck_cli("runs", "prune", "--older-than", "0s", "--yes", "--json")

    assert deleted.json() == {"deleted": 1}
    assert await leases.state(finished.id) is LeaseState.NONE
    assert await leases.state(waiting.id) is LeaseState.ALIVE


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("30m", 1800), ("12h", 43200), ("7d", 604800), ("2w", 1209600), ("1h30m", 5400)],
)
def test_durations(text: str, seconds: int) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "5", "ten minutes", "5x", "h1"])
def test_a_bad_duration_names_what_is_accepted(text: str) -> None:
    with pytest.raises(InvalidInputError, match="accepted: a number and a unit"):
        parse_duration(text)


# =========================================================================== configuration


def test_runs_commands_refuse_to_read_a_fresh_in_memory_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("AGENTDECK_EVENTS", "AGENTDECK_CONTROL", "AGENTDECK_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTDECK_STATE", "memory://")
    monkeypatch.chdir(tmp_path)

    assert main(["runs", "list"]) == 2

    err = capsys.readouterr().err
    assert "AGENTDECK_STATE=memory:// is a fresh, in-process log" in err


def test_reading_before_any_deck_wrote_lists_nothing_and_creates_no_state(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("AGENTDECK_STATE", "AGENTDECK_EVENTS", "AGENTDECK_CONTROL", "AGENTDECK_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)

    assert main(["runs", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == []
    assert main(["runs", "show", "run-nope"]) == 1
    assert "no run with id 'run-nope'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # no .agentdeck/state.db made by reading


def test_with_nothing_configured_runs_commands_read_the_default_state_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("AGENTDECK_STATE", "AGENTDECK_EVENTS", "AGENTDECK_CONTROL", "AGENTDECK_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)

    async def park() -> str:
        async with Deck(workflows=[count], settings=Settings.load(), observers=()) as deck:
            run = await deck.runs.start("count")
            with pytest.raises(RunSuspendedError):
                await run
            return run.id

    run_id = asyncio.run(park())
    assert (tmp_path / ".agentdeck" / "state.db").is_file()

    assert main(["runs", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [run["id"] for run in listed["runs"]] == [run_id]


def test_an_unknown_scheme_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)

    assert main(["runs", "list", "--events", "nosuch://x"]) == 2

    assert "names scheme 'nosuch'" in capsys.readouterr().err


# =========================================================================== helpers


def write_project(root: Path) -> Path:
    """A project directory with one native workflow that asks for approval."""
    bundle = root / ".agentdeck" / "workflows" / "approve"
    bundle.mkdir(parents=True)
    (bundle / "workflow.py").write_text(
        "from agentdeck import WorkflowCtx, workflow\n\n\n"
        "@workflow\n"
        "async def approve(order_id: str, ctx: WorkflowCtx) -> dict:\n"
        "    decision = await ctx.ask(f'approve {order_id}?', options=['y', 'n'])\n"
        "    return {'order_id': order_id, 'approved': decision == 'y'}\n",
        encoding="utf-8",
    )
    return root / ".agentdeck"


async def test_a_deck_closed_right_after_a_run_parked_leaves_no_pause_behind(
    state: str, clock: ManualClock, agentdeck_cli: Any
) -> None:
    # What `agentdeck run` does when a run parks: the stream ends at the question and the deck
    # closes at once, while its runtime is still winding the play down.
    host = PluginHost.from_plugins(("memory", memory_plugin), ("native", native_plugin))
    settings = Settings(env={"AGENTDECK_STATE": state})
    async with Deck(workflows=[refund], settings=settings, plugins=host, clock=clock) as first:
        async for event in first.stream("refund", {"order_id": "A-1"}):
            run_id = event.run_id

    shown = await agentdeck_cli("runs", "show", run_id, "--json")
    answered = await agentdeck_cli("runs", "answer", run_id, "y")

    assert shown.json()["pending_control"] == []
    assert answered.status == 0, answered.err


# =========================================================================== show: shapes


async def test_show_renders_graph_node_updates_and_clips_huge_values(
    deck: Deck, agentdeck_cli: Any
) -> None:
    from agentdeck.model.payloads import NodeUpdated, RunInterrupted, RunStarted
    from agentdeck.ports import NewRun

    store = deck.service.store
    run_id = "graph-run-1"
    started = RunStarted(name="graph", invocable_kind="workflow")
    assert (await store.open_run(NewRun(run_id=run_id, started=started))).opened
    huge = "why " * 1_250_000  # a 5 MB question
    await store.append(
        run_id,
        [
            NodeUpdated(node="classify", update={"label": "refund"}, step=1),
            NodeUpdated(node="draft", update={"text": "x" * 10_000}, step=2),
            RunInterrupted(interrupt_id="i-1", payload={"question": huge}),
        ],
    )

    shown = await agentdeck_cli("runs", "show", run_id)

    assert shown.status == 0, shown.err
    lines = shown.out.splitlines()
    [classify] = [line for line in lines if "node classify" in line]
    assert '(step 1) -> {"label": "refund"}' in classify
    [draft] = [line for line in lines if "node draft" in line]
    assert "[10,012 characters; --json shows it whole]" in draft
    [asked] = [line for line in lines if "why why" in line]
    assert len(asked) < 400 and "[5,000,000 characters; --json shows it whole]" in asked
    assert len(shown.out) < 5_000
    whole = await agentdeck_cli("runs", "show", run_id, "--json")
    assert huge.strip() in whole.out
