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
import atexit
import contextlib
import functools
import gc
import io
import json
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, NoReturn, TextIO

from agentdeck.errors import AgentDeckError, ConfigError

if TYPE_CHECKING:
    from pathlib import Path

    from agentdeck.plugins.host import BrokenPlugin, DisabledPlugin, PluginInfo

__all__ = [
    "BUILTIN_COMMANDS",
    "COMMAND_MODULES",
    "LOG_LEVELS",
    "Command",
    "CommandRef",
    "add_logging_options",
    "build_parser",
    "command_paths",
    "commands",
    "configure_logging",
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
    subcommands: tuple[Command | CommandRef, ...] = field(default=())
    """The nested commands, each defined here or referenced by a :class:`CommandRef` (imported
    only when a command line names it, as the top-level ones are)."""

    def loaded_subcommands(self) -> tuple[Command, ...]:
        """:attr:`subcommands` with every reference imported."""
        return tuple(_loaded(child) for child in self.subcommands)


# =========================================================================== agentdeck plugins


def _configure_plugins(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the listing as JSON (plugins, broken, disabled)",
    )


def _run_plugins(args: argparse.Namespace) -> int:
    from agentdeck.plugins.host import PluginHost, PluginWarning

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


# =========================================================================== logging

LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
"""What ``--log-level`` accepts (case-insensitive)."""


def add_logging_options(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """``-v/--verbose`` (repeatable) and ``--log-level LEVEL``, accepted before the command
    and after it (``suppress`` keeps a subcommand's copy from resetting what the top set)."""
    default: object = argparse.SUPPRESS if suppress else None
    group = parser.add_argument_group("logging")
    group.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=argparse.SUPPRESS if suppress else 0,
        help="log more to standard error: -v info, -vv debug (default: warnings only)",
    )
    group.add_argument(
        "--log-level",
        type=str.lower,
        choices=LOG_LEVELS,
        default=default,
        metavar="LEVEL",
        help="the level of the 'agentdeck' loggers: " + ", ".join(LOG_LEVELS) + " (wins over -v)",
    )


def configure_logging(verbose: int, level: str | None) -> int:
    """Send the ``agentdeck.*`` logger tree (the core's and every first-party plugin's
    loggers) to standard error at the chosen level; return that level.

    Only the ``agentdeck`` logger gets a handler, so libraries' own loggers stay quiet and a
    program embedding the core keeps its logging configuration untouched.
    """
    import logging

    if level is not None:
        chosen = getattr(logging, level.upper())
    else:
        chosen = (logging.WARNING, logging.INFO)[verbose] if verbose < 2 else logging.DEBUG
    logger = logging.getLogger("agentdeck")
    for handler in list(logger.handlers):
        if getattr(handler, "_agentdeck_cli", False):
            logger.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{PROG}: %(levelname)s %(name)s: %(message)s"))
    handler._agentdeck_cli = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(chosen)
    return int(chosen)


# =========================================================================== the command tree


@dataclass(frozen=True)
class CommandRef:
    """A top-level command named and described without importing the module defining it.

    ``agentdeck --help`` lists every command from these alone, and a command line builds the
    parser of the one command it names: the others' modules (and the deck, the runtime and
    the pydantic models they import) are never loaded, which is what keeps ``--help`` and the
    commands that only read a store quick.
    """

    name: str
    help: str
    target: str
    """``"module:attribute"`` of the :class:`Command`."""

    def load(self) -> Command:
        """Import the command; ``TypeError`` if the target is not a :class:`Command`, and
        ``ValueError`` if its name or help differ from this reference's (they must agree so
        that the short listing tells the truth)."""
        module_name, _, attribute = self.target.partition(":")
        command = getattr(import_module(module_name), attribute)
        if not isinstance(command, Command):
            raise TypeError(f"{self.target} is a {type(command).__name__}, not a cli.Command")
        if (command.name, command.help) != (self.name, self.help):
            raise ValueError(
                f"{self.target} is named {command.name!r} with help {command.help!r}; "
                f"its CommandRef says {self.name!r} / {self.help!r}"
            )
        return command


BUILTIN_COMMANDS: tuple[Command, ...] = (PLUGINS,)
"""Commands defined in this module."""

COMMAND_MODULES: tuple[CommandRef, ...] = (
    CommandRef(
        "build",
        "validate a project: names, references, context types and every compile",
        "agentdeck.cli.project:BUILD",
    ),
    CommandRef(
        "run",
        "run an agent or workflow of a project once and stream its events",
        "agentdeck.cli.project:RUN",
    ),
    CommandRef(
        "chat",
        "chat with an agent or workflow of a project on this terminal",
        "agentdeck.cli.project:CHAT",
    ),
    CommandRef(
        "serve",
        "serve a project over HTTP/SSE (needs the agentdeck-http plugin)",
        "agentdeck.cli.project:SERVE",
    ),
    CommandRef(
        "worker",
        "play the runs a project's clients queued (needs AGENTDECK_EXECUTION, e.g. Temporal)",
        "agentdeck.cli.worker:WORKER",
    ),
    CommandRef(
        "runs",
        "list, show, follow, answer, signal, retry, fork and prune runs in any configured store",
        "agentdeck.cli.runs.command:RUNS",
    ),
    CommandRef(
        "completion",
        "print a shell completion script (bash, zsh or fish)",
        "agentdeck.cli.completion:COMPLETION",
    ),
)
"""References to the :class:`Command` objects defined elsewhere in the core, imported only when
a command line names them (or when the whole tree is wanted, by :func:`commands`)."""


def commands() -> list[Command]:
    """Every top-level command, in the order ``--help`` lists them (imports them all)."""
    return [*BUILTIN_COMMANDS, *(reference.load() for reference in COMMAND_MODULES)]


def _loaded(command: Command | CommandRef) -> Command:
    return command.load() if isinstance(command, CommandRef) else command


def build_parser(
    *, width: int | None = None, argv: Sequence[str] | None = None
) -> argparse.ArgumentParser:
    """The command tree. ``width`` fixes the help's line width (default: the terminal's),
    so the generated reference does not depend on who generated it.

    With ``argv``, only the commands it names (``runs``, then ``list`` under it) are imported
    and configured; every other command is a placeholder carrying its name and help (enough
    for ``--help`` listings and for argparse's "invalid choice" message). Without ``argv`` the
    whole tree is built.
    """
    formatter = functools.partial(argparse.HelpFormatter, width=width)
    parser = _Parser(
        prog=PROG,
        description="AgentDeck: a harness for AI agents you have to operate.",
        formatter_class=formatter,
    )
    parser.add_argument(
        "--version", action=_VersionAction, nargs=0, help="show the version and exit"
    )
    add_logging_options(parser)
    children: list[Command | CommandRef] = [*BUILTIN_COMMANDS, *COMMAND_MODULES]
    _add_subcommands(parser, children, formatter, None if argv is None else list(argv))
    return parser


def _named_command(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    """The first argument that is neither an option nor an option's value -- the command a
    command line names (``agentdeck --log-level debug runs list`` names ``runs``) -- and the
    arguments after it, where its own subcommand is named."""
    skip = False
    for index, argument in enumerate(argv):
        if skip:
            skip = False
        elif argument == "--":
            return None, []
        elif argument in _VALUED_OPTIONS:
            skip = True
        elif not argument.startswith("-"):
            return argument, list(argv[index + 1 :])
    return None, []


_VALUED_OPTIONS = frozenset({"--log-level"})
"""The options every command accepts that are followed by a value (argparse also accepts
``--log-level=debug``). A command with subcommands takes no other options of its own."""


_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<given>[^']*)' \(choose from (?P<choices>.*)\)")


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose "invalid choice" message (an unknown command or subcommand, a
    value outside a fixed set) ends with the closest choices: ``did you mean 'list'?``.

    Subparsers are built with the parser's own class, so every level of the tree has it.
    """

    def error(self, message: str) -> NoReturn:
        found = _INVALID_CHOICE.search(message)
        if found is not None:
            from agentdeck.errors import did_you_mean

            choices = re.findall(r"'([^']*)'", found.group("choices"))
            message += did_you_mean(found.group("given"), choices)
        super().error(message)


class _VersionAction(argparse.Action):
    """``--version``: the version is read from the metadata only when asked for (reading it
    imports ``importlib.metadata`` and scans the installed distributions, which ``--help`` and
    every other command need not pay for)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(f"{PROG} {_core_version()}")
        parser.exit()


def _core_version() -> str:
    """agentdeck-core's version from its metadata (no plugin machinery imported for it)."""
    from importlib import metadata

    try:
        return metadata.version("agentdeck-core")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
        return "unknown"


def _add_subcommands(
    parser: argparse.ArgumentParser,
    children: Sequence[Command | CommandRef],
    formatter: Callable[..., argparse.HelpFormatter],
    argv: list[str] | None,
) -> None:
    """Add ``children`` under ``parser``; with ``argv`` (what follows the parent on the command
    line), only the child it names is imported, the others are listed by name and help."""
    wanted, rest = (None, []) if argv is None else _named_command(argv)
    subparsers = parser.add_subparsers(
        title="commands", metavar="{" + ",".join(c.name for c in children) + "}"
    )
    for entry in children:
        if argv is not None and entry.name != wanted:  # not named on this command line
            subparsers.add_parser(entry.name, help=entry.help)
            continue
        command = _loaded(entry)
        child = subparsers.add_parser(
            command.name,
            help=command.help,
            description=command.description or command.help,
            formatter_class=formatter,
        )
        command.configure(child)
        add_logging_options(child, suppress=True)
        if command.subcommands:
            _add_subcommands(child, command.subcommands, formatter, None if argv is None else rest)
        child.set_defaults(_run=command.run, _parser=child)


def command_paths() -> Iterator[list[str]]:
    """Every command's argv path (``["runs", "signal"]``), depth first: one ``--help`` each."""

    def walk(prefix: list[str], children: Sequence[Command]) -> Iterator[list[str]]:
        for command in children:
            path = [*prefix, command.name]
            yield path
            yield from walk(path, command.loaded_subcommands())

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
    """Run ``agentdeck`` with ``argv`` (default: the process's arguments); return the status.

    The process then exits without the interpreter's last garbage collections over what is still
    alive (see `_exit_without_collecting_the_living`).
    """
    _exit_without_collecting_the_living()
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv=arguments)
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exit_:  # --help, --version, or a usage error argparse already printed
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 2)
    run: Callable[[argparse.Namespace], int] | None = getattr(args, "_run", None)
    if run is None:
        target: argparse.ArgumentParser = getattr(args, "_parser", parser)
        target.print_help(sys.stderr)
        return 2
    configure_logging(getattr(args, "verbose", 0), getattr(args, "log_level", None))
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            status = run(args)
            sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
            return status
    except BrokenPipeError:
        return _closed_pipe()
    except ConfigError as exc:
        print(f"{PROG}: configuration error: {exc}", file=sys.stderr)
        return 2
    except AgentDeckError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1


@functools.cache
def _exit_without_collecting_the_living() -> None:
    """Have the process's exit skip the interpreter's last garbage collections over what is
    still alive (registered once, on the first :func:`main`).

    Once the modules are cleared, those collections free, one object at a time, every class,
    function and schema the command loaded: about a sixth of what ``runs list`` takes on a store
    of 10,000 runs, for memory the operating system takes back at once anyway. So at exit the
    garbage is collected once, its finalizers running as at any exit, and everything still alive
    is then frozen out of later collections (``gc.freeze``): it gets no finalizer, which Python
    does not promise objects alive at exit (see ``object.__del__``). Exit handlers run last
    registered first, so those a command's plugins and stores register run before this one.
    """
    atexit.register(_freeze_the_living)


def _freeze_the_living() -> None:
    gc.collect()
    gc.freeze()


def _closed_pipe() -> int:
    """The reader of standard output went away (``agentdeck runs list --json | head``): stop
    quietly, as ``cat`` does, with the status a shell gives a process killed by SIGPIPE.

    Standard output is pointed at ``/dev/null`` so the interpreter's final flush of what is
    still buffered does not raise a second ``BrokenPipeError`` at exit.
    """
    import os

    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return 141


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
