"""``agentdeck build``, ``run``, ``chat`` and ``serve``: the commands that load a project.

A project is a ``.agentdeck/`` directory (``Deck.from_project``). ``build`` validates it without
opening anything, so it doubles as a CI check; ``run`` plays one turn and streams it; ``chat``
serves the terminal binding; ``serve`` the native HTTP binding of the ``agentdeck-http`` plugin.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from agentdeck.bindings.terminal import Terminal
from agentdeck.bindings.transcript import Transcript
from agentdeck.cli import Command
from agentdeck.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_SUSPENDED,
    Output,
    add_json_option,
    add_state_options,
    exit_status_for,
    parse_input,
    run_async,
    runtime_of,
    state_settings,
)
from agentdeck.cli.served_app import HTTP_OPTIONS_ENV, PROJECT_ENV, http_settings
from agentdeck.deck.deck import Deck
from agentdeck.errors import ConfigError, NotFoundError, PluginNotInstalledError
from agentdeck.model.status import RunState, apply

__all__ = ["BUILD", "CHAT", "RUN", "SERVE"]

DEFAULT_PROJECT = ".agentdeck"
_PROJECT_HELP = f"the project directory (default: {DEFAULT_PROJECT})"


def _add_project(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", metavar="PATH", default=DEFAULT_PROJECT, help=_PROJECT_HELP)


# =========================================================================== build


def _configure_build(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", default=DEFAULT_PROJECT, help=_PROJECT_HELP)
    add_json_option(parser, "print the outcome as JSON")


def _build(args: argparse.Namespace) -> int:
    out = Output(args.json)
    deck: Deck | None = None
    try:
        deck = Deck.from_project(args.path)
        deck.build(full=True)  # as the workers will, where the deck itself would only admit
        invocables = {name: str(i.kind) for name, i in sorted(deck.invocables.items())}
    except ConfigError as invalid:
        if out.as_json:
            out.json({"ok": False, "project": args.path, "error": str(invalid)})
        else:
            print(f"agentdeck: {args.path}: {invalid}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        if deck is not None:
            asyncio.run(deck.aclose())  # unloads the project's modules
    if out.as_json:
        out.json({"ok": True, "project": args.path, "invocables": invocables})
        return EXIT_OK
    s = out.style
    listing = ", ".join(f"{name} ({kind})" for name, kind in invocables.items()) or "nothing"
    out.line(f"{s.paint(s.glyph('ok'), 'green')} {args.path}: {listing}")
    return EXIT_OK


BUILD = Command(
    name="build",
    help="validate a project: names, references, context types and every compile",
    description=(
        "Load a project directory and build its deck: every agent and workflow is compiled "
        "on its engine and every reference checked, with no network and no server started. "
        "Exit status 0 when it builds, 1 with the error when it does not — a CI check."
    ),
    configure=_configure_build,
    run=_build,
)


# =========================================================================== run


def _configure_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="the agent or workflow to run")
    parser.add_argument(
        "input",
        nargs="?",
        help="text for an agent; JSON for a workflow (text otherwise); '-' reads standard input",
    )
    _add_project(parser)
    parser.add_argument("--session", metavar="ID", help="the session the turn belongs to")
    parser.add_argument("--namespace", help="the namespace to start the run in")
    parser.add_argument(
        "--key", help="an idempotency key: the run claims (namespace, key) for good"
    )
    add_json_option(parser, "print one JSON event per line instead of the transcript")
    add_state_options(parser)


async def _run(args: argparse.Namespace) -> int:
    out = Output(args.json)
    text = sys.stdin.read() if args.input == "-" else args.input
    deck = Deck.from_project(args.project, settings=state_settings(args))
    async with deck:
        invocables = deck.invocables
        if args.name not in invocables:
            raise NotFoundError(
                f"no agent or workflow named {args.name!r} in {args.project}; available: "
                + (", ".join(sorted(invocables)) or "none"),
                what="invocable",
                name=args.name,
                available=sorted(invocables),
            )
        kind = str(invocables[args.name].kind)
        value = parse_input(text, kind=kind) if text is not None else None
        transcript = Transcript(out.stream, out.style, lifecycle=True, terminal=out.terminal)
        state = RunState()
        run_id = ""
        async for event in deck.stream(
            args.name, value, session_id=args.session, namespace=args.namespace, key=args.key
        ):
            run_id = event.run_id
            state = apply(state, event)
            if out.as_json:
                out.json_line(event.to_json())
            else:
                transcript.write(event)
        if run_id:
            await runtime_of(deck).wait_played(run_id)  # let the play wind down before closing
    status = exit_status_for(state.status)
    if status == EXIT_SUSPENDED and not out.as_json:
        if state.interrupts:
            out.line(f"answer it with: agentdeck runs answer {run_id} VALUE")
        else:
            out.line(f"resume it with: agentdeck runs signal {run_id} resume")
    return status


RUN = Command(
    name="run",
    help="run an agent or workflow of a project once and stream its events",
    description=(
        "Start one run of NAME from the project and stream it as it happens: text as it is "
        "generated, tool calls, questions, reports and the outcome (--json: the canonical "
        "events, one per line). Exit status: 0 completed, 1 failed or cancelled, 3 waiting "
        "for an answer or paused (answer or resume it with agentdeck runs)."
    ),
    configure=_configure_run,
    run=lambda args: run_async(_run(args)),
)


# =========================================================================== chat


def _configure_chat(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "name", nargs="?", help="the agent or workflow to chat with (default: the only agent)"
    )
    _add_project(parser)
    parser.add_argument("--namespace", help="the namespace the chat's runs are started in")
    add_state_options(parser)


def _chat(args: argparse.Namespace) -> int:
    deck = Deck.from_project(args.project, settings=state_settings(args))
    terminal = Terminal.stdio(args.name, namespace=args.namespace)
    terminal.resolve(deck)  # a name that is missing or ambiguous fails here, before serving
    try:
        deck.serve(terminal)
    except KeyboardInterrupt:  # before the chat took Ctrl-C over (while the deck opened)
        return 130
    return EXIT_OK


CHAT = Command(
    name="chat",
    help="chat with an agent or workflow of a project on this terminal",
    description=(
        "Serve the project over the terminal binding (Terminal.stdio()): one message per "
        "line, the reply streamed, tool calls shown, approvals and questions asked inline. "
        "Ctrl-C stops the reply in flight (its run is cancelled); Ctrl-C twice, Ctrl-D or "
        "/exit leaves."
    ),
    configure=_configure_chat,
    run=_chat,
)


# =========================================================================== serve


def _configure_serve(parser: argparse.ArgumentParser) -> None:
    _add_project(parser)
    parser.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, default=8000, help="the port to listen on (default: 8000)"
    )
    parser.add_argument(
        "--reload", action="store_true", help="restart when the project's files change (uvicorn)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="serve from N worker processes (uvicorn); they share the configured store",
    )
    http = parser.add_argument_group(
        "http binding",
        "Each flag wins over its AGENTDECK_HTTP_* setting (environment or config.yaml); the "
        "rest of the binding (max body, origins, path, heartbeat) is read from those settings.",
    )
    http.add_argument(
        "--api-keys-file",
        metavar="PATH",
        help="a JSON file of API keys {key: namespaces}; every request then needs a key "
        "(instead of AGENTDECK_HTTP_API_KEYS_FILE / AGENTDECK_HTTP_API_KEYS)",
    )
    http.add_argument(
        "--context-factory",
        metavar="MODULE:CALLABLE",
        help="import string of the context factory, called with each request's ServedCall "
        "(instead of AGENTDECK_HTTP_CONTEXT_FACTORY)",
    )
    http.add_argument(
        "--public-kinds",
        metavar="KINDS",
        action="append",
        help="event kinds streams send, comma-separated ('run.*,text.delta'); repeatable "
        "(instead of AGENTDECK_HTTP_PUBLIC_KINDS)",
    )
    add_state_options(parser)


_HTTP_FLAGS = {
    "api_keys_file": "--api-keys-file",
    "context_factory": "--context-factory",
    "public_kinds": "--public-kinds",
}
"""http setting -> the flag that overrides it, to blame the flag for a bad value."""

_OVERRIDE_ORIGIN = re.compile(r"\(from \w+\(\w+=\.\.\.\) passed in code\)")
"""How a settings error names a value set as an override; for a flag, the flag is the origin."""


def _serve(args: argparse.Namespace) -> int:
    try:
        from agentdeck.bindings import Native
    except PluginNotInstalledError as missing:
        print(
            f"agentdeck serve needs the {missing.distribution} plugin, which is not installed; "
            f"install it with: pip install {missing.distribution}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    if args.workers is not None and args.workers < 1:
        raise ConfigError(f"--workers takes a number >= 1, not {args.workers}", setting="--workers")
    # The context factory is imported the way uvicorn imports an app: from the working
    # directory too, whichever way the command was started.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    options = _http_options(args)
    binding = _binding(Native, options)  # bad keys or a bad factory fail here, once
    if args.reload or args.workers is not None:
        return _serve_with_uvicorn(args, options)
    deck = Deck.from_project(args.project, settings=state_settings(args))
    deck.serve(binding, host=args.host, port=args.port)
    return EXIT_OK


def _http_options(args: argparse.Namespace) -> dict[str, object]:
    """The ``http`` settings the flags set; JSON-ready, for the worker processes too."""
    options: dict[str, object] = {}
    if args.api_keys_file is not None:
        # The file replaces keys set anywhere else, inline ones included.
        options["api_keys_file"] = str(Path(args.api_keys_file).resolve())
        options["api_keys"] = ""
    if args.context_factory is not None:
        options["context_factory"] = args.context_factory
    if args.public_kinds is not None:
        options["public_kinds"] = [
            kind.strip() for given in args.public_kinds for kind in given.split(",") if kind.strip()
        ]
    return options


def _binding(native: Any, options: dict[str, object]) -> Any:
    """``Native.from_settings`` with the flags applied; a bad flag value is blamed on the flag.

    ``native`` is the plugin's class, reached by name (the core never imports the plugin)."""
    try:
        return native.from_settings(http_settings(options))
    except ConfigError as invalid:
        for field, flag in _HTTP_FLAGS.items():
            if field in options and invalid.setting == f"AGENTDECK_HTTP_{field.upper()}":
                # The flag's value reached the settings as an override "passed in code".
                message = _OVERRIDE_ORIGIN.sub(f"(from {flag})", str(invalid))
                raise ConfigError(f"{flag}: {message}", setting=flag) from None
        raise


