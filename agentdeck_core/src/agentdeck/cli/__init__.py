"""The ``agentdeck`` command.

Each subcommand is a :class:`Command`: a name, its help, a function adding its arguments, a
function running it, and optionally nested subcommands (``agentdeck runs signal``). The command
tree is assembled from :data:`BUILTIN_COMMANDS` plus the ``"module:attribute"`` references in
:data:`COMMAND_MODULES`, which are imported only when the parser is built, so adding a command
(``runs``, ``serve``, ``chat``, ``build``, ``run``) means writing its module and adding one line
there, never rewriting this one.

:func:`main` returns the exit status instead of exiting (``--help`` and ``--version`` return 0),
so the command is callable from tests and from the documentation generator, which renders every
command's ``--help`` (see :func:`command_paths`).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import TextIO

from agentdeck.errors import AgentDeckError, ConfigError
from agentdeck.plugins.host import (
    BrokenPlugin,
    DisabledPlugin,
    PluginHost,
    PluginInfo,
    PluginWarning,
    core_version,
)

__all__ = [
    "BUILTIN_COMMANDS",
    "COMMAND_MODULES",
    "Command",
    "build_parser",
    "command_paths",
    "commands",
    "help_text",
    "main",
    "reference_markdown",
    "update_reference",
]

PROG = "agentdeck"


@dataclass(frozen=True)
class Command:
    """One subcommand of ``agentdeck``.

    ``run`` receives the parsed arguments and returns the exit status. A command with
    ``subcommands`` (and no ``run`` of its own) prints its help when called without one.
    """

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    run: Callable[[argparse.Namespace], int] | None = None
    description: str = ""
    subcommands: tuple[Command, ...] = field(default=())


# =========================================================================== agentdeck plugins


def _configure_plugins(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the listing as JSON (plugins, broken, disabled)",
    )


def _run_plugins(args: argparse.Namespace) -> int:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PluginWarning)
        host = PluginHost.discover()
    plugins, broken, disabled = host.plugins(), host.broken(), host.disabled()
    out = sys.stdout
    if args.json:
        listing = {
            "plugins": [p.to_dict() for p in plugins],
            "broken": [b.to_dict() for b in broken],
            "disabled": [d.to_dict() for d in disabled],
        }
        json.dump(listing, out, indent=2)
        out.write("\n")
    else:
        _print_plugins(out, plugins, broken, disabled)
    # Broken plugins are already in the listing; other warnings (a typo in the allowlist)
    # are not, so they go to stderr.
    broken_names = {b.name for b in broken}
    for warning in caught:
        text = str(warning.message)
        if not any(f"plugin '{name}'" in text for name in broken_names):
            print(f"{PROG}: warning: {text}", file=sys.stderr)
    return 0


def _print_plugins(
    out: TextIO,
    plugins: Sequence[PluginInfo],
    broken: Sequence[BrokenPlugin],
    disabled: Sequence[DisabledPlugin],
) -> None:
    def origin(distribution: str | None, version: str | None) -> str:
        if distribution is None:
            return "(no distribution)"
        return f"{distribution} {version}" if version else distribution

    if not plugins:
        print("No plugins loaded.", file=out)
    for info in plugins:
        print(f"{info.name}  {origin(info.distribution, info.version)}  [{info.module}]", file=out)
        if not info.provides:
            print("    provides nothing", file=out)
        for key, names in info.provides.items():
            print(f"    {key}: {', '.join(names)}", file=out)
    if broken:
        print("\nBroken plugins (skipped):", file=out)
        for item in broken:
            print(f"{item.name}  {origin(item.distribution, item.version)}", file=out)
            print(f"    {item.reason}", file=out)
    if disabled:
        print("\nDisabled plugins:", file=out)
        for off in disabled:
            print(f"{off.name}  {origin(off.distribution, None)}: {off.reason}", file=out)


PLUGINS = Command(
    name="plugins",
    help="list installed plugins and what each provides",
    description=(
        "List the plugins found under the 'agentdeck' entry-point group: each one's "
        "distribution and version and the schemes, engines, observers, bindings and settings "
        "sections it registers; then any plugin that failed to load, with the reason, and any "
        "that AGENTDECK_PLUGINS / AGENTDECK_DISABLE_PLUGINS kept from loading."
    ),
    configure=_configure_plugins,
    run=_run_plugins,
)


# =========================================================================== the command tree

BUILTIN_COMMANDS: tuple[Command, ...] = (PLUGINS,)
"""Commands defined in this module."""

COMMAND_MODULES: tuple[str, ...] = (
    "agentdeck.cli.project:BUILD",
    "agentdeck.cli.project:RUN",
    "agentdeck.cli.project:CHAT",
    "agentdeck.cli.project:SERVE",
    "agentdeck.cli.runs.command:RUNS",
)
"""``"module:attribute"`` references to :class:`Command` objects defined elsewhere in the core
(``"agentdeck.cli.runs.command:RUNS"``), imported when the parser is built."""


def commands() -> list[Command]:
    """Every top-level command, in the order ``--help`` lists them."""
    found = list(BUILTIN_COMMANDS)
    for reference in COMMAND_MODULES:
        module_name, _, attribute = reference.partition(":")
        command = getattr(import_module(module_name), attribute)
        if not isinstance(command, Command):
            raise TypeError(f"{reference} is a {type(command).__name__}, not a cli.Command")
        found.append(command)
    return found


def build_parser(*, width: int | None = None) -> argparse.ArgumentParser:
    """The whole command tree. ``width`` fixes the help's line width (default: the terminal's),
    so the generated reference does not depend on who generated it."""
    formatter = functools.partial(argparse.HelpFormatter, width=width)
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="AgentDeck: a harness for AI agents you have to operate.",
        formatter_class=formatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {core_version()}")
    _add_subcommands(parser, commands(), formatter)
    return parser


def _add_subcommands(
    parser: argparse.ArgumentParser,
    children: Sequence[Command],
    formatter: Callable[..., argparse.HelpFormatter],
) -> None:
    subparsers = parser.add_subparsers(
        title="commands", metavar="{" + ",".join(c.name for c in children) + "}"
    )
    for command in children:
        child = subparsers.add_parser(
            command.name,
            help=command.help,
            description=command.description or command.help,
            formatter_class=formatter,
        )
        command.configure(child)
        if command.subcommands:
            _add_subcommands(child, command.subcommands, formatter)
        child.set_defaults(_run=command.run, _parser=child)


def command_paths() -> Iterator[list[str]]:
    """Every command's argv path (``["runs", "signal"]``), depth first: one ``--help`` each."""

    def walk(prefix: list[str], children: Sequence[Command]) -> Iterator[list[str]]:
        for command in children:
            path = [*prefix, command.name]
            yield path
            yield from walk(path, command.subcommands)

    yield from walk([], commands())


