"""A refund that waits for a person, durable on SQLite, answered from another process.

    python main.py start A-1003            # the run parks on its question; this process exits
    python main.py pending                 # any process: the runs waiting for an answer
    python main.py answer RUN_ID approve   # any process: answer, and the run finishes here

Every command builds a deck from `.agentdeck/` and opens the store that `config.yaml` (or
`AGENTDECK_STATE`) names, so they all see the same runs. No model is involved.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from agentdeck import (
    AnswerRecorded,
    AnswerRefusedError,
    DataBlock,
    Deck,
    Event,
    Report,
    RunCompleted,
    RunInterrupted,
    RunStarted,
    RunStatus,
    StepCompleted,
)

PROJECT = Path(__file__).resolve().parent / ".agentdeck"


def render(event: Event) -> str:
    """One line per event: its seq, its kind and what matters in it."""
    detail: Any = ""
    match event.payload:
        case RunStarted(name=name, input=[DataBlock(data=workflow_input)]):
            detail = f"{name} {workflow_input}"
        case StepCompleted(name=name, result=result):
            detail = f"{name}: {result}"
        case Report(message=message, fields=fields):
            detail = f"{message} {fields}"
        case RunInterrupted(payload=question, expected=expected):
            detail = f"{question} {expected.options if expected else ''}"
        case AnswerRecorded(value=value):
            detail = value
        case RunCompleted(output=[DataBlock(data=result)]):
            detail = result
    return f"{event.seq:>3} {event.kind:<16} {detail}".rstrip()


async def _print_until_it_stops(events: AsyncIterator[Event]) -> None:
    async for event in events:
        print(render(event))


async def start(order_id: str) -> str:
    """Start a refund and follow it until it parks; return the run's id."""
    async with Deck.from_project(PROJECT) as deck:
        run = await deck.runs.start("refund", {"order_id": order_id})
        await _print_until_it_stops(run.events(follow=True))
        print(f"{await run.status()}: answer it from any process with")
        print(f"  python main.py answer {run.id} approve")
        return run.id


async def pending() -> int:
    """Print every run waiting for an answer, with its question; return how many."""
    async with Deck.from_project(PROJECT) as deck:
        waiting = await deck.runs.list(status=RunStatus.WAITING_ANSWER)
        for run in waiting:
            question = await run.pending()
            assert question is not None
            print(f"{run.id}  {run.name}  {question.payload}")
        return len(waiting)


async def answer(run_id: str, decision: str) -> Any:
    """Answer a parked run and follow it to its end here; return its result."""
    async with Deck.from_project(PROJECT) as deck:
        run = await deck.runs.get(run_id)
        last_seq = max([e.seq async for e in run.events()], default=-1)
        await run.answer(decision)
        await _print_until_it_stops(run.events(from_seq=last_seq + 1, follow=True))
        return await run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("start").add_argument("order_id")
    commands.add_parser("pending")
    answering = commands.add_parser("answer")
    answering.add_argument("run_id")
    answering.add_argument("decision")
    args = parser.parse_args(argv)

    if args.command == "start":
        asyncio.run(start(args.order_id))
    elif args.command == "pending":
        asyncio.run(pending())
    else:
        try:
            asyncio.run(answer(args.run_id, args.decision))
        except AnswerRefusedError as refused:
            print(f"refused: {refused.reason}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
