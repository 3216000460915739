"""``agentdeck runs prune``: delete finished runs older than a given age.

Without ``--yes`` it lists what would go and asks, and only a person at a terminal can say yes;
with it, the store deletes every finished run (of the given outcomes, in one namespace or all)
that ended before the cutoff, and the control backend forgets their pending requests and leases.
"""

from __future__ import annotations

import argparse
import sys

from agentdeck.cli import Command
from agentdeck.cli.common import (
    EXIT_OK,
    Output,
    add_json_option,
    add_state_options,
    open_deck,
    parse_duration,
    run_async,
    runtime_of,
)
from agentdeck.errors import ConfigError
from agentdeck.model.clock import SystemClock
from agentdeck.ports import PruneQuery, RunQuery, RunRecord
from agentdeck.vocabulary import TERMINAL, RunStatus

__all__ = ["PRUNE"]

_TERMINAL_NAMES = sorted(status.value for status in TERMINAL)


def _configure_prune(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--older-than",
        metavar="DURATION",
        default="30d",
        help="only runs that finished more than DURATION ago (30m, 12h, 7d, 2w; default 30d)",
    )
    parser.add_argument(
        "--status",
        action="append",
        choices=_TERMINAL_NAMES,
        help="only runs that ended this way (repeat for several; default: every finished run)",
    )
    parser.add_argument("--namespace", help="the namespace to prune (default: the default one)")
    parser.add_argument("--all-namespaces", action="store_true", help="prune in every namespace")
    parser.add_argument(
        "--yes",
        action="store_true",
        help="delete without asking (without it: list what would go, and ask on a terminal)",
    )
    add_json_option(parser, "print the outcome as JSON")
    add_state_options(parser)


async def _prune(args: argparse.Namespace) -> int:
    if args.all_namespaces and args.namespace is not None:
        raise ConfigError(
            "--namespace and --all-namespaces exclude each other", setting="--namespace"
        )
    out = Output(args.json)
    age = parse_duration(args.older_than)
    statuses = frozenset(RunStatus(s) for s in args.status) if args.status else TERMINAL
    async with open_deck(args) as deck:
        runtime = runtime_of(deck)
        cutoff = SystemClock().now() - age
        doomed: list[RunRecord] = []
        cursor: str | None = None
        while True:
            page = await runtime.store.list_runs(
                RunQuery(
                    namespace=args.namespace,
                    all_namespaces=args.all_namespaces,
                    status=statuses,
                    updated_before=cutoff,
                    limit=500,
                    cursor=cursor,
                )
            )
            doomed.extend(page.runs)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        if not args.yes and not _confirmed(out, doomed, args.older_than):
            if out.as_json:
                out.json({"deleted": 0, "would_delete": [r.run_id for r in doomed]})
            return EXIT_OK
        deleted = await runtime.store.prune(
            PruneQuery(
                namespace=args.namespace,
                all_namespaces=args.all_namespaces,
                finished_before=cutoff,
                statuses=statuses,
            )
        )
        # A deleted run's control requests and lease rows go with it: nothing reads them again.
        gone = [r.run_id for r in doomed]
        await runtime.control.forget(gone)
        await runtime.leases.forget(gone)
    if out.as_json:
        out.json({"deleted": deleted})
    else:
        out.line(f"deleted {deleted} finished run{'s' if deleted != 1 else ''}")
    return EXIT_OK


def _confirmed(out: Output, doomed: list[RunRecord], older_than: str) -> bool:
    """Without ``--yes``: show what would be deleted; ask only a person at a terminal."""
    if out.as_json:
        return False
    if not doomed:
        out.line(f"nothing to prune: no finished run is older than {older_than}")
        return False
    out.line(
        f"{len(doomed)} finished run{'s' if len(doomed) != 1 else ''} older than {older_than}:"
    )
    for record in doomed[:20]:
        out.line(f"  {record.run_id}  {record.name}  {out.style.status(record.status)}")
    if len(doomed) > 20:
        out.line(f"  … and {len(doomed) - 20} more")
    if not (sys.stdin.isatty() and out.stream.isatty()):
        out.line("nothing deleted; pass --yes to delete them")
        return False
    out.stream.write("delete them? [y/N] ")
    out.stream.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


PRUNE = Command(
    name="prune",
    help="delete finished runs older than a given age",
    configure=_configure_prune,
    run=lambda args: run_async(_prune(args)),
)
