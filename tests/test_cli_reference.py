"""``docs/cli.md`` shows exactly what every ``agentdeck`` command's ``--help`` prints."""

from __future__ import annotations

import shutil
from pathlib import Path

from agentdeck.cli import REFERENCE_BEGIN, REFERENCE_END, command_paths, update_reference

PAGE = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
REGENERATE = (
    'python -c "from pathlib import Path; from agentdeck.cli import update_reference; '
    "update_reference(Path('docs/cli.md'))\""
)


def test_the_committed_reference_is_what_the_commands_print(tmp_path: Path) -> None:
    copy = tmp_path / "cli.md"
    shutil.copy(PAGE, copy)

    changed = update_reference(copy)

    assert not changed, f"docs/cli.md is out of date with the commands; regenerate: {REGENERATE}"


def test_the_reference_has_a_section_for_every_command() -> None:
    text = PAGE.read_text(encoding="utf-8")
    generated = text.split(REFERENCE_BEGIN)[1].split(REFERENCE_END)[0]

    for path in [[], *command_paths()]:
        assert f"## `{' '.join(['agentdeck', *path])}`\n" in generated
        assert f"usage: {' '.join(['agentdeck', *path])} " in generated
