"""``agentdeck completion SHELL``: a completion script for bash, zsh or fish.

The script is generated from the command tree itself (every command, subcommand, option and
fixed choice argparse knows), and is static: completing a word runs no Python, so pressing Tab
costs nothing however many plugins are installed. Re-run the command after an upgrade that adds
commands.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from agentdeck.cli import PROG, Command

__all__ = ["COMPLETION", "SHELLS", "completion_script", "tree_of"]

SHELLS = ("bash", "zsh", "fish")
"""The shells :func:`completion_script` writes for."""


@dataclass(frozen=True)
class Node:
    """One command of the tree as completion sees it."""

    path: tuple[str, ...]
    """The words naming it after ``agentdeck`` (``()`` for ``agentdeck`` itself)."""
    help: str
    children: tuple[tuple[str, str], ...]
    """Subcommand names with their help, and the fixed choices of positional arguments."""
    options: tuple[str, ...]


def tree_of(parser: argparse.ArgumentParser) -> list[Node]:
    """Every command under ``parser`` (itself first), depth first."""

    def walk(path: tuple[str, ...], node: argparse.ArgumentParser, text: str) -> Iterator[Node]:
        children: list[tuple[str, str]] = []
        below: list[tuple[str, argparse.ArgumentParser, str]] = []
        options: list[str] = []
        for action in node._actions:
            if isinstance(action, argparse._SubParsersAction):
                helps = {a.dest: a.help or "" for a in action._choices_actions}
                for name, child in action.choices.items():
                    children.append((name, helps.get(name, "")))
                    below.append((name, child, helps.get(name, "")))
            elif action.option_strings:
                if action.help is not argparse.SUPPRESS:
                    options.extend(action.option_strings)
            elif action.choices is not None:
                children.extend((str(choice), "") for choice in action.choices)
        yield Node(path, text, tuple(children), tuple(options))
        for name, child, child_help in below:
            yield from walk((*path, name), child, child_help)

    return list(walk((), parser, parser.description or ""))


def completion_script(shell: str, parser: argparse.ArgumentParser | None = None) -> str:
    """The completion script for ``shell`` (one of :data:`SHELLS`)."""
    if parser is None:
        from agentdeck.cli import build_parser

        parser = build_parser()
    nodes = tree_of(parser)
    writers = {"bash": _bash, "zsh": _zsh, "fish": _fish}
    return writers[shell](nodes)


def _key(path: tuple[str, ...]) -> str:
    # Keys carry the program's name: neither bash nor zsh accepts an empty array subscript.
    return shlex.quote(" ".join((PROG, *path)))


def _words(node: Node) -> str:
    return shlex.quote(" ".join(name for name, _ in node.children))


def _options(node: Node) -> str:
    return shlex.quote(" ".join(node.options))


def _bash(nodes: list[Node]) -> str:
    commands = "\n".join(f"    [{_key(n.path)}]={_words(n)}" for n in nodes)
    options = "\n".join(f"    [{_key(n.path)}]={_options(n)}" for n in nodes)
    return f"""# bash completion for {PROG}: source <({PROG} completion bash)
declare -gA _agentdeck_words=(
{commands}
)
declare -gA _agentdeck_options=(
{options}
)
_agentdeck_complete() {{
    local current="${{COMP_WORDS[COMP_CWORD]}}" command="{PROG}" word i
    for ((i = 1; i < COMP_CWORD; i++)); do
        word="${{COMP_WORDS[i]}}"
        [[ "$word" == -* ]] && continue
        if [[ " ${{_agentdeck_words[$command]}} " == *" $word "* \\
              && -n "${{_agentdeck_words[$command $word]+set}}" ]]; then
            command="$command $word"
        fi
    done
    if [[ "$current" == -* ]]; then
        COMPREPLY=($(compgen -W "${{_agentdeck_options[$command]}}" -- "$current"))
    else
        COMPREPLY=($(compgen -W "${{_agentdeck_words[$command]}}" -- "$current"))
    fi
}}
complete -o default -F _agentdeck_complete {PROG}
"""


def _zsh(nodes: list[Node]) -> str:
    commands = "\n".join(f"    {_key(n.path)} {_words(n)}" for n in nodes)
    options = "\n".join(f"    {_key(n.path)} {_options(n)}" for n in nodes)
    return f"""#compdef {PROG}
# zsh completion for {PROG}: source <({PROG} completion zsh), or save it as _{PROG} on $fpath
typeset -gA _agentdeck_words _agentdeck_options
_agentdeck_words=(
{commands}
)
_agentdeck_options=(
{options}
)
_agentdeck_complete() {{
    local command="{PROG}" word i
    for ((i = 2; i < CURRENT; i++)); do
        word="${{words[i]}}"
        [[ "$word" == -* ]] && continue
        if [[ " ${{_agentdeck_words[$command]}} " == *" $word "* \\
              && -n "${{_agentdeck_words[$command $word]+set}}" ]]; then
            command="$command $word"
        fi
    done
    if [[ "${{words[CURRENT]}}" == -* ]]; then
        compadd -- ${{=_agentdeck_options[$command]}}
    else
        compadd -- ${{=_agentdeck_words[$command]}}
        _files
    fi
}}
if (( $+functions[compdef] )); then
    compdef _agentdeck_complete {PROG}
fi
"""


def _fish(nodes: list[Node]) -> str:
    lines = [
        f"# fish completion for {PROG}: {PROG} completion fish | source",
        f"complete -c {PROG} -f",
    ]
    for node in nodes:
        # Inside this command: each of its words seen, and none of its own children yet.
        seen = [f"__fish_seen_subcommand_from {shlex.quote(word)}" for word in node.path]
        scope = "; and ".join(seen) if seen else "__fish_use_subcommand"
        children = " ".join(shlex.quote(name) for name, _ in node.children)
        fresh = "; and ".join([*seen, f"not __fish_seen_subcommand_from {children}"])
        for name, text in node.children:
            description = f" -d {shlex.quote(text)}" if text else ""
            lines.append(
                f"complete -c {PROG} -n {shlex.quote(fresh)} -a {shlex.quote(name)}{description}"
            )
        for option in node.options:
            flag = f"-l {option[2:]}" if option.startswith("--") else f"-s {option[1:]}"
            lines.append(f"complete -c {PROG} -n {shlex.quote(scope)} {flag}")
    return "\n".join(lines) + "\n"


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")


def _run(args: argparse.Namespace) -> int:
    sys.stdout.write(completion_script(args.shell))
    return 0


COMPLETION = Command(
    name="completion",
    help="print a shell completion script (bash, zsh or fish)",
    description=(
        "Print a completion script for SHELL on standard output. bash: add "
        "'source <(agentdeck completion bash)' to ~/.bashrc; zsh: "
        "'source <(agentdeck completion zsh)' in ~/.zshrc after compinit; fish: "
        "'agentdeck completion fish > ~/.config/fish/completions/agentdeck.fish'. The script "
        "is static (completing runs no Python): re-run it after installing new commands."
    ),
    configure=_configure,
    run=_run,
)
"""Referenced from :data:`agentdeck.cli.COMMAND_MODULES`."""
