"""What a user expects of any command line: shell completion, ``-v``/``--log-level`` over one
``agentdeck.*`` logger tree, and a quiet exit when the reader of the output goes away."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from agentdeck.cli import COMMAND_MODULES, configure_logging, main
from agentdeck.cli.completion import completion_script

BASH_DRIVER = """
source "$1"
complete_words() {
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _agentdeck_complete
    echo "${COMPREPLY[*]}"
}
shift
complete_words "$@"
"""


def bash_completes(script: Path, *words: str) -> list[str]:
    """What bash offers for the last of ``words`` (the line typed so far)."""
    done = subprocess.run(
        ["bash", "-c", BASH_DRIVER, "driver", str(script), *words],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.split()


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("completion") / "agentdeck.bash"
    path.write_text(completion_script("bash"), encoding="utf-8")
    return path


def test_bash_completes_commands_subcommands_options_and_choices(bash_script: Path) -> None:
    assert bash_completes(bash_script, "agentdeck", "") == [
        "plugins",
        *(reference.name for reference in COMMAND_MODULES),
    ]
    assert bash_completes(bash_script, "agentdeck", "ru") == ["run", "runs"]
    assert bash_completes(bash_script, "agentdeck", "runs", "s") == ["show", "signal"]
    assert bash_completes(bash_script, "agentdeck", "-v", "runs", "list", "--cu") == ["--cursor"]
    assert bash_completes(bash_script, "agentdeck", "completion", "") == ["bash", "zsh", "fish"]
    assert "--log-level" in bash_completes(bash_script, "agentdeck", "--")


def test_zsh_and_fish_scripts_name_every_command() -> None:
    zsh, fish = completion_script("zsh"), completion_script("fish")
    assert zsh.startswith("#compdef agentdeck\n")
    assert "'agentdeck runs' 'list show tail answer signal retry fork prune'" in zsh
    assert "compdef _agentdeck_complete agentdeck" in zsh
    assert (
        "complete -c agentdeck -n '__fish_seen_subcommand_from runs; and not "
        "__fish_seen_subcommand_from list show tail answer signal retry fork prune' -a prune"
    ) in fish
    assert (
        "complete -c agentdeck -n '__fish_seen_subcommand_from runs; and "
        "__fish_seen_subcommand_from list' -l limit"
    ) in fish


def test_completion_command_prints_the_script(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "bash"]) == 0
    assert "complete -o default -F _agentdeck_complete agentdeck" in capsys.readouterr().out
    assert main(["completion", "tcsh"]) == 2
    assert "invalid choice: 'tcsh'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("verbose", "level", "expected"),
    [
        (0, None, logging.WARNING),
        (1, None, logging.INFO),
        (2, None, logging.DEBUG),
        (5, None, logging.DEBUG),
        (2, "error", logging.ERROR),
    ],
)
def test_verbosity_sets_the_agentdeck_tree(verbose: int, level: str | None, expected: int) -> None:
    root = logging.getLogger("agentdeck")
    before = (root.level, list(root.handlers))
    try:
        assert configure_logging(verbose, level) == expected
        assert root.level == expected
        assert logging.getLogger("agentdeck.stores.redis").getEffectiveLevel() == expected
        configure_logging(verbose, level)  # again: still one handler of ours
        assert sum(getattr(h, "_agentdeck_cli", False) for h in root.handlers) == 1
    finally:
        for handler in root.handlers[:]:
            if handler not in before[1]:
                root.removeHandler(handler)
        root.setLevel(before[0])


def run_command(*arguments: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentdeck", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_every_first_party_logger_is_under_agentdeck() -> None:
    """``grep getLogger``: each logger of the core and the plugins names the one tree."""
    root = Path(__file__).resolve().parents[2]
    offenders = []
    for source in [*root.glob("agentdeck_core/src/**/*.py"), *root.glob("plugins/*/src/**/*.py")]:
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
            if "getLogger(" in line and 'getLogger("agentdeck' not in line:
                offenders.append(f"{source.relative_to(root)}:{number}: {line.strip()}")
    assert offenders == []


def test_a_closed_pipe_ends_the_command_quietly() -> None:
    """``agentdeck completion bash | true``: the reader is gone before the command writes; no
    BrokenPipeError traceback, no "Exception ignored" at exit."""
    done = subprocess.run(
        f"{sys.executable} -m agentdeck completion bash | true",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stderr == ""
