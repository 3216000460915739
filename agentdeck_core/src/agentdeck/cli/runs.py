"""``agentdeck runs``: list, show, follow, answer, signal and prune runs in any configured store.

Each subcommand opens a deck on the configured state (:func:`~.common.open_deck`) and goes
through the same runtime code a serving deck does — the conditional appends that make "answer vs
cancel" and "two answers" have one winner, the at-once cancel of a suspended run, the refusal of
an answer that does not fit its question.

**Answering (or resuming) from a process without the run's engine.** Continuing a run means
playing it, which needs its engine and its definition. So ``runs answer`` *without*
``--project`` records the answer durably (``answer.recorded``, validated and conditional like
any answer) and stops there: the run stays ``waiting_answer`` with its question closed, and a
deck that has the engine — a server, a worker, or the CLI with ``--project`` — sees at its next
sweep that the run is owed a continuation and plays it (``run.resumed`` is written by that deck,
and only one deck wins it). ``runs signal RUN resume`` records
``control.requested(verb="resume")`` the same way. With ``--project`` the command plays the run
itself and follows it until it stops again.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import timedelta
from typing import Any

from agentdeck.bindings.transcript import Style, Transcript
from agentdeck.cli import Command
from agentdeck.cli.common import (
    EPILOG_STATE,
    EXIT_OK,
    Output,
    add_json_option,
    add_project_option,
    add_state_options,
    describe_state,
    exit_status_for,
    open_deck,
    record_dict,
    run_async,
    runtime_of,
    state_settings,
)
from agentdeck.cli.tree import load_tree, node_dict, render_tree
from agentdeck.deck.deck import Deck
from agentdeck.deck.runs import Run
from agentdeck.errors import ConfigError, InvalidInputError, NotFoundError, RunStateError
from agentdeck.model.clock import SystemClock
from agentdeck.model.events import ControlRequested, Event
from agentdeck.model.status import RunState, apply, fold
from agentdeck.observers.console import format_event
from agentdeck.ports import PruneQuery, RunQuery, RunRecord
from agentdeck.vocabulary import TERMINAL, ControlVerb, RunStatus

__all__ = ["RUNS", "parse_duration"]

_RUN_ID_HELP = "the run's id"
_TERMINAL_NAMES = sorted(status.value for status in TERMINAL)


async def _record(deck: Deck, run_id: str) -> RunRecord:
    record = await runtime_of(deck).store.get_run(run_id)
    if record is None:
        raise NotFoundError(f"no run with id '{run_id}' in this store", what="run", name=run_id)
    return record


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
        "--limit", type=int, default=100, help="at most this many runs, oldest first (default 100)"
    )
    add_json_option(parser, "print the runs as a JSON list")
    add_state_options(parser)


async def _list(args: argparse.Namespace) -> int:
    if args.all_namespaces and args.namespace is not None:
        raise ConfigError(
            "--namespace and --all-namespaces exclude each other", setting="--namespace"
        )
    out = Output(args.json)
    since = parse_duration(args.since) if args.since else None
    async with open_deck(args) as deck:
        store = runtime_of(deck).store
        records: list[RunRecord] = []
        cursor: str | None = None
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
                )
            )
            records.extend(page.runs)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
    if out.as_json:
        out.json([record_dict(record) for record in records])
        return EXIT_OK
    if not records:
        where = "any namespace" if args.all_namespaces else _namespace_label(args.namespace)
        out.line(f"no runs in {where} ({describe_state(state_settings(args))})")
        return EXIT_OK
    _print_runs(out, records, namespaces=args.all_namespaces)
    return EXIT_OK


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


# =========================================================================== runs show


def _configure_show(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", help=_RUN_ID_HELP)
    add_json_option(parser, "print the run, its events and its child runs as JSON")
    add_state_options(parser)


async def _show(args: argparse.Namespace) -> int:
    out = Output(args.json)
    async with open_deck(args) as deck:
        runtime = runtime_of(deck)
        record = await _record(deck, args.run_id)
        node = await load_tree(runtime.store, runtime.control, record)
    if out.as_json:
        out.json(node_dict(node))
    else:
        for line in render_tree(node, out.style):
            out.line(line)
    return EXIT_OK


# =========================================================================== runs tail


def _configure_tail(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", help=_RUN_ID_HELP)
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
    out = Output(args.json)
    async with open_deck(args) as deck:
        store = runtime_of(deck).store
        await _record(deck, args.run_id)

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


# =========================================================================== runs answer


def _configure_answer(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", help=_RUN_ID_HELP)
    parser.add_argument("value", help="the answer (text; JSON with --json-value)")
    parser.add_argument(
        "--interrupt-id",
        metavar="ID",
        help="which open question to answer (needed only when several are open)",
    )
    parser.add_argument(
        "--json-value", action="store_true", help="parse VALUE as JSON (true, 42, {...})"
    )
    add_project_option(
        parser,
        "continue the run here with this project's engines and follow it until it stops "
        "(default: record the answer and leave continuing it to a deck that has the engine)",
    )
    add_json_option(parser, "print the outcome as JSON")
    add_state_options(parser)


async def _answer(args: argparse.Namespace) -> int:
    out = Output(args.json)
    value: Any = args.value
    if args.json_value:
        try:
            value = json.loads(args.value)
        except json.JSONDecodeError as bad:
            raise InvalidInputError(
                f"--json-value: VALUE is not JSON ({bad.msg} at position {bad.pos}); pass "
                'JSON such as true, 42, "text" or {"approved": true}',
                field="value",
            ) from None
    play = args.project is not None
    async with open_deck(args, project=args.project) as deck:
        runtime = runtime_of(deck)
        record = await _record(deck, args.run_id)
        run = Run(deck.service, record)
        before = fold(await runtime.store.read(run.id))
        try:
            await run.answer(value, interrupt_id=args.interrupt_id, play=play)
        except RunStateError as refused:
            if refused.hint == "resume":
                raise RunStateError(
                    f"{refused}; from the command line: agentdeck runs signal {run.id} resume",
                    run_id=run.id,
                    status=refused.status,
                    accepted=refused.accepted,
                    hint=refused.hint,
                ) from None
            raise
        after = fold(await runtime.store.read(run.id))
        answered = _answered_id(before, after, args.interrupt_id)
        if play and after.status is not RunStatus.WAITING_ANSWER:
            status = await _follow(out, deck, run, from_seq=before.last_seq + 1)
            return _report(out, run, answered, status, continued=True)
    return _report(out, run, answered, after.status, continued=False, still_open=after)


def _answered_id(before: RunState, after: RunState, given: str | None) -> str | None:
    if given is not None:
        return given
    closed = {i.interrupt_id for i in before.interrupts} - {
        i.interrupt_id for i in after.interrupts
    }
    return next(iter(closed), None)


def _report(
    out: Output,
    run: Run,
    interrupt_id: str | None,
    status: RunStatus | None,
    *,
    continued: bool,
    still_open: RunState | None = None,
) -> int:
    open_ids = [i.interrupt_id for i in still_open.interrupts] if still_open is not None else []
    if out.as_json:
        out.json(
            {
                "run_id": run.id,
                "interrupt_id": interrupt_id,
                "status": status.value if status is not None else None,
                "continued": continued,
                "open_interrupts": open_ids,
            }
        )
        return exit_status_for(status) if continued else EXIT_OK
    s = out.style
    if continued:
        out.line(f"run {run.id} is {s.status(status)}")
        return exit_status_for(status)
    if status is not None and status in TERMINAL:
        out.line(f"run {run.id} is already {s.status(status)}; nothing to answer")
    elif open_ids:
        out.line(
            f"answer to {interrupt_id} recorded; still open: {', '.join(open_ids)} "
            f"(answer each with --interrupt-id)"
        )
    else:
        out.line(
            f"answer to {interrupt_id} recorded for run {run.id}. The run continues when a deck "
            f"that has {run.name!r} sweeps (every AGENTDECK_RUNTIME_SWEEP_INTERVAL_SECONDS), or "
            "right away with --project PATH."
        )
    return EXIT_OK


async def _follow(out: Output, deck: Deck, run: Run, *, from_seq: int) -> RunStatus | None:
    """Show a run this process plays until it stops, then wait until the play has wound down."""
    transcript = Transcript(out.stream, out.style, lifecycle=True, terminal=out.terminal)
    async for event in run.events(from_seq=from_seq, follow=True):
        if out.as_json:
            continue
        transcript.write(event)
    await runtime_of(deck).wait_played(run.id)
    return await run.status()


# =========================================================================== runs signal


def _configure_signal(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", help="the run to signal")
    parser.add_argument(
        "verb",
        choices=[ControlVerb.CANCEL.value, ControlVerb.PAUSE.value, ControlVerb.RESUME.value],
        help="the verb - see Run Control for what each does",
    )
    parser.add_argument("--reason", help="why, recorded in the run's log with the request")
    add_project_option(
        parser,
        "resume: continue the run here with this project's engines and follow it (default: "
        "record the request for a deck that has the engine)",
    )
    add_json_option(parser, "print the outcome as JSON")
    add_state_options(parser, control_db=True)


async def _signal(args: argparse.Namespace) -> int:
    out = Output(args.json)
    verb = ControlVerb(args.verb)
    play = args.project is not None
    async with open_deck(args, project=args.project) as deck:
        runtime = runtime_of(deck)
        record = await _record(deck, args.run_id)
        run = Run(deck.service, record)
        if verb is ControlVerb.RESUME:
            continued = await runtime.resume(run.id, reason=args.reason or "resumed", play=play)
            if continued:
                status = await _follow(out, deck, run, from_seq=record.last_seq + 1)
                return _signalled(out, run, verb, record.status, status)
        else:
            await runtime.request_control(run.id, verb, args.reason)
        now = await _record(deck, run.id)
    return _signalled(out, run, verb, record.status, now.status)


def _signalled(
    out: Output, run: Run, verb: ControlVerb, before: RunStatus, after: RunStatus | None
) -> int:
    if out.as_json:
        out.json(
            {
                "run_id": run.id,
                "verb": verb.value,
                "status_before": before.value,
                "status": after.value if after is not None else None,
            }
        )
        return EXIT_OK
    s = out.style
    if before in TERMINAL:
        out.line(f"run {run.id} is already {s.status(before)}; nothing to {verb.value}")
    elif after is not before:
        out.line(f"run {run.id}: {verb.value} done, now {s.status(after)}")
    elif verb is ControlVerb.RESUME and before is RunStatus.PAUSED:
        out.line(
            f"resume of run {run.id} recorded; it continues when a deck that has "
            f"{run.name!r} sweeps, or right away with --project PATH"
        )
    elif verb is ControlVerb.RESUME:
        out.line(f"run {run.id} is {s.status(before)}: any pending pause was lifted")
    elif verb is ControlVerb.PAUSE and before is RunStatus.WAITING_ANSWER:
        out.line(
            f"pause recorded for run {run.id} (waiting_answer): answers are held back until "
            f"agentdeck runs signal {run.id} resume lifts it"
        )
    else:
        out.line(
            f"{verb.value} requested for run {run.id} ({s.status(before)}); it is acted on at "
            "the run's next safe point"
        )
    return EXIT_OK


# =========================================================================== runs prune


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
        await runtime.control.forget([r.run_id for r in doomed])
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


_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> timedelta:
    """``90s``, ``30m``, ``12h``, ``7d``, ``2w`` or a sum such as ``1h30m``."""
    compact = text.replace(" ", "").lower()
    parts = _DURATION.findall(compact)
    if not compact or "".join(n + u for n, u in parts) != compact:
        raise InvalidInputError(
            f"{text!r} is not a duration; accepted: a number and a unit s, m, h, d or w, or a "
            "sum of them (90s, 30m, 12h, 7d, 2w, 1h30m)",
            field="duration",
        )
    return timedelta(seconds=sum(float(n) * _UNITS[u] for n, u in parts))


# =========================================================================== the tree


def _command(runner: Any) -> Any:
    return lambda args: run_async(runner(args))


def _build() -> Command:
    return Command(
        name="runs",
        help="list, show, follow, answer, signal and prune runs in any configured store",
        description=(
            "Read and operate runs recorded in any store the deck settings (or --events/"
            "--control) point at, from any process. " + EPILOG_STATE
        ),
        subcommands=(
            Command(
                name="list",
                help="list runs (one namespace, or all), filtered by status, session or age",
                configure=_configure_list,
                run=_command(_list),
            ),
            Command(
                name="show",
                help="show a run as a tree: events, tool calls, questions, answers, child runs",
                configure=_configure_show,
                run=_command(_show),
            ),
            Command(
                name="tail",
                help="follow a run's events live until it ends or waits for someone",
                description=(
                    "Print a run's events (from --from-seq) and follow new ones as they are "
                    "appended, until the run completes, fails or is cancelled, or waits for an "
                    "answer or a resume nobody has given yet. Exit status: 0 completed, 1 "
                    "failed or cancelled, 3 suspended."
                ),
                configure=_configure_tail,
                run=_command(_tail),
            ),
            Command(
                name="answer",
                help="answer the question a run waits on",
                description=(
                    "Answer an open question of a run. The answer is validated against what "
                    "the question expects and recorded with the same conditional write a deck "
                    "uses. Without --project it is recorded only, and a deck that has the "
                    "run's engine continues the run at its next sweep; with --project the run "
                    "continues here and is followed until it stops."
                ),
                configure=_configure_answer,
                run=_command(_answer),
            ),
            Command(
                name="signal",
                help="pause, resume or cancel a run",
                description=(
                    "Send a control verb to a run. pause and cancel are requests the run acts "
                    "on at its next safe point (a suspended run is cancelled at once); resume "
                    "continues a paused run (without --project: recorded for a deck that has "
                    "its engine) or lifts a pause pending on a waiting one."
                ),
                configure=_configure_signal,
                run=_command(_signal),
            ),
            Command(
                name="prune",
                help="delete finished runs older than a given age",
                configure=_configure_prune,
                run=_command(_prune),
            ),
        ),
    )


RUNS = _build()