# =========================================================================== the reference page

REFERENCE_WIDTH = 100
"""The line width of the ``--help`` texts the reference page shows."""
REFERENCE_BEGIN = "<!-- BEGIN generated by agentdeck.cli.update_reference: do not edit -->"
REFERENCE_END = "<!-- END generated -->"


def help_text(path: Sequence[str]) -> str:
    """What ``agentdeck <path> --help`` prints, at :data:`REFERENCE_WIDTH` columns."""
    parser = build_parser(width=REFERENCE_WIDTH)
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured), contextlib.suppress(SystemExit):
        parser.parse_args([*path, "--help"])
    return captured.getvalue()


def reference_markdown() -> str:
    """The command reference: every command's own ``--help``, in command-tree order."""
    sections = []
    for path in [[], *command_paths()]:
        title = " ".join([PROG, *path])
        sections.append(f"## `{title}`\n\n```text\n{help_text(path).rstrip()}\n```\n")
    return "\n".join(sections)


def update_reference(page: Path) -> bool:
    """Rewrite the generated part of ``page`` (between its markers); whether it changed.

    ``python -c "from pathlib import Path; from agentdeck.cli import update_reference;
    update_reference(Path('docs/cli.md'))"`` regenerates the repository's ``docs/cli.md``.
    """
    text = page.read_text(encoding="utf-8")
    head, begin, rest = text.partition(REFERENCE_BEGIN)
    _, end, tail = rest.partition(REFERENCE_END)
    if not begin or not end:
        raise ValueError(f"{page} has no {REFERENCE_BEGIN!r} ... {REFERENCE_END!r} block")
    updated = f"{head}{REFERENCE_BEGIN}\n\n{reference_markdown()}\n{REFERENCE_END}{tail}"
    if updated == text:
        return False
    page.write_text(updated, encoding="utf-8")
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``agentdeck`` with ``argv`` (default: the process's arguments); return the status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version, or a usage error argparse already printed
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 2)
    run: Callable[[argparse.Namespace], int] | None = getattr(args, "_run", None)
    if run is None:
        target: argparse.ArgumentParser = getattr(args, "_parser", parser)
        target.print_help(sys.stderr)
        return 2
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return run(args)
    except ConfigError as exc:
        print(f"{PROG}: configuration error: {exc}", file=sys.stderr)
        return 2
    except AgentDeckError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """A warning during a command, as one line on standard error (no source excerpt)."""
    print(f"\n{PROG}: warning: {message}", file=sys.stderr)


if __name__ == "__main__":
    # Run as ``python -m agentdeck.cli``: go through the importable module, so the commands it
    # loads find the same ``Command`` class (``python -m agentdeck`` is the usual spelling).
    from agentdeck.cli import main as _main

    raise SystemExit(_main())
