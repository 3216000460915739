"""The ``agentdeck runs`` command: its subcommands, by family, under one name.

Reading (``list``, ``show``, ``tail``: :mod:`.reading`), acting (``answer``, ``signal``:
:mod:`.acting`), starting a run from another (``retry``, ``fork``: :mod:`.fork`) and cleaning
up (``prune``: :mod:`.prune`); ``--help`` lists them in that order.

Each subcommand is referenced by a :class:`~agentdeck.cli.CommandRef`, so a command line
imports only the family it names: ``runs list`` loads :mod:`.reading` and never the deck and
runtime that :mod:`.acting` and :mod:`.fork` act through.
"""

from __future__ import annotations

from agentdeck.cli import Command, CommandRef

__all__ = ["EPILOG_STATE", "RUNS"]

EPILOG_STATE = (
    "Where the runs are: --events/--control URLs, else AGENTDECK_EVENTS / AGENTDECK_CONTROL, "
    "else AGENTDECK_STATE (and config.yaml). Exit status: 0 ok, 1 failed, 2 usage or "
    "configuration error, 3 the run is suspended."
)

RUNS = Command(
    name="runs",
    help="list, show, follow, answer, signal, retry, fork and prune runs in any configured store",
    description=(
        "Read and operate runs recorded in any store the deck settings (or --events/"
        "--control) point at, from any process. " + EPILOG_STATE
    ),
    subcommands=(
        CommandRef(
            "list",
            "list runs (one namespace, or all), filtered by status, session or age",
            "agentdeck.cli.runs.reading:LIST",
        ),
        CommandRef(
            "show",
            "show a run as a tree: events, tool calls, questions, answers, child runs",
            "agentdeck.cli.runs.reading:SHOW",
        ),
        CommandRef(
            "tail",
            "follow a run's events live until it ends or waits for someone",
            "agentdeck.cli.runs.reading:TAIL",
        ),
        CommandRef(
            "answer", "answer the question a run waits on", "agentdeck.cli.runs.acting:ANSWER"
        ),
        CommandRef("signal", "pause, resume or cancel a run", "agentdeck.cli.runs.acting:SIGNAL"),
        CommandRef(
            "retry",
            "retry a failed or cancelled run as a new run",
            "agentdeck.cli.runs.fork:RETRY",
        ),
        CommandRef(
            "fork",
            "fork a run from a recorded step as a new run",
            "agentdeck.cli.runs.fork:FORK",
        ),
        CommandRef(
            "prune",
            "delete finished runs older than a given age",
            "agentdeck.cli.runs.prune:PRUNE",
        ),
    ),
)
"""Referenced from :data:`agentdeck.cli.COMMAND_MODULES`."""
