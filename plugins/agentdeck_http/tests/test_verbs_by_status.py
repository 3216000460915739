"""Every verb on a run in every status, through Python, HTTP and the command line: one table.

The rule all three surfaces follow: a verb returns quietly when what it asks for holds or will
hold (an answer recorded -- or the very same answer retried --, a pause or cancel requested or
already in effect, a resume of a paused or running run), and is refused with the same reason
everywhere when it cannot happen: ``finished`` / ``cancelled`` for a run that has ended,
``answered`` for a question someone else answered first, ``status`` for a call the run's status
does not allow (an answer to a running or paused run, a resume of one waiting for an answer).
Python raises a :class:`~agentdeck.errors.RunStateError` whose ``refusal`` is the reason, HTTP
answers 409 with it as the body's ``reason``, the command exits 1 with the same message.

The deck plays real native workflows on a named in-memory store; the command runs in this
process on its own event loop (another thread) and reaches the runs through that name.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from http_test_support import serving

from agentdeck import Deck, RunFailedError, RunStateError, RunSuspendedError, WorkflowCtx, workflow
from agentdeck.bindings import Native
from agentdeck.cli import main
from agentdeck.settings import Settings
from agentdeck.vocabulary import RunStatus

VERBS = ("answer", "pause", "resume", "cancel")
STATUSES = ("running", "paused", "waiting_answer", "completed", "failed", "cancelled")

EXPECTED: dict[str, tuple[str, str, str, str]] = {
    #                  answer       pause        resume       cancel
    "running":        ("status",    "ok",        "ok",        "ok"),
    "paused":         ("status",    "ok",        "ok",        "ok"),
    "waiting_answer": ("ok",        "ok",        "status",    "ok"),
    "completed":      ("finished",  "finished",  "finished",  "finished"),
    "failed":         ("finished",  "finished",  "finished",  "finished"),
    "cancelled":      ("cancelled", "cancelled", "cancelled", "ok"),
}  # fmt: skip
"""What each verb does in each status: ``ok`` or the refusal's reason (docs/deck-and-runs.md)."""


@workflow
async def slow(ctx: WorkflowCtx[Any]) -> str:
    while True:  # until paused or cancelled at the safe point
        await ctx.safepoint()
        await asyncio.sleep(0.01)


@workflow
async def asks(ctx: WorkflowCtx[Any]) -> str:
    return str(await ctx.ask("ship it?", options=["yes", "no"]))


@workflow
async def quick(ctx: WorkflowCtx[Any]) -> str:
    return "done"


@workflow
async def boom(ctx: WorkflowCtx[Any]) -> str:
    raise RuntimeError("the body gave up")


@pytest.fixture
def state(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> str:
    url = f"memory://verbs-{uuid.uuid4().hex[:10]}"
    for name in ("AGENTDECK_EVENTS", "AGENTDECK_CONTROL", "AGENTDECK_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTDECK_STATE", url)  # what the command reads
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(tmp_path)
    return url


@pytest.fixture
async def deck(state: str) -> AsyncIterator[Deck]:
    the_deck = Deck(
        workflows=[slow, asks, quick, boom],
        observers=(),
        settings=Settings(env={"AGENTDECK_STATE": state}),
    )
    async with the_deck:
        yield the_deck


async def _in_status(deck: Deck, status: str) -> str:
    """A fresh run in ``status``, played to it for real."""
    if status in ("running", "paused"):
        run = await deck.runs.start("slow")
        if status == "paused":
            await run.pause("hold on")
            with pytest.raises(RunSuspendedError):
                await run
    elif status in ("waiting_answer", "cancelled"):
        run = await deck.runs.start("asks")
        with pytest.raises(RunSuspendedError):
            await run
        if status == "cancelled":
            await run.cancel("not needed")
    elif status == "completed":
        run = await deck.runs.start("quick")
        await run
    else:
        run = await deck.runs.start("boom")
        with pytest.raises(RunFailedError):
            await run
    assert (await run.status()).value == status
    return run.id


async def _python(deck: Deck, run_id: str, verb: str) -> str:
    run = await deck.runs.get(run_id)
    act: dict[str, Callable[[], Awaitable[Any]]] = {
        "answer": lambda: run.answer("yes"),
        "pause": lambda: run.pause("why not"),
        "resume": run.resume,
        "cancel": lambda: run.cancel("why not"),
    }
    try:
        await act[verb]()
    except RunStateError as refused:
        return refused.refusal
    return "ok"


def _cli_refusal(message: str) -> str:
    """The reason a refused command's message states (the Python error's message)."""
    if "was already answered" in message:
        return "answered"
    if "has already been cancelled" in message:
        return "cancelled"
    if "has already completed" in message or "has already failed" in message:
        return "finished"
    return "status" if message.startswith("agentdeck: error: run ") else f"unexpected: {message}"


async def _cli(run_id: str, verb: str) -> str:
    argv = (
        ["runs", "answer", run_id, "yes"]
        if verb == "answer"
        else ["runs", "signal", run_id, verb, "--reason", "why not"]
    )
    err = io.StringIO()

    def call() -> int:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            return main(argv)

    status = await asyncio.to_thread(call)  # its own event loop, like another process
    if status == 0:
        return "ok"
    return _cli_refusal(err.getvalue()) if status == 1 else f"exit {status}"


async def _table(deck: Deck, act: Callable[[str, str], Awaitable[str]]) -> dict[str, tuple]:
    table: dict[str, tuple] = {}
    for status in STATUSES:
        row = []
        for verb in VERBS:
            run_id = await _in_status(deck, status)
            row.append(await act(run_id, verb))
        table[status] = tuple(row)
    return table


async def test_python_follows_the_table(deck: Deck) -> None:
    assert await _table(deck, lambda run_id, verb: _python(deck, run_id, verb)) == EXPECTED


async def test_http_follows_the_table(deck: Deck) -> None:
    async with serving(deck, Native.http()) as served:

        async def http(run_id: str, verb: str) -> str:
            body = {"value": "yes"} if verb == "answer" else {"reason": "why not"}
            response = await served.client.post(f"/runs/{run_id}/{verb}", json=body)
            if response.is_success:
                return "ok"
            if response.status_code == 409:
                return str(response.json()["reason"])
            return f"http {response.status_code}"

        assert await _table(deck, http) == EXPECTED


async def test_the_command_line_follows_the_table(deck: Deck) -> None:
    assert await _table(deck, _cli) == EXPECTED


async def test_a_refusal_says_the_same_thing_on_every_surface(deck: Deck) -> None:
    run_id = await _in_status(deck, "cancelled")
    run = await deck.runs.get(run_id)
    with pytest.raises(RunStateError) as python:
        await run.pause("too late")
    async with serving(deck, Native.http()) as served:
        http = (await served.client.post(f"/runs/{run_id}/pause", json={})).json()
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = await asyncio.to_thread(main, ["runs", "signal", run_id, "pause"])
    assert python.value.status is RunStatus.CANCELLED
    assert http["detail"] == str(python.value)
    assert (http["reason"], http["cancel_reason"]) == ("cancelled", "not needed")
    assert status == 1 and str(python.value) in err.getvalue()
