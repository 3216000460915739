"""``agentdeck runs ...`` on a SQLite store another process writes (beating the original's #256).

A *writer* process opens a deck on ``AGENTDECK_STATE=sqlite:///<tmp>/state.db`` with a project of
native workflows and starts runs when told to (one JSON line on its stdin per run). The commands
under test run in this process — or, for ``runs tail``, in a third one — and share nothing with
the writer but the database file. Answers and resumes given by a command without ``--project``
are recorded only; the writer's deck, which has the engine, continues those runs at its sweep
(every 0.1 s here), which the live ``runs tail`` then shows.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from agentdeck.cli import main

WORKFLOWS = """\
import asyncio
import os

from agentdeck import WorkflowCtx, workflow


@workflow
async def approve(order_id: str, ctx: WorkflowCtx) -> dict:
    await ctx.report("checking", order_id=order_id)
    decision = await ctx.ask({"question": f"approve {order_id}?"}, options=["y", "n"])
    return {"order_id": order_id, "approved": decision == "y"}


@workflow
async def parent(ctx: WorkflowCtx) -> dict:
    return await ctx.invoke("approve", {"order_id": "from-parent"})


@workflow
async def until_flag(ctx: WorkflowCtx) -> str:
    await ctx.report("waiting for the flag")
    # Only a loop condition, not a journaled operation: a replay that finds the flag set just
    # stops looping sooner.
    while not os.path.exists(os.environ["FLAG"]):
        await ctx.safepoint()
        await asyncio.sleep(0.01)
    return "flagged"


@workflow
async def slow(ctx: WorkflowCtx) -> str:
    await ctx.report("working")
    while True:  # until cancelled: a pause or cancel takes effect at the safe point
        await ctx.safepoint()
        await asyncio.sleep(0.01)
"""

WRITER = """\
import asyncio, json, sys, warnings

warnings.simplefilter("ignore")
from agentdeck import Deck
from agentdeck.errors import RunFailedError, RunSuspendedError


async def main() -> None:
    async with Deck.from_project(sys.argv[1], observers=()) as deck:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := await reader.readline():
            command = json.loads(line)
            run = await deck.runs.start(
                command["name"], command.get("input"), namespace=command.get("namespace")
            )
            if command.get("wait", True):
                try:
                    await run
                except (RunSuspendedError, RunFailedError):
                    pass
            status = await run.status()
            print(json.dumps({"run_id": run.id, "status": status.value}), flush=True)


asyncio.run(main())
"""

BOUND = 60.0  # seconds: a hang detector for waits on other processes, never a timing


class Lines:
    """The lines a child process prints, read by a thread so a wait can be bounded."""

    def __init__(self, stream: IO[str]) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line)
        self._lines.put("")  # end of output

    def next(self) -> str:
        """The next line (``""`` once the process closed its output)."""
        try:
            return self._lines.get(timeout=BOUND)
        except queue.Empty:
            raise AssertionError(f"no output within {BOUND} s") from None

    def rest(self) -> list[str]:
        lines = []
        while line := self.next():
            lines.append(line)
        return lines


class Writer:
    """The other process: a deck with the project, starting runs on request."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        (root / "writer.py").write_text(WRITER, encoding="utf-8")
        self.process = subprocess.Popen(
            [sys.executable, str(root / "writer.py"), str(root / ".agentdeck")],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=root,
        )
        assert self.process.stdout is not None
        self.lines = Lines(self.process.stdout)

    def start(self, name: str, input: Any = None, *, namespace: str, wait: bool = True) -> str:
        """Start a run in the writer; wait until it parks or ends unless ``wait`` is false."""
        assert self.process.stdin is not None
        command = {"name": name, "input": input, "namespace": namespace, "wait": wait}
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        line = self.lines.next()
        assert line, f"the writer stopped: {self.stop()}"
        return str(json.loads(line)["run_id"])

    def stop(self) -> str:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=BOUND)
            except subprocess.TimeoutExpired:
                self.process.kill()
        assert self.process.stderr is not None
        return self.process.stderr.read()


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Writer]]:
    root = tmp_path_factory.mktemp("cli-stores")
    bundle = root / ".agentdeck" / "workflows" / "ops"
    bundle.mkdir(parents=True)
    (bundle / "workflow.py").write_text(WORKFLOWS, encoding="utf-8")
    database = root / "state.db"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("AGENTDECK_")},
        "AGENTDECK_STATE": f"sqlite:///{database}",
        "AGENTDECK_RUNTIME_SWEEP_INTERVAL_SECONDS": "0.1",
        "FLAG": str(root / "flag"),
    }
    writer = Writer(root, env)
    yield database, writer
    writer.stop()


