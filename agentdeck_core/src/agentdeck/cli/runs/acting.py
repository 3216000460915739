"""``agentdeck runs answer|signal``: the subcommands that act on a run.

Each opens a deck on the configured state (:func:`~agentdeck.cli.common.open_deck`) and goes
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
import sys
from typing import Any

from agentdeck.bindings.transcript import Transcript
from agentdeck.cli import Command
from agentdeck.cli.common import (
    EXIT_OK,
    RUN_ID_HELP,
    Output,
    add_json_option,
    add_project_option,
    add_state_options,
    exit_status_for,
    find_run,
    interrupt_dict,
    open_deck,
    run_async,
    runtime_of,
)
from agentdeck.deck.deck import Deck
from agentdeck.deck.runs import Run
from agentdeck.errors import InvalidInputError, RunStateError
from agentdeck.model.status import RunState, fold
from agentdeck.plugins.urls import redact_url
from agentdeck.vocabulary import ControlVerb, RunStatus

__all__ = ["ANSWER", "SIGNAL"]


# =========================================================================== runs answer


def _configure_answer(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", help=RUN_ID_HELP)
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
        record = await find_run(deck, args.run_id)
        run = Run(deck.service, record)
        try:
            answered = await deck.service.answer(
                run.id, value, interrupt_id=args.interrupt_id, play=play
            )
        except RunStateError as refused:
            if type(refused) is RunStateError and refused.hint == "resume":
                raise RunStateError(
                    f"{refused}; from the command line: agentdeck runs signal {run.id} resume",
                    run_id=run.id,
                    status=refused.status,
                    accepted=refused.accepted,
                    hint=refused.hint,
                ) from None
            raise
        after = answered.after
        if play and answered.appended and after.status is not RunStatus.WAITING_ANSWER:
            status = await _follow(out, deck, run, from_seq=answered.before.last_seq + 1)
            return _report(out, run, answered.interrupt_id, status, continued=True)
        if not answered.appended:  # the same answer was recorded before: a retry
            after = fold(await runtime.store.read(run.id))
            return _report(
                out, run, answered.interrupt_id, after.status, continued=False, again=True
            )
    return _report(out, run, answered.interrupt_id, after.status, continued=False, still_open=after)


def _report(
    out: Output,
    run: Run,
    interrupt_id: str | None,
    status: RunStatus | None,
    *,
    continued: bool,
    still_open: RunState | None = None,
    again: bool = False,
) -> int:
    still = list(still_open.interrupts) if still_open is not None else []
    if out.as_json:
        out.json(
            {
                "id": run.id,
                "interrupt_id": interrupt_id,
                "status": status.value if status is not None else None,
                "continued": continued,
                "already_recorded": again,
                "pending": [interrupt_dict(i) for i in still],
            }
        )
        return exit_status_for(status) if continued else EXIT_OK
    s = out.style
    if continued:
        out.line(f"run {run.id} is {s.status(status)}")
        return exit_status_for(status)
    if again:
        out.line(
            f"this answer to {interrupt_id} was already recorded for run {run.id} "
            f"(now {s.status(status)}); nothing more to do"
        )
    elif still:
        out.line(
            f"answer to {interrupt_id} recorded; still open: "
            f"{', '.join(i.interrupt_id for i in still)} "
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


ANSWER = Command(
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
    run=lambda args: run_async(_answer(args)),
)


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
        record = await runtime.store.get_run(args.run_id)
        if record is None:
            return await _signal_unseen(out, deck, args.run_id, verb, args.reason)
        run = Run(deck.service, record)
        if verb is ControlVerb.RESUME:
            continued = await runtime.resume(run.id, reason=args.reason or "resumed", play=play)
            if continued:
                status = await _follow(out, deck, run, from_seq=record.last_seq + 1)
                return _signalled(out, run, verb, record.status, status)
        else:
            await runtime.request_control(run.id, verb, args.reason)
        now = await find_run(deck, run.id)
    return _signalled(out, run, verb, record.status, now.status)


async def _signal_unseen(
    out: Output, deck: Deck, run_id: str, verb: ControlVerb, reason: str | None
) -> int:
    """The documented ``runs signal RUN VERB --control-db PATH`` for a run whose events live in
    another process's store: the request goes to the control store alone, and the process
    playing the run acts on it at its next safe point (a resume: at its next sweep)."""
    runtime = runtime_of(deck)
    await runtime.request_unseen(run_id, verb, reason)
    where = f"events {redact_url(runtime.store.url) or 'in this process'}"
    print(
        f"agentdeck: could not see the log of run {run_id} ({where}); the {verb.value} request "
        "was recorded in the control store, and the process playing the run acts on it at its "
        "next safe point",
        file=sys.stderr,
    )
    if out.as_json:
        out.json(
            {
                "id": run_id,
                "verb": verb.value,
                "status_before": None,
                "status": None,
                "recorded_in": "control",
            }
        )
    else:
        out.line(f"{verb.value} requested for run {run_id} through the control store")
    return EXIT_OK


def _signalled(
    out: Output, run: Run, verb: ControlVerb, before: RunStatus, after: RunStatus | None
) -> int:
    if out.as_json:
        out.json(
            {
                "id": run.id,
                "verb": verb.value,
                "status_before": before.value,
                "status": after.value if after is not None else None,
            }
        )
        return EXIT_OK
    s = out.style
    if before is RunStatus.CANCELLED:  # a cancel on a cancelled run: what it asks for holds
        out.line(f"run {run.id} is already {s.status(before)}")
    elif after is not before:
        out.line(f"run {run.id}: {verb.value} done, now {s.status(after)}")
    elif verb is ControlVerb.RESUME and before is RunStatus.PAUSED:
        out.line(
            f"resume of run {run.id} recorded; it continues when a deck that has "
            f"{run.name!r} sweeps, or right away with --project PATH"
        )
    elif verb is ControlVerb.RESUME:
        out.line(f"run {run.id} is {s.status(before)}: any pending pause was lifted")
    elif verb is ControlVerb.PAUSE and before is RunStatus.PAUSED:
        out.line(f"run {run.id} is already {s.status(before)}")
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


SIGNAL = Command(
    name="signal",
    help="pause, resume or cancel a run",
    description=(
        "Send a control verb to a run. pause and cancel are requests the run acts "
        "on at its next safe point (a suspended run is cancelled at once); resume "
        "continues a paused run (without --project: recorded for a deck that has "
        "its engine) or lifts a pause pending on a waiting one."
    ),
    configure=_configure_signal,
    run=lambda args: run_async(_signal(args)),
)
