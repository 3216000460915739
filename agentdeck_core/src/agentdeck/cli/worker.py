"""``agentdeck worker``: play the runs a project's clients queued, from its execution.

The command builds the project's deck and hands it to the execution ``AGENTDECK_EXECUTION``
names (:meth:`Deck.work <agentdeck.deck.deck.Deck.work>`): with Temporal's, it polls the task
queue and plays each run on this process's engines, recording it in the shared state store.
Start as many as you like, on as many machines; Ctrl-C (or SIGTERM) stops taking runs and
pauses the ones in flight at their next safe point, for another worker to go on with.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal

from agentdeck.cli import Command
from agentdeck.cli.common import EXIT_OK, add_state_options, run_async, state_settings
from agentdeck.deck.deck import Deck

__all__ = ["WORKER"]

DEFAULT_PROJECT = ".agentdeck"


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project",
        metavar="PATH",
        default=DEFAULT_PROJECT,
        help=f"the project directory (default: {DEFAULT_PROJECT})",
    )
    parser.add_argument(
        "--concurrency",
        metavar="N",
        type=int,
        default=1,
        help="how many runs this worker plays at once (default: 1)",
    )
    add_state_options(parser)


EXIT_TERMINATED = 128 + signal.SIGTERM
"""The exit status after SIGTERM, as a shell reports a process that a signal ended."""


async def _work(args: argparse.Namespace) -> int:
    deck = Deck.from_project(args.project, settings=state_settings(args))
    # SIGTERM (what process managers send) stops the worker as Ctrl-C does: the work is
    # cancelled, so runs in flight pause at their next safe point and the deck closes. Without
    # this handler the process would die on the spot and its runs wait out a heartbeat timeout.
    main = asyncio.current_task()
    terminated = asyncio.Event()
    loop = asyncio.get_running_loop()

    def terminate() -> None:
        terminated.set()
        if main is not None:
            main.cancel()

    with contextlib.suppress(NotImplementedError):  # no signal handlers on this platform
        loop.add_signal_handler(signal.SIGTERM, terminate)
    try:
        await deck.work(concurrency=args.concurrency)
    except asyncio.CancelledError:
        if terminated.is_set():
            return EXIT_TERMINATED
        raise
    finally:
        with contextlib.suppress(NotImplementedError):
            loop.remove_signal_handler(signal.SIGTERM)
    return EXIT_OK


WORKER = Command(
    name="worker",
    help="play the runs a project's clients queued (needs AGENTDECK_EXECUTION, e.g. Temporal)",
    description=(
        "Build the project's deck and serve as a worker of the execution AGENTDECK_EXECUTION "
        "names (temporal://HOST:PORT/NAMESPACE?task_queue=NAME, from agentdeck-temporal): take "
        "queued runs, play them on this process's engines and record them in the shared state "
        "store, at most --concurrency at a time, until stopped (Ctrl-C or SIGTERM: runs in flight "
        "pause at their next safe point and go on on another worker; exit status 130 or 143). "
        "Exit status 2 with the reason "
        "when the deck's runs play in-process (nothing to take) or the project does not build."
    ),
    configure=_configure,
    run=lambda args: run_async(_work(args)),
)