@pytest.fixture
def db(state: tuple[Path, Writer], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The commands in this process read the writer's file through the deck settings."""
    database, _ = state
    for name in ("AGENTDECK_EVENTS", "AGENTDECK_CONTROL", "AGENTDECK_CONFIG", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTDECK_STATE", f"sqlite:///{database}")
    monkeypatch.chdir(tmp_path)
    return database


@pytest.fixture
def writer(state: tuple[Path, Writer]) -> Writer:
    return state[1]


def agentdeck(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def tail_kinds(
    capsys: pytest.CaptureFixture[str], run_id: str, *options: str
) -> tuple[int, list[str]]:
    """Follow a run to where it stops (event-driven, in this process); the kinds it showed."""
    status, out, err = agentdeck(capsys, "runs", "tail", run_id, "--json", *options)
    assert status in (0, 1, 3), err
    return status, [json.loads(line)["kind"] for line in out.splitlines()]


# =========================================================================== reading


def test_list_reads_the_other_processes_runs(
    db: Path, writer: Writer, capsys: pytest.CaptureFixture[str]
) -> None:
    first = writer.start("approve", {"order_id": "L-1"}, namespace="list")
    second = writer.start("approve", {"order_id": "L-2"}, namespace="list")

    status, out, _ = agentdeck(capsys, "runs", "list", "--namespace", "list", "--json")
    _, table, _ = agentdeck(
        capsys, "runs", "list", "--all-namespaces", "--status", "waiting_answer"
    )

    assert status == 0
    assert [(r["id"], r["status"], r["name"]) for r in json.loads(out)["runs"]] == [
        (second, "waiting_answer", "approve"),  # newest first
        (first, "waiting_answer", "approve"),
    ]
    assert first in table and second in table and "list" in table


def test_show_renders_the_tree_of_a_parent_and_its_child(
    db: Path, writer: Writer, capsys: pytest.CaptureFixture[str]
) -> None:
    parent = writer.start("parent", namespace="show")

    status, out, _ = agentdeck(capsys, "runs", "show", parent)
    _, as_json, _ = agentdeck(capsys, "runs", "show", parent, "--json")

    assert status == 0
    assert out.splitlines()[0] == f"parent (workflow)  paused  run {parent}"
    assert "child approve (workflow)  waiting_answer" in out
    assert "? approve from-parent?  [y/n]" in out
    assert "open: waiting for an answer" in out
    [child] = json.loads(as_json)["children"]
    assert child["run"]["parent_run_id"] == parent
    assert [e["kind"] for e in child["events"]][-1] == "run.interrupted"


# =========================================================================== answering


def test_an_answer_from_the_cli_continues_the_run_in_the_deck_that_has_it_live_in_tail(
    db: Path, writer: Writer, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = writer.start("approve", {"order_id": "A-1"}, namespace="answer")
    tail = subprocess.Popen(
        [sys.executable, "-m", "agentdeck", "runs", "tail", run_id, "--until-terminal"],
        env={**os.environ, "AGENTDECK_STATE": f"sqlite:///{db}"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert tail.stdout is not None
        lines = Lines(tail.stdout)
        seen: list[str] = []
        while not seen or seen[-1] != "run.interrupted":  # it showed the past: now it follows
            line = lines.next()
            assert line, f"runs tail stopped early: {tail.stderr.read() if tail.stderr else ''}"
            seen.append(line.split()[3])

        refused = agentdeck(capsys, "runs", "answer", run_id, "maybe")
        answered = agentdeck(capsys, "runs", "answer", run_id, "y")

        followed = lines.rest()
        status = tail.wait(timeout=BOUND)
    finally:
        if tail.poll() is None:
            tail.kill()
    assert refused[0] == 1 and "one of the offered options" in refused[2]
    assert answered[0] == 0 and "answer to ask-0 recorded" in answered[1]
    assert status == 0
    assert [line.split()[3] for line in followed] == [
        "answer.refused",
        "answer.recorded",
        "run.resumed",  # written by the writer's deck, which has the engine
        "run.completed",
    ]
    assert '{"order_id":"A-1","approved":true}' in followed[-1].replace(" ", "")


def test_answering_a_child_wakes_its_parent_in_the_writer(
    db: Path, writer: Writer, capsys: pytest.CaptureFixture[str]
) -> None:
    parent = writer.start("parent", namespace="family")
    _, out, _ = agentdeck(capsys, "runs", "show", parent, "--json")
    child = json.loads(out)["children"][0]["run"]["id"]

    assert agentdeck(capsys, "runs", "answer", child, "n")[0] == 0
    status, kinds = tail_kinds(capsys, parent, "--until-terminal")

    assert status == 0
    assert kinds[-2:] == ["step.completed", "run.completed"]


# =========================================================================== control


def test_the_documented_signal_form_cancels_a_run_playing_in_the_other_process(
    db: Path, writer: Writer, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = writer.start("slow", namespace="signal", wait=False)

    status, out, _ = agentdeck(
        capsys, "runs", "signal", run_id, "cancel", "--control-db", str(db), "--reason", "enough"
    )
    ended, kinds = tail_kinds(capsys, run_id)

    assert status == 0
    assert "cancel requested" in out or "cancel done" in out
    assert ended == 1
    assert kinds[-3:] == ["control.requested", "control.observed", "run.cancelled"]


def test_pause_then_a_recorded_resume_continues_the_run_in_the_writer(
    db: Path, writer: Writer, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = writer.start("until_flag", namespace="pause", wait=False)

    assert agentdeck(capsys, "runs", "signal", run_id, "pause", "--reason", "lunch")[0] == 0
    paused, kinds = tail_kinds(capsys, run_id)
    (db.parent / "flag").touch()  # once played again, the body finishes
    resumed = agentdeck(capsys, "runs", "signal", run_id, "resume", "--reason", "back")
    ended, after = tail_kinds(capsys, run_id)  # follows until the writer's deck finished it

    assert paused == 3
    assert kinds[-3:] == ["control.requested", "control.observed", "run.paused"]
    assert resumed[0] == 0 and "resume of run" in resumed[1]
    assert ended == 0
    assert after[len(kinds) :] == ["control.requested", "run.resumed", "run.completed"]


# =========================================================================== pruning


def test_prune_deletes_finished_runs_and_keeps_the_rest(
    db: Path, writer: Writer, capsys: pytest.CaptureFixture[str]
) -> None:
    waiting = writer.start("approve", {"order_id": "P-1"}, namespace="prune")
    done = writer.start("approve", {"order_id": "P-2"}, namespace="prune")
    assert agentdeck(capsys, "runs", "signal", done, "cancel")[0] == 0

    dry = agentdeck(capsys, "runs", "prune", "--namespace", "prune", "--older-than", "0s")
    wet = agentdeck(
        capsys, "runs", "prune", "--namespace", "prune", "--older-than", "0s", "--yes", "--json"
    )
    _, left, _ = agentdeck(capsys, "runs", "list", "--namespace", "prune", "--json")

    assert dry[0] == 0 and done in dry[1] and "pass --yes" in dry[1]
    assert json.loads(wet[1]) == {"deleted": 1}
    assert [r["id"] for r in json.loads(left)["runs"]] == [waiting]
