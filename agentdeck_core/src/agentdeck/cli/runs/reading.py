"""``agentdeck runs list|show|tail``: the subcommands that read runs and change nothing.

``list`` pages through the store's run index (one namespace or all, by status, session or age),
``show`` prints a run with its events, questions, answers and child runs as a tree, and ``tail``
prints a run's events and follows new ones until the run ends or waits on someone nobody has
answered yet. None of them needs the run's engine.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from agentdeck.cli import Command
from agentdeck.cli.common import (
    EXIT_OK,
    RUN_ID_HELP,
    Output,
    add_json_option,
    add_state_options,
    describe_state,
    exit_status_for,
    find_record,
    open_reader_for,
    parse_duration,
    record_dict,
    run_async,
    state_settings,
)
from agentdeck.errors import ConfigError
from agentdeck.vocabulary import TERMINAL, ControlVerb, RunStatus

if TYPE_CHECKING:
    # Imported where used: ``runs list`` needs none of the event models or renderers.
    from agentdeck.bindings.transcript import Style
    from agentdeck.model.events import Event
    from agentdeck.model.status import RunState
    from agentdeck.ports import RunRecord

__all__ = ["LIST", "SHOW", "TAIL"]


# =========================================================================== runs list


def _configure_list(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--namespace", help="the namespace to list (default: the default one)")
    parser.add_argument(
        "--all-namespaces", action="store_true", help="list runs of every namespace"
    )
    parser.add_argument(
        "--status",
        action="append",
        choices=[status.value for status in RunStatus],
        help="only runs in this status (repeat for several)",
    )
    parser.add_argument("--session", metavar="ID", help="only runs of this session")
    parser.add_argument(
        "--since", metavar="DURATION", help="only runs created within DURATION (30m, 2h, 7d)"
    )
    parser.add_argument(
        "--limit",
        type=_positive,
        default=100,
        help="at most this many runs, newest first (default 100)",
    )
    parser.add_argument(
        "--cursor",
        metavar="CURSOR",
        help="continue a listing where the previous one ended (the CURSOR its 'more' line gave)",
    )
    parser.add_argument(
        "--oldest-first", action="store_true", help="list the oldest runs first instead"
    )
    add_json_option(
        parser,
        'print JSON: {"runs": [...], "next_cursor": CURSOR or null}',
    )
    add_state_options(parser)


async def _list(args: argparse.Namespace) -> int:
    if args.all_namespaces and args.namespace is not None:
        raise ConfigError(
            "--namespace and --all-namespaces exclude each other", setting="--namespace"
        )
    from agentdeck.model.clock import SystemClock
    from agentdeck.ports import RunQuery

    out = Output(args.json)
    since = parse_duration(args.since) if args.since else None
    async with open_reader_for(args) as reader:
        store = reader.store
        records: list[RunRecord] = []
        cursor: str | None = args.cursor
        more: str | None = None
        while len(records) < args.limit:
            page = await store.list_runs(
                RunQuery(
                    namespace=args.namespace,
                    all_namespaces=args.all_namespaces,
                    status=frozenset(RunStatus(s) for s in args.status) if args.status else None,
                    session_id=args.session,
                    created_after=SystemClock().now() - since if since is not None else None,
                    limit=min(args.limit - len(records), 500),
                    cursor=cursor,
                    newest_first=not args.oldest_first,
                )
            )
            records.extend(page.runs)
            more = page.next_cursor
            if more is None:
                break
            cursor = more
    if out.as_json:
        out.json({"runs": [record_dict(record) for record in records], "next_cursor": more})
        return EXIT_OK
    if not records:
        where = "any namespace" if args.all_namespaces else _namespace_label(args.namespace)
        out.line(f"no runs in {where} ({describe_state(state_settings(args))})")
        return EXIT_OK
    _print_runs(out, records, namespaces=args.all_namespaces)
    if more is not None:
        # On standard error, so a piped table stays a table.
        print(f"more: --cursor {more}", file=sys.stderr)
    return EXIT_OK


def _positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of runs (1 or more)")
    return number


def _print_runs(out: Output, records: list[RunRecord], *, namespaces: bool) -> None:
    s = out.style
    headers = ["RUN", "NAME", "KIND", "STATUS", *(["NAMESPACE"] if namespaces else []), "SESSION"]
    headers.append("UPDATED")
    plain_rows = [
        [
            r.run_id,
            r.name,
            r.invocable_kind,
            r.status.value,
            *([r.namespace or "-"] if namespaces else []),
            r.session_id or "-",
            r.updated_at.strftime("%Y-%m-%d %H:%M:%S"),
        ]
        for r in records
    ]
    widths = [max(len(h), *(len(row[i]) for row in plain_rows)) for i, h in enumerate(headers)]
    status_column = 3
    styled = []
    for row in plain_rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=True)]
        cells[status_column] = s.status(row[status_column]) + " " * (
            widths[status_column] - len(row[status_column])
        )
        styled.append(cells)
    out.table(headers, styled, widths)


def _namespace_label(namespace: str | None) -> str:
    return f"namespace '{namespace}'" if namespace is not None else "the default namespace"


LIST = Command(
    name="list",
    help="list runs (one namespace, or all), filtered by status, session or age",
    configure=_configure_list,
    run=lambda args: run_async(_list(args)),
)


# =========================================================================== runs show


def _configure_show(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", help=RUN_ID_HELP)
    add_json_option(parser, "print the run, its events and its child runs as JSON")
    add_state_options(parser)


async def _show(args: argparse.Namespace) -> int:
    from agentdeck.cli.tree import load_tree, node_dict, render_tree

    out = Output(args.json)
    async with open_reader_for(args) as reader:
        record = await find_record(reader.store, args.run_id)
        node = await load_tree(reader.store, reader.control, record)
    if out.as_json:
        out.json(node_dict(node))
    else:
        for line in render_tree(node, out.style):
            out.line(line)
    return EXIT_OK


SHOW = Command(
    name="show",
    help="show a run as a tree: events, tool calls, questions, answers, child runs",
    configure=_configure_show,
    run=lambda args: run_async(_show(args)),
)


# =========================================================================== runs tail


def _configure_tail(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", help=RUN_ID_HELP)
    parser.add_argument(
        "--from-seq", type=int, default=0, metavar="N", help="start at event N (default 0)"
    )
    parser.add_argument(
        "--until-terminal",
        action="store_true",
        help="keep following through suspensions until the run completes, fails or is cancelled",
    )
    add_json_option(parser, "print one JSON event per line")
    add_state_options(parser)


async def _tail(args: argparse.Namespace) -> int:
    from agentdeck.model.status import RunState, apply

    out = Output(args.json)
    async with open_reader_for(args) as reader:
        store = reader.store
        await find_record(store, args.run_id)

        def show(event: Event) -> None:
            if event.seq < args.from_seq:
                return
            if out.as_json:
                out.json_line(event.to_json())
            else:
                out.line(_log_line(event, out.style))

        history = await store.read(args.run_id)
        state = RunState()
        for event in history:
            state = apply(state, event)
            show(event)
        if not _stopped(state, history[-1] if history else None, args.until_terminal):
            async for event in store.follow(args.run_id, from_seq=state.last_seq + 1):
                state = apply(state, event)
                show(event)
                if _stopped(state, event, args.until_terminal):
                    # Several questions open together arrive back to back: show them all.
                    for more in await store.read(args.run_id, from_seq=event.seq + 1):
                        state = apply(state, more)
                        show(more)
                    break
    return exit_status_for(state.status)


def _stopped(state: RunState, last: Event | None, until_terminal: bool) -> bool:
    """Whether following can end: the run ended, or it waits on something nobody owes it."""
    from agentdeck.model.payloads import ControlRequested

    if state.status is None:
        return False
    if state.status in TERMINAL:
        return True
    if until_terminal:
        return False
    if state.status is RunStatus.WAITING_ANSWER:
        return bool(state.interrupts)  # answered but not yet continued: a deck owes it a play
    if state.status is RunStatus.PAUSED:
        payload = last.payload if last is not None else None
        owed = isinstance(payload, ControlRequested) and payload.verb == ControlVerb.RESUME
        return not owed  # a recorded resume: a deck owes it a play
    return False


def _log_line(event: Event, style: Style) -> str:
    """The console observer's line, with the kind coloured on a terminal."""
    from agentdeck.observers.console import format_event

    line = format_event(event)
    if not style.color:
        return line
    colour = {
        "run.completed": "green",
        "run.failed": "red",
        "run.cancelled": "yellow",
        "run.paused": "yellow",
        "run.interrupted": "magenta",
        "answer.recorded": "green",
        "answer.refused": "red",
    }.get(event.kind, "cyan")
    return line.replace(event.kind, style.paint(event.kind, colour), 1)


TAIL = Command(
    name="tail",
    help="follow a run's events live until it ends or waits for someone",
    description=(
        "Print a run's events (from --from-seq) and follow new ones as they are "
        "appended, until the run completes, fails or is cancelled, or waits for an "
        "answer or a resume nobody has given yet. Exit status: 0 completed, 1 "
        "failed or cancelled, 3 suspended."
    ),
    configure=_configure_tail,
    run=lambda args: run_async(_tail(args)),
)
