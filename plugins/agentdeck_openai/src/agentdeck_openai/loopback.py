"""``agentdeck-openai loopback``: the loopback model server as a process of its own.

The server the test suites use (:class:`~agentdeck_openai.testing.LoopbackModelServer`) is
started here from the command line, so ``agentdeck run``, ``agentdeck serve`` and
``agentdeck chat`` can be tried offline: point them at it with the ``OPENAI_*`` variables the
command prints and every model call is answered from a script, on 127.0.0.1, with no key.

The script is a file: ``.py`` (a module defining ``SCRIPT``, a
:class:`~agentdeck_openai.testing.Script`) or ``.json`` (a list of turns, each
``{"reply": "text"}`` or ``{"tool_call": "name", "arguments": {...}}``, optionally with
``"times": N`` or ``"times": null`` for a turn that answers every request). Without one, every
request gets the same short reply. ``python -m agentdeck_openai.loopback`` is the same command.
"""

from __future__ import annotations

import argparse
import json
import runpy
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentdeck.errors import AgentDeckError, ConfigError
from agentdeck_openai.testing.script import Script, Turn, reply, tool_call
from agentdeck_openai.testing.server import API_KEY, MODEL, LoopbackModelServer

__all__ = ["DEFAULT_REPLY", "load_script", "main"]

PROG = "agentdeck-openai"
DEFAULT_REPLY = "Hello from the loopback model: no provider was called."
"""What every request gets when no script is given."""


def load_script(path: Path) -> Script:
    """The :class:`Script` a ``.py`` or ``.json`` file describes; ``ConfigError`` naming the
    file and what was wrong otherwise."""
    if not path.is_file():
        raise ConfigError(f"script {path} does not exist", setting="--script")
    if path.suffix == ".py":
        found = runpy.run_path(str(path)).get("SCRIPT")
        if not isinstance(found, Script):
            raise ConfigError(
                f"{path} defines no SCRIPT = Script([...]) (found {type(found).__name__})",
                setting="--script",
            )
        return found
    if path.suffix == ".json":
        try:
            turns = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as bad:
            raise ConfigError(f"{path} is not JSON: {bad}", setting="--script") from bad
        if not isinstance(turns, list):
            raise ConfigError(f"{path} holds {type(turns).__name__}, not a list of turns")
        return Script(_turn(path, index, turn) for index, turn in enumerate(turns))
    raise ConfigError(
        f"script {path} is neither .py nor .json; accepted: a Python file defining SCRIPT, or "
        "a JSON list of turns",
        setting="--script",
    )


def _turn(path: Path, index: int, turn: Any) -> Turn:
    where = f"{path} turn {index}"
    if not isinstance(turn, dict):
        raise ConfigError(f"{where} is {type(turn).__name__}, not an object", setting="--script")
    times = turn.get("times", 1)
    if times is not None and not (isinstance(times, int) and times >= 1):
        raise ConfigError(f"{where}: times is {times!r}; accepted: a count >= 1 or null")
    if isinstance(turn.get("reply"), str):
        return reply(turn["reply"], times=times)
    if isinstance(turn.get("tool_call"), str):
        return tool_call(turn["tool_call"], turn.get("arguments") or {}, times=times)
    raise ConfigError(
        f"{where} has keys {sorted(turn)}; accepted: reply (text), or tool_call (a tool name) "
        "with arguments, each optionally with times",
        setting="--script",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Tools of the agentdeck-openai plugin.")
    commands = parser.add_subparsers(dest="command", metavar="{loopback}")
    loopback = commands.add_parser(
        "loopback",
        help="serve an OpenAI-compatible model on 127.0.0.1 that answers from a script",
        description=(
            "Serve the loopback model server until Ctrl-C, printing the OPENAI_* variables that "
            "point agentdeck run / serve / chat at it."
        ),
    )
    loopback.add_argument("--port", type=int, default=0, help="the port (default: a free one)")
    loopback.add_argument(
        "--script",
        type=Path,
        metavar="FILE",
        help="the turns to answer with: a .py file defining SCRIPT, or a .json list of turns "
        "(default: one reply to every request)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command until SIGINT or SIGTERM; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command != "loopback":
        parser.print_help(sys.stderr)
        return 2
    try:
        script = (
            load_script(args.script)
            if args.script is not None
            else Script([reply(DEFAULT_REPLY, times=None)])
        )
        server = LoopbackModelServer(script, port=args.port).start()
    except (AgentDeckError, OSError) as problem:
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 2
    stop = threading.Event()
    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGINT, signal.SIGTERM):
            signal.signal(number, lambda *_: stop.set())
    try:
        for name, value in server.env(model=MODEL).items():
            print(f"export {name}={value}")
        print(f"# loopback model server on {server.base_url} (API key {API_KEY}); Ctrl-C stops")
        sys.stdout.flush()
        while not stop.wait(0.2):
            pass
    finally:
        server.stop()
    print(f"# served {server.script.served} model request(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
