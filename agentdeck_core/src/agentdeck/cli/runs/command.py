"""The ``agentdeck runs`` command: its subcommands, by family, under one name.

Reading (``list``, ``show``, ``tail``: :mod:`.reading`), acting (``answer``, ``signal``:
:mod:`.acting`), starting a run from another (``retry``, ``fork``: :mod:`.fork`) and cleaning
up (``prune``: :mod:`.prune`); ``--help`` lists them in that order.
"""

from __future__ import annotations

from agentdeck.cli import Command
from agentdeck.cli.common import EPILOG_STATE
from agentdeck.cli.runs.acting import ANSWER, SIGNAL
from agentdeck.cli.runs.fork import FORK, RETRY
from agentdeck.cli.runs.prune import PRUNE
from agentdeck.cli.runs.reading import LIST, SHOW, TAIL

__all__ = ["RUNS"]

RUNS = Command(
    name="runs",
    help="list, show, follow, answer, signal, retry, fork and prune runs in any configured store",
    description=(
        "Read and operate runs recorded in any store the deck settings (or --events/"
        "--control) point at, from any process. " + EPILOG_STATE
    ),
    subcommands=(LIST, SHOW, TAIL, ANSWER, SIGNAL, RETRY, FORK, PRUNE),
)
"""Referenced from :data:`agentdeck.cli.COMMAND_MODULES`."""