def _serve_with_uvicorn(args: argparse.Namespace, options: dict[str, object]) -> int:
    """Reloading and worker processes are uvicorn's: hand over to its command with an app
    factory that builds the project's deck and binding in each process (the core imports no
    server). The flags travel in the environment, as the settings they override do."""
    project = Path(args.project).resolve()
    Deck.from_project(project).build()  # a broken project fails here, once, not per worker
    env = {**os.environ, PROJECT_ENV: str(project)}
    for name, value in (("AGENTDECK_EVENTS", args.events), ("AGENTDECK_CONTROL", args.control)):
        if value is not None:
            env[name] = value
    if options:
        env[HTTP_OPTIONS_ENV] = json.dumps(options)
    else:
        env.pop(HTTP_OPTIONS_ENV, None)
    argv = [
        sys.executable,
        "-m",
        "uvicorn",
        "agentdeck.cli.served_app:app",
        "--factory",
        "--host",
        args.host,
        "--port",
        str(args.port),
    ]
    if args.reload:
        argv += ["--reload", "--reload-dir", str(project)]
    if args.workers is not None:
        argv += ["--workers", str(args.workers)]
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.execve(sys.executable, argv, env)  # signals now go straight to uvicorn
    return subprocess.call(argv, env=env)  # pragma: no cover - platforms without exec


SERVE = Command(
    name="serve",
    help="serve a project over HTTP/SSE (needs the agentdeck-http plugin)",
    description=(
        "Serve the project's deck over AgentDeck's native HTTP/SSE protocol, bound to "
        "127.0.0.1 by default. The binding is Native.from_settings(): API keys, the context "
        "factory, public event kinds, body cap, origins and path prefix come from the "
        "AGENTDECK_HTTP_* settings (or config.yaml's http: block), the flags below winning. "
        "A bad value stops it before it listens, naming the setting or flag."
    ),
    configure=_configure_serve,
    run=_serve,
)
