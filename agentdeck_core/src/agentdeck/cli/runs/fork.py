"""``agentdeck runs retry|fork``: start a new run from what another one recorded.

Both start a run, and starting a run plays it, which needs its engine and its definition: so
both take ``--project`` (the project the run's workflow or agent comes from), open a deck on
the configured state with it, start the new run through :mod:`agentdeck.runtime.forking`, and
follow it until it stops, as ``agentdeck run`` does. The new run's ``run.started`` names its
origin (``retry_of``, ``forked_from``), which ``agentdeck runs show`` prints.
"""

from __future__ import annotations

import argparse

from agentdeck.bindings.transcript import Transcript
from agentdeck.cli import Command
from agentdeck.cli.common import (
    RUN_ID_HELP,
    Output,
    add_json_option,
    add_state_options,
    exit_status_for,
    find_run,
    open_deck,
    run_async,
    runtime_of,
)
from agentdeck.deck.deck import Deck
from agentdeck.deck.runs import Run
from agentdeck.vocabulary import RunStatus

__all__ = ["FORK", "RETRY"]

_PROJECT_HELP = (
    "the project holding the run's workflow or agent (required: the new run is played here, "
    "with the project's engines, and followed until it stops)"
)


def _configure(parser: argparse.ArgumentParser, *, fork: bool) -> None:
    parser.add_argument("run_id", help=RUN_ID_HELP)
    if fork:
        parser.add_argument(
            "--at",
            type=int,
            required=True,
            metavar="STEP",
            help="the recorded point to fork from: a native workflow's operation number "
            "(operations before it are reused), a LangGraph step (its checkpoint)",
        )
    parser.add_argument("--project", metavar="PATH", required=True, help=_PROJECT_HELP)
    add_json_option(parser, "print the new run's id, origin and status as JSON")
    add_state_options(parser)


async def _start(args: argparse.Namespace, *, fork: bool) -> int:
    out = Output(args.json)
    async with open_deck(args, project=args.project) as deck:
        origin = await find_run(deck, args.run_id)
        handle = Run(deck.service, origin)
        run = await (handle.fork(at=args.at) if fork else handle.retry())
        if not out.as_json:
            what = f"fork of run {origin.run_id} at step {args.at}" if fork else "retry of run"
            out.line(f"run {run.id}: {what}" + ("" if fork else f" {origin.run_id}"))
        status = await _follow(out, deck, run)
    if out.as_json:
        out.json(
            {
                "id": run.id,
                "retry_of": None if fork else origin.run_id,
                "forked_from": {"run_id": origin.run_id, "at": args.at} if fork else None,
                "status": status.value if status is not None else None,
            }
        )
    else:
        out.line(f"run {run.id} is {out.style.status(status)}")
    return exit_status_for(status)


async def _follow(out: Output, deck: Deck, run: Run) -> RunStatus | None:
    """Show the new run (after its ``run.started``) until it stops; its status then."""
    transcript = Transcript(out.stream, out.style, lifecycle=True, terminal=out.terminal)
    async for event in run.events(from_seq=1, follow=True):
        if not out.as_json:
            transcript.write(event)
    await runtime_of(deck).wait_played(run.id)
    return await run.status()


RETRY = Command(
    name="retry",
    help="retry a failed or cancelled run as a new run",
    description=(
        "Start a new run retrying a failed or cancelled one, linked to it (retry_of). "
        "A native workflow or a LangGraph graph goes on from where the run stopped, "
        "reusing what it completed; any other engine starts it again with the same input."
    ),
    configure=lambda parser: _configure(parser, fork=False),
    run=lambda args: run_async(_start(args, fork=False)),
)

FORK = Command(
    name="fork",
    help="fork a run from a recorded step as a new run",
    description=(
        "Start a new run from a recorded point of another (forked_from): a native "
        "workflow reuses its journal before operation --at and executes the rest; a "
        "LangGraph graph goes on from the checkpoint of step --at. Engines that cannot "
        "fork refuse."
    ),
    configure=lambda parser: _configure(parser, fork=True),
    run=lambda args: run_async(_start(args, fork=True)),
)
